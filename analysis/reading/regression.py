"""The baseline and full regressions of log reading time, by lme4 or by statsmodels.

Baseline: ``log_rt ~ length + log_frequency + position`` and the spillover copies of length and
log frequency (previous one and two words). Full: the same plus surprisal and its spillover.
Predictors are centred. Engines:

- ``lme4`` (with R): ``lmer`` by maximum likelihood with random intercepts for participants and
  items and an uncorrelated by-participant surprisal slope in the full model (people differ in
  how much surprisal slows them; without the slope the surprisal interval is too narrow).
  Intervals: Wald, estimate ± 1.96 SE.
- ``statsmodels`` (the declared fallback without R): OLS with participant fixed effects and
  standard errors clustered two ways, by participant and by item (Cameron, Gelbach & Miller
  2011; each at least the one-way clustered ones), which stands in for the random item
  intercepts and the by-participant slope.

With one participant (a by-word table of mean reading times, such as Natural Stories' per-word
summary), there is no participant variance to model: lme4 keeps the item intercepts only and
statsmodels clusters by item only.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tracktale.analysis.reading.predictors import WORD_PREDICTORS
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

Engine = Literal["auto", "lme4", "statsmodels"]
Z95 = 1.959963984540054


def baseline_terms(spillover: int) -> list[str]:
    """The baseline's predictors."""
    lagged = [f"{name}_{lag}" for lag in range(1, spillover + 1) for name in WORD_PREDICTORS]
    return [*WORD_PREDICTORS, "position", *lagged]


def surprisal_terms(column: str, spillover: int) -> list[str]:
    """A model's surprisal column and its spillover copies."""
    return [column, *(f"{column}_{lag}" for lag in range(1, spillover + 1))]


def resolve_engine(engine: Engine) -> Literal["lme4", "statsmodels"]:
    """``auto`` is lme4 where R and lme4 can be run, else statsmodels."""
    from tracktale.analysis.stats.lme4 import lme4_available

    if engine == "auto":
        return "lme4" if lme4_available() else "statsmodels"
    return engine


@dataclass(frozen=True)
class Fit:
    """One regression's fixed effects.

    Attributes:
        name: ``baseline`` or the surprisal column's name.
        engine: ``lme4`` or ``statsmodels``.
        fixed: ``term``, ``estimate``, ``se``, ``ci_low``, ``ci_high``.
        note: Singular fit or convergence messages (lme4), else ``""``.
    """

    name: str
    engine: str
    fixed: pd.DataFrame
    note: str = ""


def centred(data: pd.DataFrame, terms: list[str]) -> pd.DataFrame:
    """``participant``, ``item``, ``log_rt`` and the centred ``terms``."""
    import numpy as np

    out = data[["participant", "item"]].copy()
    out["log_rt"] = np.log(data["rt_ms"].to_numpy(float))
    for term in terms:
        values = data[term].to_numpy(float)
        out[term] = values - values.mean()
    return out


def fit_models(
    data: pd.DataFrame, models: dict[str, list[str]], engine: Literal["lme4", "statsmodels"]
) -> dict[str, Fit]:
    """Fit each named model (name -> its predictors; names with ``surprisal`` get the slope)."""
    terms = list(dict.fromkeys(term for model in models.values() for term in model))
    frame = centred(data, terms)
    if engine == "lme4":
        return _lmer(frame, models)
    return {name: _ols(frame, name, model) for name, model in models.items()}


def _with_interval(fixed: pd.DataFrame) -> pd.DataFrame:
    fixed["ci_low"] = fixed["estimate"] - Z95 * fixed["se"]
    fixed["ci_high"] = fixed["estimate"] + Z95 * fixed["se"]
    return fixed[["term", "estimate", "se", "ci_low", "ci_high"]].reset_index(drop=True)


def _ols(frame: pd.DataFrame, name: str, terms: list[str]) -> Fit:
    import numpy as np
    import pandas as pd
    import statsmodels.api as sm

    participants = pd.Categorical(frame["participant"])
    dummies = np.eye(len(participants.categories))[participants.codes]
    design = np.column_stack([frame[terms].to_numpy(float), dummies])
    items = pd.Categorical(frame["item"]).codes
    model = sm.OLS(frame["log_rt"].to_numpy(float), design)
    variances = []
    clusterings = [np.column_stack([participants.codes, items]), participants.codes, items]
    if len(participants.categories) == 1:
        clusterings = [items]  # one cluster has no between-cluster variance to estimate
    for groups in clusterings:
        result = model.fit(cov_type="cluster", cov_kwds={"groups": groups})
        variances.append(np.diag(result.cov_params())[: len(terms)])
    # The two-way variance (V_p + V_i - V_pi) can come out negative; no SE is allowed below
    # either one-way clustered one.
    se = np.sqrt(np.maximum.reduce(variances))
    fixed = pd.DataFrame({"term": terms, "estimate": result.params[: len(terms)], "se": se})
    return Fit(name, "statsmodels", _with_interval(fixed))


def lmer_formula(terms: list[str], slope: str | None, participants: bool = True) -> str:
    """The lme4 formula of a model (an uncorrelated by-participant ``slope`` if given).

    ``participants=False`` (one participant): the item intercepts alone.
    """
    participant = f"(1 + {slope} || participant)" if slope else "(1 | participant)"
    random = f"{participant} + (1 | item)" if participants else "(1 | item)"
    return f"log_rt ~ {' + '.join(terms)} + {random}"


def _lmer(frame: pd.DataFrame, models: dict[str, list[str]]) -> dict[str, Fit]:
    import pandas as pd

    from tracktale.analysis.stats.lme4 import run_rscript

    several = frame["participant"].nunique() > 1
    formulas = {name: lmer_formula(terms, _slope(terms), several) for name, terms in models.items()}
    fits = {}
    with tempfile.TemporaryDirectory(prefix="tracktale-lmer-") as work:
        folder = Path(work)
        frame.to_csv(folder / "data.csv", index=False)
        spec = pd.DataFrame({"model": list(formulas), "formula": list(formulas.values())})
        spec.to_csv(folder / "spec.csv", index=False)
        arguments = [str(folder / "data.csv"), str(folder / "spec.csv"), work]
        run_rscript("lmer.R", arguments, 1800, "lmer")
        for name in formulas:
            info_table = pd.read_csv(folder / f"info_{name}.csv", keep_default_na=False)
            info = dict(zip(info_table["key"], info_table["value"].astype(str), strict=True))
            if info.get("error"):
                raise TracktaleError(f"lmer failed for {formulas[name]!r}: {info['error']}")
            fixed = pd.read_csv(folder / f"fixed_{name}.csv")
            fixed = fixed[fixed["term"] != "(Intercept)"]
            singular = "singular fit; " if info.get("singular") == "TRUE" else ""
            fits[name] = Fit(name, "lme4", _with_interval(fixed), singular + info["messages"])
    return fits


def _slope(terms: list[str]) -> str | None:
    """The model's own surprisal term (the first ``surprisal_*`` without a spillover lag)."""
    for term in terms:
        if term.startswith("surprisal_") and term.count("_") == 1:
            return term
    return None
