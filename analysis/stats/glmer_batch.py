"""Many ``glmer`` fits for simulations (power, null calibration), in parallel R processes.

Starting R and loading lme4 costs about a second, as much as a fit, so simulated data sets go to
R in chunks: each chunk is one ``Rscript glmer_sims.R`` process that fits every model to every
data set of the chunk and reports each finished data set on stdout. ``workers`` processes run at
once (one per core). The first data set is fitted alone first, so the caller can say how long
the whole run will take before committing to it.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from tracktale.analysis.stats.lme4 import _require_lme4, fixed_layout_prefix, r_error_message
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ("sim", "agent", "item_id")


@dataclass(frozen=True)
class BatchEstimate:
    """How long a batch of glmer fits should take, from a first data set fitted alone.

    Attributes:
        seconds_per_set: Wall-clock seconds R needed for one data set (all its models).
        startup_seconds: Seconds to start R and load lme4.
        total_seconds: The estimate for the whole batch on ``workers`` processes.
    """

    seconds_per_set: float
    startup_seconds: float
    total_seconds: float


def _chunks(sims: Sequence[int], workers: int, per_chunk: int | None) -> list[list[int]]:
    if per_chunk is None:
        # A few chunks per worker balance the load; big chunks save R start-ups.
        per_chunk = max(1, min(50, -(-len(sims) // (4 * workers))))
    return [list(sims[i : i + per_chunk]) for i in range(0, len(sims), per_chunk)]


def _run_chunk(
    data: pd.DataFrame,
    formulas: dict[str, str],
    work: Path,
    name: str,
    on_done: Callable[[float], None],
    timeout: float,
    structure: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, float]:
    """One R process over the data sets in ``data``; returns its rows and wall seconds.

    With ``structure`` (``model``, ``group``, ``term``: the maximal random slopes) the
    formulas are fixed parts and every model is fitted along the random-effects ladder
    (``glmer_sims.R`` with a structure file); without, as given.
    """
    import pandas as pd

    rscript = _require_lme4()
    data_path, spec_path, out_path = (work / f"{name}.{k}.csv" for k in ("data", "spec", "out"))
    data.to_csv(data_path, index=False)
    pd.DataFrame({"model": list(formulas), "formula": list(formulas.values())}).to_csv(
        spec_path, index=False
    )
    extra: list[str] = []
    if structure is not None:
        structure_path = work / f"{name}.structure.csv"
        structure.to_csv(structure_path, index=False)
        extra = [str(structure_path)]
    source = resources.files("tracktale.analysis.stats").joinpath("glmer_sims.R")
    started = time.perf_counter()
    with resources.as_file(source) as script:
        process = subprocess.Popen(
            [
                *fixed_layout_prefix(),
                *(rscript, "--vanilla", str(script), str(data_path), str(spec_path)),
                str(out_path),
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        timer = threading.Timer(timeout, process.kill)
        timer.start()
        try:
            assert process.stdout is not None
            for line in process.stdout:
                if line.startswith("done "):
                    on_done(float(line.split()[2]))
            stderr = process.stderr.read() if process.stderr else ""
            returncode = process.wait()
        finally:
            timer.cancel()
    if returncode != 0:
        raise TracktaleError(f"glmer (simulations) failed: {r_error_message(stderr, returncode)}")
    return pd.read_csv(out_path, keep_default_na=True), time.perf_counter() - started


def estimate_batch(
    first: pd.DataFrame, formulas: dict[str, str], n_sets: int, workers: int = 2
) -> tuple[BatchEstimate, pd.DataFrame]:
    """Fit one data set alone and extrapolate to ``n_sets`` on ``workers`` processes.

    Returns:
        The estimate, and the first data set's results (so its fit is not wasted).
    """
    fitting: list[float] = []
    with tempfile.TemporaryDirectory(prefix="tracktale-glmer-") as work:
        rows, seconds = _run_chunk(first, formulas, Path(work), "pilot", fitting.append, 900)
    per_set = max(sum(fitting), 1e-3)
    startup = max(seconds - per_set, 0.0)
    chunks = len(_chunks(list(range(max(n_sets - 1, 0))), workers, None))
    total = seconds + (per_set * max(n_sets - 1, 0) + startup * chunks) / max(workers, 1)
    return BatchEstimate(per_set, startup, total), rows


def fit_batch(
    data: pd.DataFrame,
    formulas: dict[str, str],
    *,
    workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
    per_chunk: int | None = None,
    timeout: float = 3600,
    structure: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Fit every model in ``formulas`` to every data set in ``data``.

    Args:
        data: The data sets stacked, with an integer ``sim`` column, ``agent``, ``item_id``,
            ``correct`` and the predictors the formulas name.
        formulas: Model name -> lme4 formula.
        workers: R processes at once.
        progress: Called with (done, total) data sets as they finish (from worker threads,
            one call at a time).
        per_chunk: Data sets per R process (default: a few chunks per worker, at most 50).
        timeout: Seconds before one R process is stopped.
        structure: ``model``, ``group``, ``term``: fit every model along the random-effects
            ladder from these maximal slopes (``formulas`` are then the fixed parts); the
            rows also get ``converged``, ``steps`` and the final ``formula``.

    Returns:
        One row per (sim, model, term): ``estimate``, ``se``, ``z``, ``p``, ``logLik``,
        ``npar``, ``singular``, ``warning``, ``error``.

    Raises:
        TracktaleError: For missing columns, missing R/lme4, or an R process that fails.
    """
    import pandas as pd

    for column in COLUMNS:
        if column not in data.columns:
            raise TracktaleError(f"glmer simulations need a {column!r} column")
    sims = list(dict.fromkeys(data["sim"]))
    chunks = _chunks(sims, workers, per_chunk)
    lock = threading.Lock()
    done = [0]

    def finished(_seconds: float) -> None:
        with lock:
            done[0] += 1
            if progress:
                progress(done[0], len(sims))

    groups = dict(tuple(data.groupby("sim", sort=False)))
    with (
        tempfile.TemporaryDirectory(prefix="tracktale-glmer-") as work,
        ThreadPoolExecutor(max_workers=max(1, workers)) as pool,
    ):
        futures = [
            pool.submit(
                _run_chunk,
                pd.concat([groups[s] for s in chunk], ignore_index=True),
                formulas,
                Path(work),
                f"chunk{index}",
                finished,
                timeout,
                structure,
            )
            for index, chunk in enumerate(chunks)
        ]
        parts = [future.result()[0] for future in futures]
    return pd.concat(parts, ignore_index=True)
