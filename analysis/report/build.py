"""``tracktale analysis report``: every figure and table, and one self-contained HTML page.

The report is made of *sections* from a small registry keyed by paradigm. A section is a
function ``section(context) -> SectionResult | list[SectionResult] | None`` that reads the tidy
data of its paradigm from the :class:`ReportContext`, writes figures and tables into the
context's folders and returns them as objects (each table's data, each figure's files, fits)
with an HTML fragment (or several sections, one per stimulus set); ``None`` means it has
nothing to show for this data. The page is rendered from those objects
(:mod:`tracktale.analysis.report.render`), never from files read back. A paradigm's sections run in
order and may pass results on through ``context.shared``. Each paradigm's analysis package
(``tracktale.analysis.narrative``, ``.boxes``, ``.arithmetic``, mirroring ``tracktale.stimuli``)
declares its sections as ``SECTIONS``, and its plug-in (:class:`tracktale.plugin.ParadigmPlugin`)
names them; a new paradigm plugs in there (or with a call of :func:`register_section`), without
editing anything here.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.analysis.data.exclusions import ExclusionRules
from tracktale.analysis.report.render import render_html
from tracktale.analysis.report.style import SavedFigure
from tracktale.analysis.report.tables import SavedTable
from tracktale.atomic import atomic_write_text
from tracktale.errors import TracktaleError
from tracktale.registry import Registry
from tracktale.stimuli.registry import PLUGINS, paradigms_with

if TYPE_CHECKING:
    import pandas as pd

    from tracktale.analysis.report.outputs import Outputs

SectionFunction = Callable[["ReportContext"], "SectionResult | list[SectionResult] | None"]

Sections = Sequence[str | SectionFunction]
"""A paradigm's report sections: section functions, ``module:function`` paths, or
``module:NAME`` paths to a sequence of either."""

SECTIONS: Registry[Sections] = Registry("report sections")
"""Paradigm -> report sections registered here (:func:`register_section`), which take the place
of those its plug-in names.

Each paradigm's plug-in names its sections (:attr:`tracktale.plugin.ParadigmPlugin.report`):
every paradigm's analysis package (``tracktale.analysis.<paradigm>``, beside
``tracktale.stimuli.<paradigm>``) declares its own, in page order, as ``SECTIONS``, imported
when a report needs them."""


def sections_of(paradigm: str) -> Sections | None:
    """The report sections of ``paradigm`` (``None``: it has none)."""
    if paradigm in SECTIONS:
        return SECTIONS.get(paradigm)
    if paradigm in PLUGINS and PLUGINS.get(paradigm).has("report"):
        sections: Sections = PLUGINS.get(paradigm).load("report")
        return sections
    return None


def section_paradigms() -> tuple[str, ...]:
    """The paradigms that have report sections: the registered ones in order, then the others."""
    return tuple(dict.fromkeys([*paradigms_with("report"), *SECTIONS.names()]))


def register_section(paradigm: str, target: str | SectionFunction) -> None:
    """Add a section (a ``module:function`` path or the function itself) to a paradigm."""
    SECTIONS.add(paradigm, [*(sections_of(paradigm) or ()), target], lazy=False)


@dataclass(frozen=True)
class ReportOptions:
    """How the analyses are run.

    Attributes:
        rules: Exclusion rules for human data.
        engine: Mixed-model engine (``auto``, ``statsmodels``, ``lme4``) or ``none`` to skip.
        slopes: By-participant random complexity slopes in the mixed model (with
            ``random="intercepts"``).
        random: glmer's random effects: ``maximal`` (the design's maximal structure and the
            declared ladder), ``intercepts`` or an lme4 random part
            (:mod:`~tracktale.analysis.stats.random_structure`).
        recency: The recency covariate of the second GLM.
        task_coding: ``sum`` or ``treatment`` coding of probing method.
        inference: The method the human section leads with: ``auto`` (glmer where R has
            lme4, else the two-way clustered GLM), ``glmer``, ``glm-2way`` or ``glm`` (the
            paper's participant-clustered GLM).
        arithmetic_interval: Intervals of the arithmetic rates: ``wilson`` or the paper's
            percentile ``bootstrap`` over items (which collapses at 0/n and n/n).
        accuracy_interval: Intervals of human accuracy in tables and Figure 3: ``two-way``
            (over participants and items, two-way clustered; the default since issue 29),
            ``bootstrap`` (BCa over participants alone: it leaves out how items differ) or
            ``wilson`` over the pooled trials (too narrow: a participant's trials are not
            independent).
        glmer_test: glmer's p-values: ``t-bw`` (t with between-within df) or ``z`` (lme4's).
        two_way_floor: Test two-way GLM terms with the larger of the two-way and the
            participant-clustered SE (``False``: the two-way SE alone).
        permutations: Relabellings of the item-permutation tests, the report's complexity
            and recency tests (:mod:`tracktale.analysis.stats.permutation`); 0 leaves them out.
        complexity_statistic: The complexity permutation test's statistic: ``logit-two-way``
            (:mod:`tracktale.analysis.stats.logit_permutation`) or ``score`` (the default
            before issue 29's second pass).
        value: The model correctness column (``correct`` or ``correct_calibrated``).
        models: Report only these model ids (``None``: all).
        templates: Report models only on these templates (``None``: all).
        figure_template: The template Figures 5 and 7 (and the base-vs-instruct table) are
            computed on: ``standard`` (the paper's 550 trials per task) or ``all`` (pooled).
        arithmetic_reference: ``paper`` (the paper's executor) or ``ieee`` (ours) for the
            arithmetic tables.
        arithmetic_first_answer: ``span`` (the first extracted span) or ``numeric``.
        boxes_functor: ``strict`` (ours) or ``any`` (the authors' code).
        boxes_unparsed: ``per-state`` (ours) or ``whole-step`` (the authors' code).
        include_preview: Analyse the researcher's preview sessions too (left out by default).
    """

    rules: ExclusionRules = field(default_factory=ExclusionRules)
    engine: str = "auto"
    slopes: bool = False
    random: str = "maximal"
    recency: str = "focus"
    task_coding: str = "sum"
    inference: str = "auto"
    arithmetic_interval: str = "wilson"
    accuracy_interval: str = "two-way"
    glmer_test: str = "t-bw"
    two_way_floor: bool = True
    permutations: int = 9999
    complexity_statistic: str = "logit-two-way"
    value: str = "correct"
    models: tuple[str, ...] | None = None
    templates: tuple[str, ...] | None = None
    figure_template: str = "standard"
    arithmetic_reference: str = "paper"
    arithmetic_first_answer: str = "span"
    boxes_functor: str = "strict"
    boxes_unparsed: str = "per-state"
    include_preview: bool = False


@dataclass
class ReportContext:
    """What a section reads and where it writes.

    Attributes:
        paradigm: The paradigm being reported.
        human: Human rows of the tidy table for this paradigm (before exclusions), or ``None``.
        participants: The participants' session records, or ``None``.
        models: Model rows of the tidy table for this paradigm, or ``None``.
        options: The analysis options.
        figures_dir: Where figures go.
        tables_dir: Where tables go.
        stimulus_sets: The loaded stimulus sets of this paradigm.
        results: The model results as loaded (store columns), for sections that score them
            themselves; ``None`` without model results.
        shared: Results earlier sections pass on to later ones.
        set_names: The folder name of each stimulus set, by its sha256 (a set's own tables
            and figures go into a folder of that name).
    """

    paradigm: str
    human: pd.DataFrame | None
    participants: pd.DataFrame | None
    models: pd.DataFrame | None
    options: ReportOptions
    figures_dir: Path
    tables_dir: Path
    stimulus_sets: list[Any] = field(default_factory=list)
    results: pd.DataFrame | None = None
    shared: dict[str, Any] = field(default_factory=dict)
    set_names: dict[str, str] = field(default_factory=dict)


@dataclass
class SectionResult:
    """One section of the report.

    Attributes:
        title: The heading.
        html: An HTML fragment (model summaries, counts, notes), already escaped.
        figures: The figures written.
        tables: The tables written.
        warnings: What the user must know (failed or singular fits, approximations, empty
            results), one line each; the CLI prints them.
        fits: The fitted models, by name, for callers that print or reuse them.
    """

    title: str
    html: str = ""
    figures: list[SavedFigure] = field(default_factory=list)
    tables: list[SavedTable] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    fits: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_outputs(cls, title: str, outputs: Outputs) -> SectionResult:
        """A section showing the tables and figures an analysis wrote (:mod:`.outputs`)."""
        return cls(title=title, figures=list(outputs.figures), tables=list(outputs.tables))


@dataclass(frozen=True)
class Report:
    """What :func:`build_report` wrote."""

    html_path: Path
    sections: list[SectionResult]
    trial_table_path: Path
    left_aside: list[str] = field(default_factory=list)
    """One line per source whose rows of stimulus sets not given were left aside."""

    @property
    def warnings(self) -> list[str]:
        """Every section's warnings, in order."""
        return [warning for section in self.sections for warning in section.warnings]

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every section's tables by file stem (the first of a stem, as the page shows it)."""
        found: dict[str, pd.DataFrame] = {}
        for section in self.sections:
            for table in section.tables:
                found.setdefault(table.name, table.table)
        return found


def _resolve(target: str | SectionFunction) -> list[SectionFunction]:
    """The section functions a registry entry stands for (a declared sequence is expanded)."""
    found = pkgutil.resolve_name(target) if isinstance(target, str) else target
    if isinstance(found, list | tuple):
        return [function for entry in found for function in _resolve(entry)]
    return [found]


def _split(table: pd.DataFrame | None, paradigm: str, kind: str) -> pd.DataFrame | None:
    if table is None:
        return None
    rows = table[(table["paradigm"] == paradigm) & (table["agent_kind"] == kind)]
    return rows if not rows.empty else None


def run_sections(
    trials: pd.DataFrame,
    participants: pd.DataFrame | None,
    out: Path,
    options: ReportOptions,
    stimulus_sets: Iterable[Any] = (),
    results: pd.DataFrame | None = None,
    set_names: dict[str, str] | None = None,
) -> list[SectionResult]:
    """Run every registered section of every paradigm present in ``trials``."""
    stimulus_sets = list(stimulus_sets)
    set_names = set_names or name_sets([None] * len(stimulus_sets), stimulus_sets)
    sections: list[SectionResult] = []
    present = list(dict.fromkeys(trials["paradigm"].dropna()))
    known = section_paradigms()
    for paradigm in [p for p in known if p in present] + [p for p in present if p not in known]:
        declared = sections_of(paradigm)
        if declared is None:
            sections.append(
                SectionResult(paradigm, f"<p>No report sections are registered for {paradigm}.</p>")
            )
            continue
        context = ReportContext(
            paradigm=paradigm,
            human=_split(trials, paradigm, "human"),
            participants=participants,
            models=_split(trials, paradigm, "model"),
            options=options,
            figures_dir=out / "figures",
            tables_dir=out / "tables",
            stimulus_sets=[s for s in stimulus_sets if s.manifest.paradigm == paradigm],
            results=results,
            set_names=set_names,
        )
        for function in (f for target in declared for f in _resolve(target)):
            section = function(context)
            if isinstance(section, list):
                sections.extend(section)
            elif section is not None:
                sections.append(section)
    return sections


def build_report(
    *,
    stimuli: Iterable[Any],
    out: str | Path,
    human: Any = None,
    models: Any = None,
    options: ReportOptions | None = None,
) -> Report:
    """Load everything, run the sections and write the HTML page.

    Args:
        stimuli: Stimulus-set folders (or sets) the trials and results refer to.
        out: The output folder (created; files in it are replaced).
        human: Anything :func:`~tracktale.analysis.data.load.load_human_trials` accepts.
        models: Anything :func:`~tracktale.analysis.data.load.load_model_results` accepts.
        options: Analysis options.

    Returns:
        Where the page, figures and tables went.
    """
    from tracktale.analysis.data.load import load_human_trials, load_model_results
    from tracktale.analysis.data.tidy import (
        build_trial_table,
        describe_left_aside,
        item_table,
        load_stimulus_sets,
    )

    options = options or ReportOptions()
    out = Path(out)
    stimuli = list(stimuli)
    sets = load_stimulus_sets(stimuli)
    if not sets:
        raise TracktaleError("no stimulus sets given (--stimuli)")
    human_data = (
        load_human_trials(human, include_preview=options.include_preview)
        if human is not None
        else None
    )
    results = load_model_results(models) if models is not None else None
    joined = build_trial_table(item_table(sets), human_data, results)
    left_aside = describe_left_aside(joined.attrs.get("left_aside", {}))
    trials = restrict_models(joined, options)
    out.mkdir(parents=True, exist_ok=True)
    trial_table_path = out / "trial_table.csv"
    atomic_write_text(trial_table_path, trials.to_csv(index=False, lineterminator="\n"))
    participants = human_data.participants if human_data else None
    names = name_sets(stimuli, sets)
    sections = run_sections(trials, participants, out, options, sets, results, names)
    sources = [
        f"stimulus set {s.manifest.paradigm}/{s.manifest.protocol} {s.sha256[:12]} "
        f"(folder {names[s.sha256]})"
        for s in sets
    ]
    if human_data:
        sources.append(f"human data: {human_data.origin}")
    if models is not None:
        sources.append(f"model results: {models if isinstance(models, str | Path) else 'table'}")
    sources += left_aside
    html_path = out / "report.html"
    atomic_write_text(html_path, render_html(sections, sources, options))
    return Report(
        html_path=html_path,
        sections=sections,
        trial_table_path=trial_table_path,
        left_aside=left_aside,
    )


def name_sets(sources: Iterable[Any], sets: Iterable[Any]) -> dict[str, str]:
    """A folder name for each stimulus set, by sha256: its folder's name, else its protocol.

    Names are made file-name safe; a name two sets would share gets the set's sha256 prefix.
    """
    import re

    named = []
    for source, stimulus_set in zip(sources, sets, strict=True):
        if isinstance(source, str | Path):
            name = Path(source).resolve().name
        else:
            name = f"{stimulus_set.manifest.protocol}-{stimulus_set.sha256[:8]}"
        named.append((stimulus_set.sha256, re.sub(r"[^A-Za-z0-9._+-]+", "-", name) or "set"))
    counts: dict[str, int] = {}
    for _, name in named:
        counts[name] = counts.get(name, 0) + 1
    return {sha: name if counts[name] == 1 else f"{name}-{sha[:8]}" for sha, name in named}


def restrict_models(trials: pd.DataFrame, options: ReportOptions) -> pd.DataFrame:
    """Keep only the chosen models and templates among the model rows (human rows stay).

    Raises:
        TracktaleError: Naming an unknown model or template, or an empty selection.
    """
    import pandas as pd

    from tracktale.analysis.data.tidy import select

    if not options.models and not options.templates:
        return trials
    is_model = trials["agent_kind"] == "model"
    if not is_model.any():
        raise TracktaleError("--model and --template select model results, but none were given")
    chosen = select(trials[is_model], agent=options.models, template=options.templates)
    return pd.concat([trials[~is_model], chosen], ignore_index=True)


def per_set_sections(
    context: ReportContext,
    what: str,
    analyse: Callable[[Any, Path], Outputs],
) -> list[SectionResult]:
    """Run a paradigm's analysis on each of its sets; one section per set that wrote anything.

    Each set writes into its own folder, ``<out>/<paradigm>/<set name>/``, so sets whose
    analyses write files of the same names (the model and the compressed boxes sets both have a
    Table 1) do not replace each other's.

    Args:
        context: The report context.
        what: What the sections show (their titles are ``<paradigm>: <what> (<set name>)``).
        analyse: Writes one set's tables and figures into a folder and returns them.
    """
    parts = []
    for stimulus_set in context.stimulus_sets:
        name = context.set_names.get(stimulus_set.sha256) or stimulus_set.sha256[:12]
        folder = context.tables_dir.parent / context.paradigm / name
        outputs = analyse(stimulus_set, folder)
        if outputs.written:
            title = f"{context.paradigm}: {what} ({name})"
            parts.append(SectionResult.from_outputs(title, outputs))
    return parts
