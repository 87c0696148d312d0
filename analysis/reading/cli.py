"""``tracktale analysis reading``: reading times against the models' word surprisal.

pandas, statsmodels and matplotlib are imported inside the command, so ``--help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path

import click

from tracktale.analysis.reading.regression import RANDOM_CHOICES
from tracktale.errors import TracktaleError

_EXISTING = click.Path(exists=True, path_type=Path)


@click.command()
@click.option("--times", type=_EXISTING, help="Per-word reading times (.csv or .parquet).")
@click.option("--models", type=_EXISTING, help="Results store with sequence word surprisal.")
@click.option(
    "--stimuli",
    type=_EXISTING,
    help="The imported stimulus set the models scored: reading times name its items as its table.",
)
@click.option(
    "--simulate",
    is_flag=True,
    help="Analyse a simulated study (planted slope --slope) instead of --times/--models.",
)
@click.option(
    "--participants", type=click.IntRange(2), default=24, show_default=True,
    help="With --simulate: participants.",
)  # fmt: skip
@click.option(
    "--items", type=click.IntRange(2), default=16, show_default=True,
    help="With --simulate: texts.",
)  # fmt: skip
@click.option(
    "--words", type=click.IntRange(5), default=12, show_default=True,
    help="With --simulate: words per text.",
)  # fmt: skip
@click.option("--slope", type=float, default=0.02, show_default=True, help="Planted log-RT/nat.")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Output folder.")
@click.option(
    "--engine",
    type=click.Choice(["auto", "lme4", "statsmodels"]),
    default="auto",
    show_default=True,
    help="Regressions: lme4's lmer through R, or the OLS fallback (auto: lme4 if R has it).",
)
@click.option(
    "--random",
    type=click.Choice(RANDOM_CHOICES),
    default="surprisal",
    show_default=True,
    help="lmer's random slopes: surprisal (of the surprisal term, by participant and by item, "
    "uncorrelated, simplified along the ladder when singular), surprisal-spillover (the same "
    "with its spillover copies), participant-slope (the surprisal term by participant, as "
    "given) or intercepts.",
)
@click.option(
    "--folds", type=click.IntRange(2), default=10, show_default=True,
    help="Cross-validation folds of the ΔLL.",
)  # fmt: skip
@click.option(
    "--fold-by", type=click.Choice(["participants", "items"]), default="participants",
    show_default=True, help="What the cross-validation holds out.",
)  # fmt: skip
@click.option(
    "--permutations", type=click.IntRange(0), default=99, show_default=True,
    help="Permutations of the ΔLL test (0: no test).",
)  # fmt: skip
@click.option(
    "--spillover", type=click.IntRange(0, 2), default=2, show_default=True,
    help="Previous words whose predictors enter the regressions.",
)  # fmt: skip
@click.option("--min-rt", type=float, default=100.0, show_default=True, help="ms")
@click.option("--max-rt", type=float, default=3000.0, show_default=True, help="ms (Maze: 5000)")
@click.option("--keep-first-last", is_flag=True, help="Keep each screen's first and last word.")
@click.option("--keep-punctuation", is_flag=True, help="Keep words carrying punctuation.")
@click.option("--keep-maze-errors", is_flag=True, help="Keep wrongly answered Maze words.")
@click.option(
    "--seed", type=int, default=0, show_default=True,
    help="Seed of the simulation, the folds and the permutations.",
)  # fmt: skip
def reading(**opts) -> None:  # noqa: ANN003 - click passes every option by name
    """Reading times against word surprisal: regressions, ΔLL per model, figures."""
    from tracktale.analysis.reading.analyse import ReadingOptions, analyse_reading
    from tracktale.analysis.reading.outputs import write_outputs
    from tracktale.analysis.reading.predictors import Exclusions

    reading_times, words, columns = _inputs(opts)
    options = ReadingOptions(
        exclusions=Exclusions(
            min_rt_ms=opts["min_rt"],
            max_rt_ms=opts["max_rt"],
            first_last=not opts["keep_first_last"],
            punctuation=not opts["keep_punctuation"],
            maze_errors=not opts["keep_maze_errors"],
        ),
        spillover=opts["spillover"],
        engine=opts["engine"],
        random=opts["random"],
        folds=opts["folds"],
        fold_by=opts["fold_by"],
        permutations=opts["permutations"],
        seed=opts["seed"],
    )
    result = analyse_reading(reading_times, words, columns, options)
    paths = write_outputs(result, options, opts["out"])
    for row in result.delta_ll.itertuples():
        click.echo(
            f"{row.model_id}{'@' + row.revision if row.revision else ''}: ΔLL "
            f"{1000 * row.delta_ll_per_word:.2f} millinats/word (p = {row.p_permutation:.3f}), "
            f"surprisal slope {row.surprisal_slope:.4f} "
            f"[{row.slope_ci_low:.4f}, {row.slope_ci_high:.4f}] ({result.engine})"
        )
    for model, steps in result.random_effects.groupby("model", sort=False):
        click.echo(f"random effects of {model}: {steps['fitted'].iloc[0]} ({len(steps)} fits)")
    click.echo(f"wrote {len(paths)} files to {opts['out']}")


def _inputs(opts: dict) -> tuple:
    from tracktale.analysis.reading.records import check_reading_times, read_reading_times
    from tracktale.analysis.reading.simulate import (
        SIMULATED_MODEL,
        ReadingDesign,
        simulate_study,
    )
    from tracktale.analysis.reading.surprisal import item_names, model_words

    if opts["simulate"]:
        design = ReadingDesign(
            participants=opts["participants"],
            items=opts["items"],
            words=opts["words"],
            surprisal_slope=opts["slope"],
        )
        reading_times, words = simulate_study(design, opts["seed"])
        out: Path = opts["out"]
        out.mkdir(parents=True, exist_ok=True)
        reading_times.to_csv(out / "simulated_reading_times.csv", index=False)
        return check_reading_times(reading_times, "simulation"), words, [SIMULATED_MODEL]
    if opts["times"] is None or opts["models"] is None:
        raise TracktaleError("give --times and --models, or --simulate")
    names = item_names(opts["stimuli"]) if opts["stimuli"] else None
    words, columns = model_words(opts["models"], names)
    return read_reading_times(opts["times"]), words, columns
