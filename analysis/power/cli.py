"""``tracktale analysis power`` and ``simulate``: simulation studies from the command line."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import click

from tracktale.analysis.cli_options import (
    human_set_option,
    permutations_option,
    stimulus_sets,
)
from tracktale.choices import LiveChoice
from tracktale.errors import TracktaleError
from tracktale.stimuli.registry import DEFAULT_PARADIGM, paradigms_with


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


PRIMARY_TERMS = ("complexity_c", "complexity_c:task_s", "recency_c")
"""The terms of the report's primary tests, all on the two-way GLM or its permutations."""


def _method(method: str, term: str) -> str:
    """``auto``: the model the report's primary test of ``term`` uses; else ``method``, checked.

    The primary tests of complexity and recency permute items (glm-2way's p is counted with
    ``--permutations 0``) and the interaction's is the two-way GLM's term whatever model leads
    the report, so fitting glmer for them would count another test than the report's.
    """
    from tracktale.analysis.stats.inference import resolve_method

    if method == "auto" and term in PRIMARY_TERMS:
        return "glm-2way"
    return resolve_method(method)


def _params(values: dict[str, Any]) -> Any:
    from tracktale.analysis.power.simulate import SimulationParams

    names: tuple[str, ...] = ("intercept", "complexity", "task", "interaction", "recency")
    names += ("participant_sd", "item_sd", "guessers", "participant_task_sd", "item_task_sd")
    names += ("participant_complexity_sd", "item_sd_ratio")
    return SimulationParams(**{name: values.pop(name) for name in names})


@click.command()
@human_set_option
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
    type=LiveChoice(lambda: dict.fromkeys([DEFAULT_PARADIGM, *paradigms_with("power")])),
    help="The study simulated (default: the --stimuli set's paradigm; without --stimuli, "
    f"{DEFAULT_PARADIGM}). The others simulate their people's power model: see --test.",
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
    help="The model fitted to each simulated study (auto: the one behind the report's primary "
    "test of --term: glm-2way for complexity_c, the interaction and recency_c, whose primary "
    "tests are the item permutations and the two-way GLM; for task_s glmer where R has lme4, "
    "else glm-2way; glm: the paper's participant-clustered GLM).",
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
@permutations_option(
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
    from tracktale.analysis.stats.inference import METHOD_LABELS

    try:
        size_list = [int(part) for part in sizes.split(",") if part.strip()]
    except ValueError:
        raise TracktaleError(f"--sizes: {sizes!r} is not a list of integers") from None
    from tracktale.analysis.data.tidy import human_stimulus_set

    stimulus_set = human_stimulus_set(stimuli_dirs, paradigm)
    if stimulus_set.manifest.paradigm in paradigms_with("power"):
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
        method=_method(method, term),
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


@click.command()
@human_set_option
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

    stimulus_set = stimulus_sets(stimuli_dirs)[0]
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
