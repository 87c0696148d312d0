"""``tracktale analysis report``: every figure and table, and one self-contained HTML page.

The report is made of *sections* from a small registry keyed by paradigm. A section is a
function ``section(context) -> SectionResult | list[SectionResult] | None`` that reads the tidy
data of its paradigm from the :class:`ReportContext`, writes figures and tables into the
context's folders and returns them with an HTML fragment (or several sections, one per stimulus
set); ``None`` means it has nothing to show for this data. A paradigm's
sections run in order and may pass results on through ``context.shared``. A new paradigm plugs
in by adding one entry to :data:`SECTIONS` (or calling :func:`register_section`), without
editing anything else here.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import html
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tracktale
from tracktale.analysis.exclusions import ExclusionRules, apply_exclusions
from tracktale.analysis.style import SavedFigure
from tracktale.analysis.tables import SavedTable, format_cell
from tracktale.atomic import atomic_write_text
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

SECTIONS: dict[str, list[str]] = {
    "narrative": [
        "tracktale.analysis.narrative:human_section",
        "tracktale.analysis.narrative:model_section",
        "tracktale.analysis.side_by_side:side_by_side_section",
        "tracktale.analysis.narrative:manipulation_section",
        "tracktale.analysis.scorecard:scorecard_section",
    ],
    "boxes": ["tracktale.analysis.report:boxes_section"],
    "arithmetic": ["tracktale.analysis.report:arithmetic_section"],
}
"""Paradigm -> its report sections (``module:function``), imported when a report needs them."""

SectionFunction = Callable[["ReportContext"], "SectionResult | list[SectionResult] | None"]


def register_section(paradigm: str, target: str | SectionFunction) -> None:
    """Add a section (a ``module:function`` path or the function itself) to a paradigm."""
    SECTIONS.setdefault(paradigm, []).append(target)  # type: ignore[arg-type]


@dataclass(frozen=True)
class ReportOptions:
    """How the analyses are run.

    Attributes:
        rules: Exclusion rules for human data.
        engine: Mixed-model engine (``auto``, ``statsmodels``, ``lme4``) or ``none`` to skip.
        slopes: By-participant random complexity slopes in the mixed model.
        recency: The recency covariate of the second GLM.
        task_coding: ``sum`` or ``treatment`` coding of probing method.
        inference: The method the human section leads with: ``auto`` (glmer where R has
            lme4, else the two-way clustered GLM), ``glmer``, ``glm-2way`` or ``glm`` (the
            paper's participant-clustered GLM).
        arithmetic_interval: Intervals of the arithmetic rates: ``wilson`` or the paper's
            percentile ``bootstrap`` over items (which collapses at 0/n and n/n).
        accuracy_interval: Intervals of human accuracy in tables and Figure 3: ``bootstrap``
            (BCa over participants) or ``wilson`` over the pooled trials (too narrow: a
            participant's trials are not independent).
        glmer_test: glmer's p-values: ``t-bw`` (t with between-within df) or ``z`` (lme4's).
        two_way_floor: Test two-way GLM terms with the larger of the two-way and the
            participant-clustered SE (``False``: the two-way SE alone).
        permutations: Relabellings of the item-permutation tests, the report's complexity
            and recency tests (:mod:`tracktale.analysis.permutation`); 0 leaves them out.
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
    """

    rules: ExclusionRules = field(default_factory=ExclusionRules)
    engine: str = "auto"
    slopes: bool = False
    recency: str = "focus"
    task_coding: str = "sum"
    inference: str = "auto"
    arithmetic_interval: str = "wilson"
    accuracy_interval: str = "bootstrap"
    glmer_test: str = "t-bw"
    two_way_floor: bool = True
    permutations: int = 9999
    value: str = "correct"
    models: tuple[str, ...] | None = None
    templates: tuple[str, ...] | None = None
    figure_template: str = "standard"
    arithmetic_reference: str = "paper"
    arithmetic_first_answer: str = "span"
    boxes_functor: str = "strict"
    boxes_unparsed: str = "per-state"


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
    """

    title: str
    html: str = ""
    figures: list[SavedFigure] = field(default_factory=list)
    tables: list[SavedTable] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


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


def _resolve(target: str | SectionFunction) -> SectionFunction:
    if callable(target):
        return target
    return pkgutil.resolve_name(target)


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
    for paradigm in [p for p in SECTIONS if p in present] + [
        p for p in present if p not in SECTIONS
    ]:
        if paradigm not in SECTIONS:
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
        for target in SECTIONS[paradigm]:
            section = _resolve(target)(context)
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
        human: Anything :func:`~tracktale.analysis.data.load_human_trials` accepts.
        models: Anything :func:`~tracktale.analysis.data.load_model_results` accepts.
        options: Analysis options.

    Returns:
        Where the page, figures and tables went.
    """
    from tracktale.analysis.data import (
        build_trial_table,
        describe_left_aside,
        item_table,
        load_human_trials,
        load_model_results,
        load_stimulus_sets,
    )

    options = options or ReportOptions()
    out = Path(out)
    stimuli = list(stimuli)
    sets = load_stimulus_sets(stimuli)
    if not sets:
        raise TracktaleError("no stimulus sets given (--stimuli)")
    human_data = load_human_trials(human) if human is not None else None
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

    from tracktale.analysis.data import select

    if not options.models and not options.templates:
        return trials
    is_model = trials["agent_kind"] == "model"
    if not is_model.any():
        raise TracktaleError("--model and --template select model results, but none were given")
    chosen = select(trials[is_model], agent=options.models, template=options.templates)
    return pd.concat([trials[~is_model], chosen], ignore_index=True)


def section_from_files(title: str, paths: Iterable[Path]) -> SectionResult:
    """A section from files a paradigm's own code wrote: figures grouped by stem, tables read.

    For analyses that write files rather than return :class:`SavedFigure`/:class:`SavedTable`
    objects: ``.png``/``.pdf``/``.svg`` files of one stem make a figure, ``.csv`` files (with
    their ``.tex`` twin, if any) make a table.
    """
    import pandas as pd

    by_stem: dict[tuple[Path, str], dict[str, Path]] = {}
    for path in map(Path, paths):
        by_stem.setdefault((path.parent, path.stem), {})[path.suffix.lstrip(".")] = path
    section = SectionResult(title=title)
    for (_, stem), files in sorted(by_stem.items()):
        if "png" in files:
            figure_files: dict[str, Path] = {
                k: files[k] for k in ("png", "pdf", "svg") if k in files
            }
            section.figures.append(SavedFigure(name=stem, title=stem, paths=figure_files))
        elif "csv" in files:
            table_files: dict[str, Path] = {k: files[k] for k in ("csv", "tex") if k in files}
            try:
                table = pd.read_csv(files["csv"])
            except pd.errors.EmptyDataError:  # a table without columns: nothing to show
                continue
            section.tables.append(SavedTable(stem, stem, table, table_files))
    return section


def boxes_section(context: ReportContext) -> list[SectionResult] | None:
    """The boxes paradigm's tables and figures (``tracktale.analysis.boxes``) as a section."""
    from tracktale.analysis.boxes import boxes_section as write_boxes
    from tracktale.stimuli.boxes.scoring import ScoringRules

    options = context.options
    rules = ScoringRules(functor=options.boxes_functor, unparsed=options.boxes_unparsed)
    human = context.human
    if human is not None and "response" not in human.columns:
        human = None  # an export without responses: models only
    if human is not None and not human.empty and options.rules is not None:
        # The session rules only: the accuracy rule is the narrative paper's (Step-EM by
        # chance is 2^-12, so a 50% floor would measure difficulty, not attention).
        session_rules = dataclasses.replace(options.rules, min_accuracy=0.0)
        kept = apply_exclusions(human, context.participants, session_rules, ("explicit",))
        human = kept.trials
    return _files_section(context, write_boxes, "boxes", rules=rules, human=human)


def arithmetic_section(context: ReportContext) -> list[SectionResult] | None:
    """The arithmetic paradigm's tables and figures (``tracktale.analysis.arithmetic``)."""
    from tracktale.analysis.arithmetic import ArithmeticOptions
    from tracktale.analysis.arithmetic import arithmetic_section as write_arithmetic

    chosen = ArithmeticOptions(
        reference=context.options.arithmetic_reference,
        first_answer=context.options.arithmetic_first_answer,
        interval=context.options.arithmetic_interval,
    )
    parts = _files_section(context, write_arithmetic, "arithmetic", options=chosen) or []
    human = context.human
    if human is not None and not human.empty:
        from tracktale.analysis.arithmetic.human import people_sections

        if context.options.rules is not None:
            # The session rules only, as for boxes: a 50% accuracy floor would measure the
            # difficulty of 15-step procedures, not attention.
            rules = dataclasses.replace(context.options.rules, min_accuracy=0.0)
            human = apply_exclusions(human, context.participants, rules, ("explicit",)).trials
        parts += people_sections(context, chosen, human)
    return parts or None


def _files_section(
    context: ReportContext,
    writer: Callable[..., list[Path]],
    folder_name: str,
    **options: Any,
) -> list[SectionResult] | None:
    """Run a paradigm's file-writing analysis on each of its sets and show what it wrote.

    Each set writes into its own folder, ``<out>/<paradigm>/<set name>/``, so sets whose
    analyses write files of the same names (the model and the compressed boxes sets both have a
    Table 1) do not replace each other's.
    """
    if context.results is None:
        return None
    parts = []
    for stimulus_set in context.stimulus_sets:
        name = context.set_names.get(stimulus_set.sha256) or stimulus_set.sha256[:12]
        folder = context.tables_dir.parent / folder_name / name
        paths = writer(context.results, stimulus_set, folder, **options)
        if paths:
            parts.append(section_from_files(f"{context.paradigm}: models ({name})", paths))
    return parts or None


_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0}
th,td{border-bottom:1px solid #ddd;padding:.2em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}
figure{margin:1em 0}figure img{max-width:100%}figcaption{font-size:.85em;color:#555}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.8em}
.files{font-size:.8em;color:#555}
.warning{background:#fff4e5;border-left:4px solid #e69f00;padding:.4em .8em;margin:.8em 0}
"""


def html_table(table: pd.DataFrame, max_rows: int = 60) -> str:
    """A DataFrame as an escaped HTML table (long tables are cut, the CSV has all rows)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = []
    for row in table.head(max_rows).itertuples(index=False):
        cells = "".join(f"<td>{html.escape(format_cell(v))}</td>" for v in row)
        body.append(f"<tr>{cells}</tr>")
    more = (
        f"<p class='files'>{len(table) - max_rows} more rows in the CSV file.</p>"
        if len(table) > max_rows
        else ""
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"


def _figure_html(figure: SavedFigure, root: Path) -> str:
    data = base64.b64encode(figure.paths["png"].read_bytes()).decode("ascii")
    links = " ".join(
        f"<a href='{html.escape(str(p.relative_to(root)))}'>{fmt.upper()}</a>"
        for fmt, p in figure.paths.items()
    )
    return (
        f"<figure><img alt='{html.escape(figure.title)}' src='data:image/png;base64,{data}'>"
        f"<figcaption>{html.escape(figure.title)} <span class='files'>({links})</span>"
        "</figcaption></figure>"
    )


def _table_html(table: SavedTable, root: Path) -> str:
    links = " ".join(
        f"<a href='{html.escape(str(p.relative_to(root)))}'>{fmt.upper()}</a>"
        for fmt, p in table.paths.items()
    )
    return (
        f"<h3>{html.escape(table.title)}</h3>{html_table(table.table)}<p class='files'>{links}</p>"
    )


def render_html(sections: list[SectionResult], sources: list[str], options: ReportOptions) -> str:
    """The whole page: one file, figures embedded as PNG data."""
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>tracktale analysis report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>tracktale analysis report</h1>",
        f"<p class='files'>tracktale {html.escape(tracktale.__version__)}, "
        f"{datetime.date.today().isoformat()}</p><ul>",
        *(f"<li>{html.escape(source)}</li>" for source in sources),
        "</ul>",
        f"<p class='files'>Options: {html.escape(_describe_options(options))}</p>",
    ]
    for section in sections:
        root = _root_of(section)
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        if section.warnings:
            items = "".join(f"<li>{html.escape(w)}</li>" for w in section.warnings)
            parts.append(f"<div class='warning'><strong>Warnings</strong><ul>{items}</ul></div>")
        parts.append(section.html)
        parts += [_figure_html(f, root) for f in section.figures]
        parts += [_table_html(t, root) for t in section.tables]
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _root_of(section: SectionResult) -> Path:
    paths = [p for f in section.figures for p in f.paths.values()]
    paths += [p for t in section.tables for p in t.paths.values()]
    return paths[0].parent.parent if paths else Path(".")


def _describe_options(options: ReportOptions) -> str:
    return (
        f"mixed-model engine {options.engine}, random slopes {'on' if options.slopes else 'off'}, "
        f"recency covariate {options.recency}, task coding {options.task_coding}, "
        f"inference {options.inference}, glmer tests {options.glmer_test}, item "
        f"permutations {options.permutations:,}, two-way SEs "
        f"{'at least the participant-clustered' if options.two_way_floor else 'as estimated'}, "
        f"accuracy intervals {options.accuracy_interval}, "
        f"model correctness column {options.value}, Figures 5 and 7 on the "
        f"{options.figure_template} template{'s' if options.figure_template == 'all' else ''}, "
        f"arithmetic reference "
        f"{options.arithmetic_reference} (first answer: {options.arithmetic_first_answer}, "
        f"intervals {options.arithmetic_interval}), "
        f"boxes functor rule {options.boxes_functor}, unparsed answers {options.boxes_unparsed}"
    )
