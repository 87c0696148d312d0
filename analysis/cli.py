"""``tracktale analysis``: the report, power by simulation, and simulated participants.

pandas, statsmodels and matplotlib are imported inside the commands, so ``tracktale --help``
stays fast.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import click

from tracktale.errors import TracktaleError
from tracktale.experiment.export.summary import EXCLUSION_THRESHOLD
from tracktale.schema.records import SOURCES

_EXISTING = click.Path(exists=True, path_type=Path)


@click.group()
def analysis() -> None:
    """Analyse human trials and model results: statistics, figures, reports, power."""


_human_set_option = click.option(
    "--stimuli",
    "stimuli_dirs",
    type=_EXISTING,
    multiple=True,
    help="Human-protocol stimulus set (default: the narrative human protocol, seed 1).",
)


def _permutations(default: int, help_text: str) -> Any:
    """``--permutations B``: the report and ``power`` differ only in default and help.

    ``--recency-permutations`` is an alias: the option's name before complexity was tested by
    permutation too.
    """
    return click.option(
        "--permutations",
        "--recency-permutations",
        "permutations",
        type=click.IntRange(min=0),
        default=default,
        show_default=True,
        metavar="B",
        help=help_text,
    )


def _stimulus_sets(paths: tuple[Path, ...]) -> list[Any]:
    from tracktale.analysis.data.tidy import human_stimulus_set, load_stimulus_sets

    return load_stimulus_sets(paths) if paths else [human_stimulus_set()]


@analysis.command()
@click.option(
    "--stimuli",
    "stimuli_dirs",
    type=_EXISTING,
    multiple=True,
    required=True,
    help="A stimulus set the data refer to (repeat for the human and the model set).",
)
@click.option(
    "--human", type=_EXISTING, help="Human data: the study export folder or a trials file."
)
@click.option(
    "--models", type=_EXISTING, help="Model results: a results store, .parquet or .csv file."
)
@click.option(
    "--out", type=click.Path(path_type=Path), required=True, help="Folder for the report."
)
@click.option(
    "--engine",
    type=click.Choice(["auto", "statsmodels", "lme4", "none"]),
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
    type=click.Choice(["focus", "sentences_since_focus"]),
    default="focus",
    show_default=True,
    help="Recency covariate of the second GLM (focus: the paper's).",
)
@click.option(
    "--task-coding",
    type=click.Choice(["sum", "treatment", "sum-implicit"]),
    default="sum",
    show_default=True,
    help="Coding of probing method in the GLMs: sum (explicit +0.5 / implicit -0.5, the "
    "coding that gives the paper's signs), sum-implicit (implicit +0.5) or treatment "
    "(explicit 0 / implicit 1).",
)
@click.option(
    "--figure-templates",
    "figure_template",
    type=click.Choice(["standard", "all"]),
    default="standard",
    show_default=True,
    help="Compute Figures 5 and 7 (and the base-vs-instruct table) on the standard template "
    "(the paper's 550 trials per task) or on all templates pooled.",
)
@click.option(
    "--inference",
    type=click.Choice(["auto", "glmer", "glm-2way", "glm"]),
    default="auto",
    show_default=True,
    help="What the human analysis leads with (auto: glmer where R has lme4, else the GLM "
    "with SEs clustered by participant and item; glm: the paper's participant-clustered GLM, "
    "which is always shown too).",
)
@click.option(
    "--glmer-test",
    type=click.Choice(["t-bw", "z"]),
    default="t-bw",
    show_default=True,
    help="glmer's p-values: t with between-within degrees of freedom (items minus item-level "
    "terms for complexity and recency), or lme4's normal reference.",
)
@_permutations(
    9999,
    "Relabellings of the item-permutation tests, the report's complexity test (items' "
    "complexity permuted across items) and recency test (focus permuted within complexity "
    "levels); they hold their rate where the models' own p-values do not; 0 leaves them out. "
    "--recency-permutations is the same option.",
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
    type=click.Choice(["bootstrap", "wilson"]),
    default="bootstrap",
    show_default=True,
    help="Intervals of human accuracy in tables and Figure 3 (bootstrap: BCa over "
    "participants; wilson: over the pooled trials, too narrow for clustered trials).",
)
@click.option(
    "--arithmetic-interval",
    type=click.Choice(["wilson", "bootstrap"]),
    default="wilson",
    show_default=True,
    help="Intervals of the arithmetic paradigm's rates (bootstrap: the paper's percentile "
    "bootstrap over items, which collapses to [1, 1] at 20/20).",
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
@click.option(
    "--arithmetic-reference",
    type=click.Choice(["paper", "ieee"]),
    default="paper",
    show_default=True,
    help="Arithmetic tables score against the paper's executor (a step that raises is skipped) "
    "or ours (IEEE inf/nan); both are always reported side by side.",
)
@click.option(
    "--arithmetic-first-answer",
    type=click.Choice(["span", "numeric"]),
    default="span",
    show_default=True,
    help="Arithmetic FAA: the first extracted <answer> span (the paper's words) or the first "
    "one that is a number.",
)
@click.option(
    "--boxes-functor",
    type=click.Choice(["strict", "any"]),
    default="strict",
    show_default=True,
    help="Boxes: a state needs its own functor (strict) or its argument only (any: the "
    "authors' code).",
)
@click.option(
    "--boxes-unparsed",
    type=click.Choice(["per-state", "whole-step"]),
    default="per-state",
    show_default=True,
    help="Boxes: mark missing or conflicting states one by one, or set the whole answer aside "
    "(whole-step: the authors' code).",
)
def report(
    stimuli_dirs: tuple[Path, ...],
    human: Path | None,
    models: Path | None,
    out: Path,
    engine: str,
    slopes: bool,
    random_effects: str,
    recency: str,
    task_coding: str,
    figure_template: str,
    inference: str,
    glmer_test: str,
    permutations: int,
    two_way_se: str,
    accuracy_interval: str,
    arithmetic_interval: str,
    calibrated: bool,
    min_accuracy: float,
    min_comprehension: float | None,
    keep_incomplete: bool,
    keep_unconfirmed: bool,
    drop_timeouts: bool,
    exclude_flagged: bool,
    model_ids: tuple[str, ...],
    templates: tuple[str, ...],
    sources: tuple[str, ...],
    include_preview: bool,
    arithmetic_reference: str,
    arithmetic_first_answer: str,
    boxes_functor: str,
    boxes_unparsed: str,
) -> None:
    """Write every figure and table and one self-contained HTML page into --out."""
    from tracktale.analysis.data.exclusions import ExclusionRules
    from tracktale.analysis.report.build import ReportOptions, build_report
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
        arithmetic_interval=arithmetic_interval,
        accuracy_interval=accuracy_interval,
        glmer_test=glmer_test,
        two_way_floor=two_way_se == "max",
        permutations=permutations,
        value="correct_calibrated" if calibrated else "correct",
        models=model_ids or None,
        templates=templates or None,
        arithmetic_reference=arithmetic_reference,
        arithmetic_first_answer=arithmetic_first_answer,
        boxes_functor=boxes_functor,
        boxes_unparsed=boxes_unparsed,
        include_preview=include_preview or "preview" in sources,
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


class _LazyProgress:
    """A progress bar opened at the first report, after any time estimate was printed."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bar: Any = None
        self.shown = 0

    def estimate(self, estimate: Any) -> None:
        minutes = estimate.total_seconds / 60
        click.echo(
            f"glmer: {estimate.seconds_per_set:.1f} s per study (R start-up "
            f"{estimate.startup_seconds:.1f} s): about {minutes:.1f} min for {self.total} "
            "studies on the worker processes"
        )

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = click.progressbar(length=total, label="fitting", show_eta=True)
            self.bar.__enter__()
        self.bar.update(done - self.shown)
        self.shown = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def _simulation_options(command: Any, richer: bool = False) -> Any:
    """The generating model's options, shared by ``power`` and ``simulate``.

    With ``richer`` (``power``) the random slopes, guessers and item variance default to the
    richer truth of the null benchmarks (:data:`~tracktale.analysis.power.simulate.RICHER_TRUTH`).
    """
    from tracktale.analysis.power.simulate import SimulationParams

    defaults = SimulationParams().richer() if richer else SimulationParams()
    helps = {
        "intercept": "Log-odds of a correct answer at mean complexity.",
        "complexity": "Effect of one complexity level (log-odds).",
        "task": "Explicit minus implicit (log-odds; explicit coded +0.5, as the paper).",
        "interaction": "Complexity x task (log-odds).",
        "recency": "Effect of the focus position (log-odds).",
        "participant_sd": "SD of participants' random intercepts.",
        "item_sd": "SD of items' random intercepts.",
        "guessers": "Share of participants answering at chance.",
        "participant_task_sd": "SD of participants' random task slopes.",
        "item_task_sd": "SD of items' random task slopes.",
        "participant_complexity_sd": "SD of participants' random complexity slopes.",
        "item_sd_ratio": "Item SD at the highest complexity level over the lowest.",
    }
    for name, text in reversed(helps.items()):
        flag = "--effect-" + name.replace("_", "-")
        command = click.option(
            flag, name, type=float, default=getattr(defaults, name), show_default=True, help=text
        )(command)
    return command


def _params(values: dict[str, Any]) -> Any:
    from tracktale.analysis.power.simulate import SimulationParams

    names: tuple[str, ...] = ("intercept", "complexity", "task", "interaction", "recency")
    names += ("participant_sd", "item_sd", "guessers", "participant_task_sd", "item_task_sd")
    names += ("participant_complexity_sd", "item_sd_ratio")
    return SimulationParams(**{name: values.pop(name) for name in names})


@analysis.command()
@_human_set_option
@click.option(
    "--sizes",
    default="10,20,30,40,50,60",
    show_default=True,
    help="Participant numbers to simulate (comma-separated).",
)
@click.option(
    "--simulations", type=click.IntRange(1), default=200, show_default=True, help="Per size."
)
@click.option(
    "--paradigm",
    type=click.Choice(["narrative", "boxes", "arithmetic"]),
    help="The study simulated (default: the --stimuli set's paradigm; without --stimuli, "
    "narrative). boxes and arithmetic: see --test.",
)
@click.option(
    "--term",
    type=click.Choice(
        ["complexity_c", "task_s", "complexity_c:task_s", "recency_c"]
        + ["steps", "instruction", "language", "horizon", "lookback"]
    ),
    help="The term whose significance counts (for glmer: the same term of its model). "
    "Default: complexity_c (narrative), steps (boxes: State-EM by steps), horizon "
    "(arithmetic: FAA by procedure length).",
)
@click.option(
    "--test",
    type=click.Choice(["participant-t", "glm-cluster", "glm-cluster-z"]),
    default="participant-t",
    show_default=True,
    help="boxes/arithmetic: participant-t (each person's own coefficient, t test over "
    "people), or a logistic GLM with participant-clustered SEs and t(G-1) or z.",
)
@click.option(
    "--outcome",
    type=click.Choice(["state-em", "step-em"]),
    help="boxes: the per-trial outcome tested (default state-em).",
)
@click.option(
    "--people-effect",
    "people_effects",
    multiple=True,
    metavar="NAME=VALUE",
    help="boxes/arithmetic: change one effect of the simulated people (log-odds; repeat). "
    "boxes: state_error, steps, instruction, language; arithmetic: intercept, horizon, "
    "lookback; both: participant_sd, inattentive. Defaults: the study's simulated people.",
)
@click.option(
    "--alpha", type=click.FloatRange(0, 1), default=0.05, show_default=True, help="Level."
)
@click.option(
    "--with-recency", is_flag=True, help="Fit the GLM with the focus position as covariate."
)
@click.option("--no-exclusions", is_flag=True, help="Do not apply the 50% accuracy exclusion.")
@click.option(
    "--method",
    type=click.Choice(["auto", "glm", "glm-2way", "glmer"]),
    default="auto",
    show_default=True,
    help="The model fitted to each simulated study (auto: the report's default, glmer where R "
    "has lme4, else glm-2way; glm: the paper's participant-clustered GLM).",
)
@click.option(
    "--workers",
    type=click.IntRange(1),
    default=2,
    show_default=True,
    help="R processes at once for --method glmer.",
)
@click.option(
    "--glmer-test",
    type=click.Choice(["t-bw", "z"]),
    default="t-bw",
    show_default=True,
    help="glmer's p-values, as in the report (t with between-within df, or lme4's z).",
)
@_permutations(
    999,
    "With --term complexity_c (model 1) or recency_c and the report's methods (glm-2way, "
    "glmer): count the p of the report's item-permutation test of that term, with B "
    "relabellings; 0 counts the model's own p. --recency-permutations is the same option.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the simulations.")
@click.option(
    "--out", type=click.Path(path_type=Path), help="Write power.csv/.tex and the power curve here."
)
@functools.partial(_simulation_options, richer=True)
def power(
    stimuli_dirs: tuple[Path, ...],
    sizes: str,
    simulations: int,
    paradigm: str | None,
    term: str | None,
    test: str,
    outcome: str | None,
    people_effects: tuple[str, ...],
    alpha: float,
    with_recency: bool,
    no_exclusions: bool,
    method: str,
    workers: int,
    glmer_test: str,
    permutations: int,
    seed: int,
    out: Path | None,
    **effects: float,
) -> None:
    """Power by simulation, with its CI, for a range of sample sizes, by the fitted model."""
    from tracktale.analysis.data.exclusions import ExclusionRules
    from tracktale.analysis.power.design import PowerSettings, power_figure, simulate_power
    from tracktale.analysis.report.tables import format_cell, save_table
    from tracktale.analysis.stats.inference import METHOD_LABELS, resolve_method

    try:
        size_list = [int(part) for part in sizes.split(",") if part.strip()]
    except ValueError:
        raise TracktaleError(f"--sizes: {sizes!r} is not a list of integers") from None
    from tracktale.analysis.data.tidy import human_stimulus_set

    stimulus_set = human_stimulus_set(stimuli_dirs, paradigm)
    if stimulus_set.manifest.paradigm != "narrative":
        from tracktale.analysis.power.people import PeoplePowerSettings, parse_effects

        people = PeoplePowerSettings(
            sizes=size_list, simulations=simulations, term=term, test=test, outcome=outcome,
            alpha=alpha, effects=parse_effects(people_effects), seed=seed,
        )  # fmt: skip
        return _people_power(stimulus_set, people, out)
    term = term or "complexity_c"
    settings = PowerSettings(
        sizes=size_list,
        simulations=simulations,
        term=term,
        alpha=alpha,
        recency="focus" if with_recency else None,
        rules=None if no_exclusions else ExclusionRules(),
        seed=seed,
        method=resolve_method(method),
        workers=workers,
        glmer_test=glmer_test,
        permutations=permutations,
    )
    params = _params(dict(effects))
    total = len(size_list) * simulations
    click.echo(f"method: {METHOD_LABELS[settings.method]}")
    if settings.method == "glmer":
        click.echo(f"simulating {total} studies; fitting the first alone to time glmer ...")
    progress = _LazyProgress(total)
    try:
        table = simulate_power(stimulus_set, params, settings, progress, progress.estimate)
    finally:
        progress.close()
    for row in table.itertuples():
        click.echo(
            f"N={row.participants:>4}  power {format_cell(row.power, 3)} "
            f"[{format_cell(row.ci_low, 3)}, {format_cell(row.ci_high, 3)}]  "
            f"mean b={format_cell(row.mean_estimate, 3)}  analysed {row.mean_analysed:.1f}"
        )
    from tracktale.analysis.power.design import sizes_for_power

    for target, size in sizes_for_power(table).items():
        reached = f"N = {size}" if size is not None else f"no size up to {max(size_list)}"
        click.echo(f"{100 * target:.0f}% power: {reached} (of the sizes simulated)")
    wrong = int(table["wrong_sign"].sum()) if "wrong_sign" in table else 0
    if wrong:
        click.echo(f"{wrong} significant result(s) had the wrong sign and do not count as power")
    if out is not None:
        save_table(table, out, "power", f"Power for {term} (alpha {alpha})")
        power_figure(table, out, term)
        click.echo(f"wrote {out}/power.csv and {out}/power_curve.png")


def _people_power(stimulus_set: Any, settings: Any, out: Path | None) -> None:
    """``power`` for the boxes and arithmetic studies (:mod:`tracktale.analysis.power.people`)."""
    from tracktale.analysis.power.people import people_power_report

    progress = _LazyProgress(len(settings.sizes) * settings.simulations)
    try:
        for line in people_power_report(stimulus_set, settings, out, progress, click.echo):
            click.echo(line)
    finally:
        progress.close()


@analysis.command()
@_human_set_option
@click.option(
    "--participants",
    type=click.IntRange(1),
    default=48,
    show_default=True,
    help="Participants to simulate.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the simulation.")
@click.option(
    "--format",
    "file_format",
    type=click.Choice(["csv", "parquet"]),
    default="csv",
    show_default=True,
    help="File format of the export.",
)
@click.option(
    "--out", type=click.Path(path_type=Path), required=True, help="Folder for the export."
)
@_simulation_options
def simulate(
    stimuli_dirs: tuple[Path, ...],
    participants: int,
    seed: int,
    file_format: str,
    out: Path,
    **effects: float,
) -> None:
    """Write simulated participants as a study export (trials and participants files)."""
    from tracktale.analysis.power.simulate import simulate_human_data
    from tracktale.atomic import atomic_write

    stimulus_set = _stimulus_sets(stimuli_dirs)[0]
    data = simulate_human_data(stimulus_set, participants, _params(dict(effects)), seed)
    if data.participants is None:  # simulate_human_data always makes the sessions
        raise TracktaleError("the simulation made no participant records")
    out.mkdir(parents=True, exist_ok=True)
    for name, table in (("trials", data.trials), ("participants", data.participants)):
        path = out / f"{name}.{file_format}"
        with atomic_write(path, "wb") as handle:
            if file_format == "csv":
                handle.write(table.to_csv(index=False, lineterminator="\n").encode("utf-8"))
            else:
                table.to_parquet(handle, index=False)
    click.echo(f"wrote {len(data.trials)} trials of {participants} participants to {out}")


from tracktale.analysis.reading.cli import reading  # noqa: E402 - registered after the group

analysis.add_command(reading)
