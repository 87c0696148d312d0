"""``tracktale analysis``: the report, power by simulation, and simulated participants.

pandas, statsmodels and matplotlib are imported inside the commands, so ``tracktale --help``
stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import click

from tracktale.analysis.cli_options import EXISTING, paradigm_options, permutations_option
from tracktale.analysis.data.exclusions import ACCURACY_RULES, AccuracyRule
from tracktale.analysis.report.context import (
    AccuracyInterval,
    ComplexityStatistic,
    Engine,
    FigureTemplate,
    GlmerTest,
    Inference,
    InteractionTest,
)
from tracktale.analysis.stats.glm import RECENCY_COLUMNS, TASK_CODINGS, Recency, TaskCoding
from tracktale.analysis.stats.primary import RecencyInterval
from tracktale.errors import TracktaleError
from tracktale.experiment.export.summary import EXCLUSION_THRESHOLD
from tracktale.schema.records import SOURCES


@click.group()
def analysis() -> None:
    """Analyse human trials and model results: statistics, figures, reports, power."""


@analysis.command()
@click.option(
    "--stimuli",
    "stimuli_dirs",
    type=EXISTING,
    multiple=True,
    required=True,
    help="A stimulus set the data refer to (repeat for the human and the model set).",
)
@click.option(
    "--human", type=EXISTING, help="Human data: the study export folder or a trials file."
)
@click.option(
    "--models", type=EXISTING, help="Model results: a results store, .parquet or .csv file."
)
@click.option(
    "--out", type=click.Path(path_type=Path), required=True, help="Folder for the report."
)
@click.option(
    "--engine",
    type=click.Choice(get_args(Engine)),
    default="auto",
    show_default=True,
    help="Mixed-model engine (auto: lme4 when R has it, else statsmodels; none: skip).",
)
@click.option(
    "--slopes",
    is_flag=True,
    help="Random intercepts and a by-participant complexity slope (implies --random "
    "intercepts; the report's structure before issue 29).",
)
@click.option(
    "--random",
    "random_effects",
    default="maximal",
    show_default=True,
    help="glmer's random effects: maximal (from the design, simplified along the declared "
    "ladder when singular or not converged), intercepts (crossed random intercepts) or an "
    "lme4 random part such as '(1 + task_s | agent) + (1 | item_id)'.",
)
@click.option(
    "--recency",
    type=click.Choice(RECENCY_COLUMNS),
    default="focus",
    show_default=True,
    help="Recency covariate of the second GLM (focus: the paper's).",
)
@click.option(
    "--task-coding",
    type=click.Choice(TASK_CODINGS),
    default="sum",
    show_default=True,
    help="Coding of probing method in the GLMs: sum (explicit +0.5 / implicit -0.5, the "
    "coding that gives the paper's signs), sum-implicit (implicit +0.5) or treatment "
    "(explicit 0 / implicit 1).",
)
@click.option(
    "--figure-templates",
    "figure_template",
    type=click.Choice(get_args(FigureTemplate)),
    default="standard",
    show_default=True,
    help="Compute Figures 5 and 7 (and the base-vs-instruct table) on the standard template "
    "(the paper's 550 trials per task) or on all templates pooled.",
)
@click.option(
    "--inference",
    type=click.Choice(get_args(Inference)),
    default="auto",
    show_default=True,
    help="What the human analysis leads with (auto: glmer where R has lme4, else the GLM "
    "with SEs clustered by participant and item; glm: the paper's participant-clustered GLM, "
    "which is always shown too).",
)
@click.option(
    "--glmer-test",
    type=click.Choice(get_args(GlmerTest)),
    default="t-bw",
    show_default=True,
    help="glmer's p-values: t with between-within degrees of freedom (items minus item-level "
    "terms for complexity and recency), or lme4's normal reference.",
)
@permutations_option(
    9999,
    "Relabellings of the item-permutation tests, the report's complexity test (items' "
    "complexity permuted across items) and recency test (focus permuted within complexity "
    "levels); they hold their rate where the models' own p-values do not; 0 leaves them out. "
    "--recency-permutations is the same option.",
)
@click.option(
    "--recency-sesoi",
    type=click.FloatRange(min=0, min_open=True),
    default=3.0,
    show_default=True,
    help="Smallest recency effect of interest, percentage points per focus position: the "
    "bounds of recency's equivalence test (TOST) and of --bayes (ours; the paper has none).",
)
@click.option(
    "--bayes",
    is_flag=True,
    help="Also fit the recency model with brms (R; Debian r-cran-brms; minutes) and report "
    "recency's posterior in points and its mass inside the --recency-sesoi bounds (ours).",
)
@click.option(
    "--complexity-statistic",
    type=click.Choice(get_args(ComplexityStatistic)),
    default="logit-hc3-t",
    show_default=True,
    help="The complexity test: the slope of the items' empirical logits over its two-way SE "
    "(participants' own complexity slopes count; HC3 items' part) against t(items - 2); the "
    "same slope with an HC2 part and its permutation distribution (logit-two-way, 5.9-6.7% "
    "of null studies at item SD 0.5); or the score at the task-only model, permuted (about "
    "6%).",
)
@click.option(
    "--interaction-test",
    type=click.Choice(get_args(InteractionTest)),
    default="glm-2way",
    show_default=True,
    help="Primary test of task x complexity: the two-way GLM's term (t, SE floor; it held "
    "its rate in the null benchmarks, with or without R) or the leading model's (glmer with "
    "the ladder where R has lme4; not yet benchmarked at scale).",
)
@click.option(
    "--recency-interval",
    type=click.Choice(get_args(RecencyInterval)),
    default="larger",
    show_default=True,
    help="SE of recency's equivalence test (TOST): the larger of the item-permutation SE (the "
    "items' dispersion of the recency contrast within complexity levels) and the two-way GLM's, "
    "t with the permutation's df (larger); the item-permutation SE alone (permutation); or the "
    "floored two-way GLM's SE, t(items - 1) (two-way: the default before issue 29's third "
    "pass, too ready to claim equivalence).",
)
@click.option(
    "--two-way-se",
    type=click.Choice(["max", "cgm"]),
    default="max",
    show_default=True,
    help="Two-way GLM: test each term with the larger of its two-way and participant-clustered "
    "SE (max), or the two-way (Cameron-Gelbach-Miller) SE alone (cgm).",
)
@click.option(
    "--accuracy-interval",
    type=click.Choice(get_args(AccuracyInterval)),
    default="two-way",
    show_default=True,
    help="Intervals of human accuracy in tables and Figure 3 (two-way: over participants and "
    "items, two-way clustered; bootstrap: BCa over participants alone, which leaves out how "
    "items differ; wilson: over the pooled trials, too narrow for clustered trials).",
)
@click.option(
    "--calibrated", is_flag=True, help="Score models by correct_calibrated instead of correct."
)
@click.option(
    "--min-accuracy",
    type=click.FloatRange(0, 1),
    default=EXCLUSION_THRESHOLD,
    show_default=True,
    help="Exclude a participant from a task below this accuracy on it.",
)
@click.option(
    "--exclusion-rule",
    type=click.Choice(ACCURACY_RULES),
    default="paper",
    show_default=True,
    help="Accuracy rule: the paper's (below --min-accuracy on a task), or chance (below the "
    "task's own chance level: 1/2 for a forced choice, 1 / the story's containers for open "
    "recall; ours).",
)
@click.option(
    "--min-comprehension",
    type=click.FloatRange(0, 1),
    default=None,
    help="Exclude participants below this accuracy on filler questions.",
)
@click.option("--keep-incomplete", is_flag=True, help="Keep sessions that were not completed.")
@click.option(
    "--keep-unconfirmed",
    is_flag=True,
    help="Keep participants who did not confirm attentiveness and no AI assistance.",
)
@click.option("--drop-timeouts", is_flag=True, help="Drop timed-out trials (default: incorrect).")
@click.option(
    "--exclude-flagged",
    is_flag=True,
    help="Drop trials the study server flagged for their timing (answers faster or slower "
    "than their reported times, served before the previous trial ended, ...); counted per "
    "task in the exclusions table.",
)
@click.option(
    "--model",
    "model_ids",
    multiple=True,
    help="Report only this model id (repeatable; default: every model in --models).",
)
@click.option(
    "--template",
    "templates",
    multiple=True,
    help="Report models only on this object template (repeatable; default: all).",
)
@click.option(
    "--source",
    "sources",
    type=click.Choice(SOURCES),
    multiple=True,
    help="Analyse only sessions from this source (repeatable; default: all but preview).",
)
@click.option(
    "--include-preview",
    is_flag=True,
    help="Keep the researcher's preview sessions (their own test runs through the study's "
    "preview link), which are left out by default.",
)
@paradigm_options()
def report(
    stimuli_dirs: tuple[Path, ...],
    human: Path | None,
    models: Path | None,
    out: Path,
    engine: Engine,
    slopes: bool,
    random_effects: str,
    recency: Recency,
    task_coding: TaskCoding,
    figure_template: FigureTemplate,
    inference: Inference,
    glmer_test: GlmerTest,
    permutations: int,
    recency_sesoi: float,
    bayes: bool,
    complexity_statistic: ComplexityStatistic,
    interaction_test: InteractionTest,
    recency_interval: RecencyInterval,
    two_way_se: str,
    accuracy_interval: AccuracyInterval,
    calibrated: bool,
    min_accuracy: float,
    exclusion_rule: AccuracyRule,
    min_comprehension: float | None,
    keep_incomplete: bool,
    keep_unconfirmed: bool,
    drop_timeouts: bool,
    exclude_flagged: bool,
    model_ids: tuple[str, ...],
    templates: tuple[str, ...],
    sources: tuple[str, ...],
    include_preview: bool,
    **paradigm_options: str,
) -> None:
    """Write every figure and table and one self-contained HTML page into --out."""
    from tracktale.analysis.data.exclusions import ExclusionRules
    from tracktale.analysis.report.build import ReportOptions, build_report
    from tracktale.analysis.report.options import collect
    from tracktale.analysis.stats.random_structure import check_random

    if human is None and models is None:
        raise TracktaleError("give --human, --models or both")
    rules = ExclusionRules(
        min_accuracy=min_accuracy,
        require_completed=not keep_incomplete,
        require_attentive=not keep_unconfirmed,
        require_no_ai=not keep_unconfirmed,
        min_comprehension=min_comprehension,
        drop_timeouts=drop_timeouts,
        exclude_flagged=exclude_flagged,
        sources=sources or None,
        accuracy_rule=exclusion_rule,
    )
    options = ReportOptions(
        rules=rules,
        engine=engine,
        slopes=slopes,
        random="intercepts" if slopes else check_random(random_effects),
        recency=recency,
        task_coding=task_coding,
        figure_template=figure_template,
        inference=inference,
        accuracy_interval=accuracy_interval,
        glmer_test=glmer_test,
        two_way_floor=two_way_se == "max",
        permutations=permutations,
        recency_sesoi=recency_sesoi,
        bayes=bayes,
        complexity_statistic=complexity_statistic,
        interaction_test=interaction_test,
        recency_interval=recency_interval,
        value="correct_calibrated" if calibrated else "correct",
        models=model_ids or None,
        templates=templates or None,
        include_preview=include_preview or "preview" in sources,
        paradigms=collect(paradigm_options),
    )
    result = build_report(
        stimuli=stimuli_dirs, out=out, human=human, models=models, options=options
    )
    for line in result.left_aside:
        click.echo(line, err=True)
    n_figures = sum(len(s.figures) for s in result.sections)
    n_tables = sum(len(s.tables) for s in result.sections)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"wrote {n_figures} figures and {n_tables} tables; report: {result.html_path}")


def _register() -> None:
    # Registered here so that ``tracktale analysis --help`` lists every command.
    from tracktale.analysis.power.cli import power, simulate
    from tracktale.analysis.reading.cli import reading

    analysis.add_command(power)
    analysis.add_command(reading)
    analysis.add_command(simulate)


_register()
