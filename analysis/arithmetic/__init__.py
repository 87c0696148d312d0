"""The arithmetic paper's tables and figures, from explicit-task results and their stimulus set.

:func:`arithmetic_section` writes every one of them into one folder (the report puts each
stimulus set's into ``<out>/arithmetic/<set>/``). Stems name the paper's numbers:

==========================================  =================================================
``arithmetic_table1_models``                Table 1: the models, with the paper's abbreviations
``arithmetic_table2_generation_change``     Table 2: PAR and step following, 5 vs 95 steps
``arithmetic_table3_accuracy``              Table 3: FAA with its 95% interval, CAA, gap, PAR
``arithmetic_table4_output_statistics``     Table 4: expected-output statistics per operation
``arithmetic_references``                   FAA/CAA against both references, both rules
``arithmetic_references_by_dataset``        items dividing by zero / whose references differ
``arithmetic_fig2_faa_by_horizon``          Figure 2 (and the data of Figures 3 and 19)
``arithmetic_fig3_faa_vs_caa``              Figure 3
``arithmetic_fig4_input_range`` ...         Figures 4-6 pooled, and ``..._per_model``
``arithmetic_fig7_answer_position``         Figure 7 (AP distribution)
``arithmetic_fig10_magnitude_input_range``  Figures 10-12 (expected magnitudes), 13-15 per model
``arithmetic_fig16_heatmap_input_range``    Figures 16-17 (heatmaps)
``arithmetic_fig19_par_by_horizon``         Figure 19
==========================================  =================================================

Tables are CSV (LaTeX too for the paper's tables), figures PNG, PDF and SVG.
:func:`arithmetic_outputs` returns what it wrote as objects (each table's data, each figure's
files), which the report sections (:mod:`.section`, declared in :data:`SECTIONS`) render.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from tracktale.analysis.arithmetic import figures
from tracktale.analysis.arithmetic.rows import (
    ArithmeticOptions,
    factor_rows,
    has_rows,
    read_set,
    scored_rows,
)
from tracktale.analysis.arithmetic.tables import (
    POOLED,
    accuracy_table,
    answer_position_table,
    bootstrap_interval,
    factor_table,
    generation_change,
    heatmap_table,
    horizon_table,
    magnitude_table,
    models_table,
    output_statistics,
    rate_interval,
    rate_table,
    reference_table,
    set_references,
    write_table,
)
from tracktale.analysis.report.outputs import Outputs, written_paths

if TYPE_CHECKING:
    import pandas as pd

    from tracktale.stimulus_set import StimulusSet

__all__ = [
    "POOLED",
    "ArithmeticOptions",
    "accuracy_table",
    "arithmetic_outputs",
    "arithmetic_section",
    "bootstrap_interval",
    "factor_rows",
    "factor_table",
    "generation_change",
    "horizon_table",
    "rate_interval",
    "rate_table",
    "scored_rows",
]

SECTIONS = ("tracktale.analysis.arithmetic.section:models_section",)
"""The paradigm's report sections (``module:function``), in page order."""

MAGNITUDE_FIGURES = (
    ("input_range", "arithmetic_fig10_magnitude_input_range", "Figure 10: by input range"),
    ("data_type", "arithmetic_fig11_magnitude_data_type", "Figure 11: by data type"),
    ("operation", "arithmetic_fig12_magnitude_operation", "Figure 12: by operation"),
)
FACTOR_FIGURES = (
    (("input_range", "data_type"), "arithmetic_fig4_input_range", "Figure 4: input range"),
    (("lookback",), "arithmetic_fig5_lookback", "Figure 5: look-back"),
    (("operation",), "arithmetic_fig6_operation", "Figure 6: operation"),
)


def arithmetic_outputs(
    results: pd.DataFrame,
    stimulus_set: StimulusSet | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    options: ArithmeticOptions | None = None,
    n_boot: int | None = None,
    seed: int | None = None,
) -> Outputs:
    """Every arithmetic table and figure (see the module docstring), for the report.

    Args:
        results: Explicit-task result rows (rows of other sets and tasks are ignored).
        stimulus_set: The set they were scored on, or its folder.
        out_dir: Folder to write into (created).
        options: Reference, first-answer rule and bootstrap settings.
        n_boot: Bootstrap resamples (overrides ``options``).
        seed: Bootstrap seed (overrides ``options``).

    Returns:
        What was written (``written``: the paths, in order); empty when no result belongs
        to the set.
    """
    import dataclasses

    options = options or ArithmeticOptions()
    if n_boot is not None or seed is not None:
        options = dataclasses.replace(
            options,
            n_boot=options.n_boot if n_boot is None else n_boot,
            seed=options.seed if seed is None else seed,
        )
    stimulus_set = read_set(stimulus_set)
    outputs = Outputs()
    if not has_rows(results, stimulus_set):
        return outputs
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    rows = scored_rows(results, stimulus_set, options)
    # Written (and shown) in reading order: the paper's tables, its figures each after the
    # table of its data, then ours.
    _tables(outputs, rows, stimulus_set, folder, options)
    _figures(outputs, rows, folder, options)
    _reference_tables(outputs, rows, stimulus_set, folder)
    return outputs


class _Bootstrap(TypedDict):
    n_boot: int
    seed: int
    interval: str


def _bootstrap(options: ArithmeticOptions) -> _Bootstrap:
    """The interval options every table of rates takes."""
    return {"n_boot": options.n_boot, "seed": options.seed, "interval": options.interval}


TITLES = {
    "arithmetic_table1_models": "The paper's Table 1: the models, with its abbreviations and "
    "scale groups where they are its models",
    "arithmetic_table2_generation_change": "The paper's Table 2: PAR and step following at the "
    "shortest and the longest procedure, and their difference, per model",
    "arithmetic_table3_accuracy": "The paper's Table 3: FAA with its 95% interval, CAA, their "
    "gap and PAR per model",
    "arithmetic_table4_output_statistics": "The paper's Table 4: median, standard deviation, "
    "minimum and maximum of the expected outputs per task variant, under both references",
    "arithmetic_fig2_faa_by_horizon": "FAA with its interval, CAA, their gap and PAR per model "
    "and number of steps (the data of Figures 2, 3 and 19)",
    "arithmetic_faa_by_factor_and_horizon": "FAA per level of look-back, input range, data type "
    "and operation and number of steps, per model and pooled (the data of Figures 4-6)",
    "arithmetic_faa_by_factor": "FAA per level of each factor over all steps, per model and "
    "pooled, with 95% intervals",
    "arithmetic_answer_position": "Answer position (AP) per model: the mean (the paper's AP), "
    "quartiles and the outputs with an answer (the data of Figure 7)",
    "arithmetic_expected_magnitude": "Median |expected output| of correctly and incorrectly "
    "answered items per number of steps, by input range, data type, operation and model "
    "(the data of Figures 10-15)",
    "arithmetic_references": "FAA and CAA per model against both references (the paper's "
    "executor and ours, IEEE) and under both first-answer rules (ours)",
    "arithmetic_references_by_dataset": "Per dataset: items, items that divide by zero and "
    "items whose two references differ (ours)",
}
"""Each table's caption in the report (and in its LaTeX file); heatmaps' are made per factor."""


LONG_FORM = frozenset(
    {
        "arithmetic_fig2_faa_by_horizon",
        "arithmetic_faa_by_factor_and_horizon",
        "arithmetic_expected_magnitude",
        "arithmetic_references_by_dataset",
    }
)
"""Tables the page links without printing their rows: the data of figures (and the check per
dataset), summarized by Table 3, the factor table and the figures drawn from them."""


def _tables(outputs: Outputs, rows, stimulus_set, folder: Path, options: ArithmeticOptions) -> None:
    """The paper's Tables 1-4."""
    import pandas as pd

    boot = _bootstrap(options)
    other = "ieee" if options.reference == "paper" else "paper"
    statistics = pd.concat(
        [
            output_statistics(stimulus_set, options.reference),
            output_statistics(stimulus_set, other),
        ],
        ignore_index=True,
    )
    paper_tables = (
        ("arithmetic_table1_models", models_table(rows)),
        ("arithmetic_table2_generation_change", generation_change(rows)),
        ("arithmetic_table3_accuracy", accuracy_table(rows, **boot)),
        ("arithmetic_table4_output_statistics", statistics),
    )
    for stem, table in paper_tables:
        _write(outputs, table, folder, stem, latex=True)


def _reference_tables(outputs: Outputs, rows, stimulus_set, folder: Path) -> None:
    """Ours: both references, after the paper's tables and figures."""
    _write(outputs, reference_table(rows), folder, "arithmetic_references", latex=True)
    references = set_references(stimulus_set)
    _write(outputs, references, folder, "arithmetic_references_by_dataset")


def _write(
    outputs: Outputs,
    table: pd.DataFrame,
    folder: Path,
    stem: str,
    *,
    latex: bool = False,
    title: str | None = None,
) -> None:
    """Write ``table`` (CSV, and LaTeX where asked) and record it with its caption."""
    title = title or TITLES[stem]
    paths = write_table(table, folder / stem, latex=latex, title=title)
    outputs.table(table, paths, title, shown=stem not in LONG_FORM)


def _figures(outputs: Outputs, rows, folder: Path, options: ArithmeticOptions) -> None:
    """Figures 2-7, 10-17 and 19, each after the table of its data."""
    boot = _bootstrap(options)
    horizons = horizon_table(rows, **boot)
    _write(outputs, horizons, folder, "arithmetic_fig2_faa_by_horizon")
    outputs.figures_saved(figures.plot_faa_by_horizon(horizons, folder))
    outputs.figures_saved(figures.plot_faa_vs_caa(accuracy_table(rows, **boot), folder))
    outputs.figures_saved(figures.plot_par_by_horizon(horizons, folder))
    by_horizon = factor_table(rows, by_horizon=True, **boot)
    _write(outputs, by_horizon, folder, "arithmetic_faa_by_factor_and_horizon")
    _write(outputs, factor_table(rows, **boot), folder, "arithmetic_faa_by_factor")
    for factors, name, title in FACTOR_FIGURES:
        outputs.figures_saved(
            figures.plot_factor_by_horizon(by_horizon, factors, folder, name, title)
        )
        outputs.figures_saved(
            figures.plot_factor_per_model(
                by_horizon,
                factors[0],
                folder,
                f"{name}_per_model",
                f"{title.split(':')[0]}, per model",
            )
        )
    _write(outputs, answer_position_table(rows), folder, "arithmetic_answer_position")
    outputs.figures_saved(figures.plot_answer_positions(rows, folder))
    _magnitude_figures(outputs, rows, folder)
    for factor, number, what in (("input_range", 16, "input range"), ("lookback", 17, "look-back")):
        wide = heatmap_table(rows, factor)
        if wide.empty:
            continue  # no dataset of the set varies this factor (no mixed datasets: no look-back)
        name = f"arithmetic_fig{number}_heatmap_{factor}"
        title = f"FAA (%) per model and {what} (the data of Figure {number})"
        _write(outputs, wide, folder, name, title=title)
        outputs.figures_saved(
            figures.plot_heatmap(
                wide, folder, name, f"Figure {number}: FAA per model and {what}", factor
            )
        )


def _magnitude_figures(outputs: Outputs, rows, folder: Path) -> None:
    import pandas as pd

    tables = []
    for factor, stem, title in MAGNITUDE_FIGURES:
        table = magnitude_table(factor_rows(rows, factor), [factor])
        tables.append(table.rename(columns={factor: "level"}).assign(by=factor))
        outputs.figures_saved(figures.plot_magnitudes(table, factor, folder, stem, title))
    per_model = magnitude_table(rows, ["model"])
    tables.append(per_model.rename(columns={"model": "level"}).assign(by="model"))
    models = sorted(set(rows["model"]))
    size = figures.MODELS_PER_PAGE
    for page, start in enumerate(range(0, len(models), size)):
        number = 13 + page
        stem = (
            f"arithmetic_fig{number}_magnitude_models"
            if number <= 15
            else (f"arithmetic_fig15_magnitude_models_p{page + 1}")
        )
        title = f"Figure {min(number, 15)}: per model ({start + 1}-{start + size})"
        outputs.figures_saved(
            figures.plot_magnitudes(
                per_model, "model", folder, stem, title, models[start : start + size]
            )
        )
    long = pd.concat(tables, ignore_index=True)
    long = long[["by", "level", "horizon", "correct", "n", "median_magnitude"]]
    _write(outputs, long, folder, "arithmetic_expected_magnitude")


arithmetic_section = written_paths(arithmetic_outputs)
