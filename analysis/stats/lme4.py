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
import platform
import shutil
import subprocess
import sys
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
    """What ``glmer`` returned for one model.

    Attributes:
        fixed: ``term``, ``estimate``, ``se``, ``z``, ``p`` (Wald), one row per fixed effect.
        random: lme4's ``VarCorr`` as a table (``grp``, ``var1``, ``var2``, ``vcov``, ``sdcor``).
        info: lme4 and R versions, logLik, AIC, BIC, npar, n_obs, singular fit, warnings.
        vcov: The fixed effects' covariance matrix (terms x terms, R's term names).
    """

    fixed: pd.DataFrame
    random: pd.DataFrame
    info: dict[str, str] = field(default_factory=dict)
    vcov: pd.DataFrame | None = None


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


def _require_lme4() -> str:
    rscript = rscript_path()
    if rscript is None or not _lme4_installed(rscript):
        raise TracktaleError(
            "lme4 is not available: install R and lme4 (Debian: r-base-core r-cran-lme4) "
            f"or set {RSCRIPT_ENV}; or use --engine statsmodels"
        )
    return rscript


def r_error_message(stderr: str, returncode: int) -> str:
    """R's own error message from its stderr (not the closing "Execution halted").

    R prints ``Error in f(...) : message`` (or ``Error: message``), possibly over several
    lines, then ``Calls: ...`` and ``Execution halted``; warnings come after "In addition".
    """
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Error")]
    if not starts:
        kept = [line.strip() for line in lines if line.strip() and line != "Execution halted"]
        return kept[-1] if kept else f"exit status {returncode}"
    message = []
    for line in lines[starts[0] :]:
        if line.startswith(("Calls:", "Execution halted", "In addition:")):
            break
        message.append(line.strip())
    return " ".join(part for part in message if part)


@functools.cache
def fixed_layout_prefix() -> tuple[str, ...]:
    """What to run R under so that the same data give the same fit, to the last digit.

    lme4's numerics depend on where in memory R's arrays land (vectorised sums start at the
    first aligned element), so with address-space randomisation the same data gave fits that
    differed in the 7th digit from one run to the next, and a report's mixed-model tables with
    them. ``setarch ARCH -R`` runs R with randomisation off; where there is no ``setarch`` or
    it may not change the personality (some sandboxes), R runs as it is.
    """
    setarch = shutil.which("setarch")
    if setarch is None or not sys.platform.startswith("linux"):
        return ()
    prefix = (setarch, platform.machine(), "-R")
    try:
        works = subprocess.run([*prefix, "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        works = False
    return prefix if works else ()


def run_rscript(script: str, arguments: list[str], timeout: float, what: str) -> str:
    """Run one of the package's R scripts; return its stdout.

    Raises:
        TracktaleError: When R or lme4 is missing, R times out, or R fails (with R's message).
    """
    rscript = _require_lme4()
    source = resources.files("tracktale.analysis.stats").joinpath(script)
    with resources.as_file(source) as script_path:
        try:
            completed = subprocess.run(
                [*fixed_layout_prefix(), rscript, "--vanilla", str(script_path), *arguments],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise TracktaleError(f"{what} did not finish within {timeout:g} s") from None
    if completed.returncode != 0:
        message = r_error_message(completed.stderr, completed.returncode)
        raise TracktaleError(f"{what} failed: {message}")
    return completed.stdout


def fit_glmer_models(
    data: pd.DataFrame, formulas: dict[str, str], timeout: float = 900
) -> dict[str, GlmerFit | str]:
    """Fit several binomial ``glmer`` models to the same rows in one R process.

    Args:
        data: Complete rows with every variable of the formulas; ``agent`` and ``item_id``
            are turned into factors on the R side.
        formulas: Model name (letters, digits, ``_``) -> lme4 formula.
        timeout: Seconds before the R process is stopped.

    Returns:
        Model name -> its fit, or R's error message (text) where that model failed.

    Raises:
        TracktaleError: When R or lme4 is missing, or R fails as a whole.
    """
    import pandas as pd

    with tempfile.TemporaryDirectory(prefix="tracktale-glmer-") as work:
        folder = Path(work)
        data.to_csv(folder / "data.csv", index=False)
        spec = pd.DataFrame({"model": list(formulas), "formula": list(formulas.values())})
        spec.to_csv(folder / "spec.csv", index=False)
        arguments = [str(folder / "data.csv"), str(folder / "spec.csv"), work]
        run_rscript("glmer.R", arguments, timeout, "glmer")
        fits: dict[str, GlmerFit | str] = {}
        for name in formulas:
            info_table = pd.read_csv(folder / f"info_{name}.csv", keep_default_na=False)
            info = dict(zip(info_table["key"], info_table["value"].astype(str), strict=True))
            if info.get("error"):
                fits[name] = info["error"]
                continue
            fits[name] = GlmerFit(
                fixed=pd.read_csv(folder / f"fixed_{name}.csv"),
                random=pd.read_csv(folder / f"random_{name}.csv"),
                info=info,
                vcov=pd.read_csv(folder / f"vcov_{name}.csv", index_col=0),
            )
    return fits


def fit_glmer(data: pd.DataFrame, formula: str, timeout: float = 900) -> GlmerFit:
    """Fit one binomial ``glmer`` in a separate R process.

    Args:
        data: Complete rows with every variable of ``formula``.
        formula: An lme4 formula, e.g. ``correct ~ complexity_z * task_s + (1 | agent)``.
        timeout: Seconds before the R process is stopped.

    Returns:
        The fixed effects, the random-effect variances and fit information.

    Raises:
        TracktaleError: When R or lme4 is missing, or the fit fails (with R's message).
    """
    fit = fit_glmer_models(data, {"model": formula}, timeout)["model"]
    if isinstance(fit, str):
        raise TracktaleError(f"glmer failed for {formula!r}: {fit}")
    return fit
