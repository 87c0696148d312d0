"""A thin bridge to R's lme4: fit ``glmer`` by running ``Rscript`` on a CSV file.

Why ``Rscript`` and not pymer4 (both were tried on Debian 12, R 4.2.2, lme4 1.1-31):

- pymer4 0.9.2 embeds R through rpy2. rpy2 3.6 fails to load against R 4.2 (``undefined symbol:
  R_getVar``), so it needs pinning to 3.5; pymer4 does not declare rpy2, polars or joblib as
  dependencies at all.
- pymer4 imports a dozen R packages when it is imported (broom, broom.mixed, emmeans, lmerTest,
  insight, parameters, performance, report, ...); ``report`` is not packaged by Debian, so
  ``import pymer4`` fails on a system set up from Debian packages alone.
- Embedded R runs inside the Python process: an R crash or a hung optimiser takes the analysis
  down with it, and R's global state leaks between fits.

``Rscript`` needs only ``r-base-core`` and ``r-cran-lme4``, runs each fit in its own process with
a timeout, and exchanges plain CSV files, so the bridge is a few lines that are easy to test.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

RSCRIPT_ENV = "TRACKTALE_RSCRIPT"
"""Environment variable naming the ``Rscript`` to use (default: the one on ``PATH``)."""


@dataclass(frozen=True)
class GlmerFit:
    """What ``glmer`` returned.

    Attributes:
        fixed: ``term``, ``estimate``, ``se``, ``z``, ``p`` (Wald), one row per fixed effect.
        random: lme4's ``VarCorr`` as a table (``grp``, ``var1``, ``var2``, ``vcov``, ``sdcor``).
        info: lme4 and R versions, logLik, AIC, BIC, n_obs, singular fit, warnings.
    """

    fixed: pd.DataFrame
    random: pd.DataFrame
    info: dict[str, str] = field(default_factory=dict)


def rscript_path() -> str | None:
    """The ``Rscript`` executable to use, or ``None`` when there is none."""
    configured = os.environ.get(RSCRIPT_ENV)
    if configured:
        return configured if Path(configured).is_file() else None
    return shutil.which("Rscript")


@functools.cache
def _lme4_installed(rscript: str) -> bool:
    check = 'quit(status = !requireNamespace("lme4", quietly = TRUE))'
    try:
        completed = subprocess.run(
            [rscript, "--vanilla", "-e", check],
            capture_output=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return completed.returncode == 0


def lme4_available() -> bool:
    """Whether R and its lme4 package can be run here."""
    rscript = rscript_path()
    return rscript is not None and _lme4_installed(rscript)


def fit_glmer(data: pd.DataFrame, formula: str, timeout: float = 900) -> GlmerFit:
    """Fit a binomial ``glmer`` in a separate R process.

    Args:
        data: Complete rows with every variable of ``formula``; ``agent`` and ``item_id`` are
            turned into factors on the R side.
        formula: An lme4 formula, e.g. ``correct ~ complexity_z * task_s + (1 | agent)``.
        timeout: Seconds before the R process is stopped.

    Returns:
        The fixed effects, the random-effect variances and fit information.

    Raises:
        TracktaleError: When R or lme4 is missing, or R fails (with its last error line).
    """
    import pandas as pd

    rscript = rscript_path()
    if rscript is None or not _lme4_installed(rscript):
        raise TracktaleError(
            "lme4 is not available: install R and lme4 (Debian: r-base-core r-cran-lme4) "
            f"or set {RSCRIPT_ENV}; or use --engine statsmodels"
        )
    script = resources.files("tracktale.analysis").joinpath("glmer.R")
    with (
        tempfile.TemporaryDirectory(prefix="tracktale-glmer-") as work,
        resources.as_file(script) as script_path,
    ):
        data_path = Path(work) / "data.csv"
        data.to_csv(data_path, index=False)
        try:
            completed = subprocess.run(
                [rscript, "--vanilla", str(script_path), str(data_path), formula, work],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise TracktaleError(f"glmer did not finish within {timeout:g} s") from None
        if completed.returncode != 0:
            lines = [line for line in completed.stderr.splitlines() if line.strip()]
            last = lines[-1] if lines else f"exit status {completed.returncode}"
            raise TracktaleError(f"glmer failed for {formula!r}: {last}")
        fixed = pd.read_csv(Path(work) / "fixed.csv")
        random = pd.read_csv(Path(work) / "random.csv")
        info_table = pd.read_csv(Path(work) / "info.csv", keep_default_na=False)
    info = dict(zip(info_table["key"], info_table["value"].astype(str), strict=True))
    return GlmerFit(fixed=fixed, random=random, info=info)
