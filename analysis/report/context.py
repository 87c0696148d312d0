"""The records a report is made of: its options, what a section reads, what a section returns.

Kept apart from :mod:`tracktale.analysis.report.build` (which runs the sections) so that the
page's renderer (:mod:`tracktale.analysis.report.render`) reads them without importing the
builder that imports it; ``build`` re-exports them, where the sections import them from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from tracktale.analysis.data.exclusions import ExclusionRules
from tracktale.analysis.report.options import ParadigmOptions, default_options
from tracktale.analysis.report.style import SavedFigure
from tracktale.analysis.report.tables import SavedTable
from tracktale.analysis.stats.glm import Recency, TaskCoding
from tracktale.analysis.stats.primary import RecencyInterval

if TYPE_CHECKING:
    import pandas as pd

    from tracktale.analysis.report.outputs import Outputs

M = TypeVar("M", bound=ParadigmOptions)

Engine = Literal["auto", "statsmodels", "lme4", "none"]
"""The mixed-model engine (``--engine``)."""
Inference = Literal["auto", "glmer", "glm-2way", "glm"]
"""What the human analysis leads with (``--inference``)."""
GlmerTest = Literal["t-bw", "z"]
"""glmer's p-values (``--glmer-test``)."""
FigureTemplate = Literal["standard", "all"]
"""The template Figures 5 and 7 are computed on (``--figure-templates``)."""
ValueColumn = Literal["correct", "correct_calibrated"]
"""The model correctness column (``--calibrated``)."""
AccuracyInterval = Literal["two-way", "bootstrap", "wilson"]
"""Intervals of human accuracy (``--accuracy-interval``)."""
ComplexityStatistic = Literal["logit-hc3-t", "logit-two-way", "score"]
"""The complexity permutation test's statistic (``--complexity-statistic``)."""
InteractionTest = Literal["glm-2way", "lead"]
"""The interaction's primary test (``--interaction-test``)."""


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
        complexity_statistic: The complexity test: ``logit-hc3-t`` (the items'
            empirical-logit slope over its two-way SE with an HC3 items' part, t(items - 2);
            the default since issue 29's third pass), ``logit-two-way`` (that slope with an
            HC2 items' part, its permutation distribution; the second pass's default) or
            ``score`` (the score, permuted; the default before)
            (:mod:`tracktale.analysis.stats.logit_permutation`).
        interaction_test: The task x complexity interaction's primary test: ``glm-2way``
            (the two-way GLM's term, t with the SE floor; benchmarked, whatever leads) or
            ``lead`` (the leading model's term: glmer's where R has lme4).
        recency_sesoi: The smallest recency effect of interest (percentage points per focus
            position): the bounds of recency's equivalence test and Bayesian estimate.
        recency_interval: The SE recency's equivalence test rests on: ``larger`` (the default
            since issue 29's third pass: the larger of the item-permutation SE and the two-way
            GLM's, t with the permutation's df), ``permutation`` (the items' dispersion of the
            recency contrast within complexity levels alone) or ``two-way`` (the floored
            two-way GLM's SE, t(items - 1): too small at large item variation).
        bayes: Also fit the recency model with brms (:mod:`~tracktale.analysis.stats.bayes`).
        value: The model correctness column (``correct`` or ``correct_calibrated``).
        models: Report only these model ids (``None``: all).
        templates: Report models only on these templates (``None``: all).
        figure_template: The template Figures 5 and 7 (and the base-vs-instruct table) are
            computed on: ``standard`` (the paper's 550 trials per task) or ``all`` (pooled).
        include_preview: Analyse the researcher's preview sessions too (left out by default).
        paradigms: Paradigm -> its own report options (the model its plug-in declares,
            :mod:`tracktale.analysis.report.options`); a paradigm not given has its defaults.
    """

    rules: ExclusionRules = field(default_factory=ExclusionRules)
    engine: Engine = "auto"
    slopes: bool = False
    random: str = "maximal"
    recency: Recency = "focus"
    task_coding: TaskCoding = "sum"
    inference: Inference = "auto"
    accuracy_interval: AccuracyInterval = "two-way"
    glmer_test: GlmerTest = "t-bw"
    two_way_floor: bool = True
    permutations: int = 9999
    complexity_statistic: ComplexityStatistic = "logit-hc3-t"
    interaction_test: InteractionTest = "glm-2way"
    recency_sesoi: float = 3.0
    recency_interval: RecencyInterval = "larger"
    bayes: bool = False
    value: ValueColumn = "correct"
    models: tuple[str, ...] | None = None
    templates: tuple[str, ...] | None = None
    figure_template: FigureTemplate = "standard"
    include_preview: bool = False
    paradigms: Mapping[str, ParadigmOptions] = field(default_factory=dict)

    def of(self, paradigm: str, model: type[M]) -> M:
        """``paradigm``'s own report options, as its options ``model`` (its defaults if not given).

        Raises:
            TypeError: If the options given for ``paradigm`` are not a ``model``.
        """
        chosen = self.paradigms.get(paradigm) or default_options(paradigm) or model()
        if not isinstance(chosen, model):
            raise TypeError(
                f"the report options of paradigm {paradigm!r} are a {type(chosen).__name__}, "
                f"not a {model.__name__}"
            )
        return chosen


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
