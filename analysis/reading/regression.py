"""The baseline and full regressions of log reading time, by lme4 or by statsmodels.

Baseline: ``log_rt ~ length + log_frequency + position`` and the spillover copies of length and
log frequency (previous one and two words). Full: the same plus surprisal and its spillover.
Predictors are centred. Engines:

- ``lme4`` (with R): ``lmer`` by maximum likelihood with crossed random intercepts for
  participants and items and the random slopes ``random`` (:data:`RandomChoice`, the CLI's
  ``--random``) chooses, uncorrelated (``||``). Intervals: Wald, estimate ± 1.96 SE.
- ``statsmodels`` (the declared fallback without R): OLS with participant fixed effects and
  standard errors clustered two ways, by participant and by item (Cameron, Gelbach & Miller
  2011; each at least the one-way clustered ones), which stands in for the random item
  intercepts and the by-participant slope.

**Random effects.** The project's rule (:mod:`tracktale.analysis.stats.random_structure`) starts
from the maximal structure: a slope, by participant and by item, for every term that varies
within them. Every word predictor here varies within both (about nine slopes per grouping with
spillover), which is not fittable on a corpus of 850,000 reading times. The declared choices:

- ``surprisal`` (the default): by-participant and by-item slopes of the model's own surprisal
  term, the term whose slope and interval are reported (Barr et al. 2013: the slopes of the
  effect tested are the ones a confirmatory test needs), uncorrelated. When the fit is singular
  or does not converge it follows the ladder (``ladder.R``, from its second step): drop the
  slopes whose SD is below :data:`LMER_NEAR_ZERO` of the residual SD, then drop slopes one at a
  time by likelihood-ratio test while p > 0.2
  (:data:`~tracktale.analysis.stats.random_structure.LADDER_ALPHA`, ``ladder.R``'s default) or
  the fit still fails; every fit is a step.
- ``surprisal-spillover``: the same with slopes of the spillover copies too, along the same
  ladder (six slopes with two lags; on a simulated 60,000 RTs about ten times the time of
  ``participant-slope``).
- ``participant-slope``: the by-participant slope of the model's own surprisal term only, as
  given (the structure before the choice existed).
- ``intercepts``: crossed random intercepts only, as given.

The baseline has no surprisal term, so under every choice it gets the random intercepts alone:
the same random part minus the slopes of terms it lacks (a random slope without its fixed
effect would force the slopes' mean to zero). The ΔLL does not come from these fits: it is
cross-validated by :mod:`tracktale.analysis.reading.deltall` with participant intercepts in both
models, so the two models it compares always have the same random part.

With one participant (a by-word table of mean reading times, such as Natural Stories' per-word
summary), there is no participant variance to model: lme4 keeps the item grouping only (its
intercepts, and under ``surprisal`` its slopes) and statsmodels clusters by item only.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from tracktale.analysis.reading.predictors import WORD_PREDICTORS
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

Engine = Literal["auto", "lme4", "statsmodels"]
RandomChoice = Literal["surprisal", "surprisal-spillover", "participant-slope", "intercepts"]
"""The lmer models' random slopes (see the module's docstring)."""
RANDOM_CHOICES: tuple[str, ...] = get_args(RandomChoice)
LMER_NEAR_ZERO = 1e-4
"""Ladder step 2: a slope whose SD is below this share of the residual SD counts as zero (lme4's
``isSingular`` tolerance on the same relative SD, so these are the slopes that made it singular)."""
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
        random: The fitted random part (lme4), else ``""``.
        steps: Every lmer fit made for the model: ``step``, ``action``, ``reason``,
            ``formula``, ``singular``, ``converged``, ``logLik``, ``npar``, ``error`` (lme4).
    """

    name: str
    engine: str
    fixed: pd.DataFrame
    note: str = ""
    random: str = ""
    steps: pd.DataFrame | None = None


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
    data: pd.DataFrame,
    models: dict[str, list[str]],
    engine: Literal["lme4", "statsmodels"],
    random: RandomChoice = "surprisal",
) -> dict[str, Fit]:
    """Fit each named model (name -> its predictors) with the random slopes ``random`` gives."""
    terms = list(dict.fromkeys(term for model in models.values() for term in model))
    frame = centred(data, terms)
    if engine == "lme4":
        return _lmer(frame, models, random)
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


def tested_terms(terms: list[str]) -> list[str]:
    """A model's surprisal terms (``surprisal_*`` and its spillover copies), its own first."""
    surprisal = [term for term in terms if term.startswith("surprisal_")]
    return sorted(surprisal, key=lambda term: term.count("_"))


def random_slopes(
    terms: list[str], random: RandomChoice, participants: bool = True
) -> dict[str, list[str]]:
    """Grouping -> its random slopes under ``random`` (the groupings' intercepts are implied).

    ``participants=False`` (one participant): the item grouping alone.
    """
    tested = tested_terms(terms)
    groups = ("participant", "item") if participants else ("item",)
    if random == "surprisal":
        return {group: tested[:1] for group in groups}
    if random == "surprisal-spillover":
        return {group: list(tested) for group in groups}
    if random == "participant-slope":
        return {group: tested[:1] if group == "participant" else [] for group in groups}
    return {group: [] for group in groups}


def lmer_formula(terms: list[str], slopes: dict[str, list[str]]) -> str:
    """The lme4 formula of a model with uncorrelated ``slopes`` (grouping -> terms)."""
    from tracktale.analysis.stats.random_structure import random_part

    return f"log_rt ~ {' + '.join(terms)} + {random_part(slopes, correlated=False)}"


def _lmer(
    frame: pd.DataFrame, models: dict[str, list[str]], random: RandomChoice
) -> dict[str, Fit]:
    import pandas as pd

    from tracktale.analysis.stats.lme4 import run_rscript

    several = frame["participant"].nunique() > 1
    slopes = {name: random_slopes(terms, random, several) for name, terms in models.items()}
    structure = [
        {"model": key, "group": group, "term": term}
        for key, by_group in zip(_keys(models), slopes.values(), strict=True)
        for group, terms in by_group.items()
        for term in (terms or [""])
    ]
    spec = pd.DataFrame(
        {
            "model": _keys(models),
            "fixed": [f"log_rt ~ {' + '.join(terms)}" for terms in models.values()],
            "ladder": random in ("surprisal", "surprisal-spillover"),
            "near_zero": LMER_NEAR_ZERO,
        }
    )
    fits = {}
    with tempfile.TemporaryDirectory(prefix="tracktale-lmer-") as work:
        folder = Path(work)
        frame.to_csv(folder / "data.csv", index=False)
        spec.to_csv(folder / "spec.csv", index=False)
        pd.DataFrame(structure).to_csv(folder / "structure.csv", index=False)
        files = [str(folder / name) for name in ("data.csv", "spec.csv", "structure.csv")]
        run_rscript("lmer.R", [*files, work], 3600, "lmer")
        for key, name in zip(_keys(models), models, strict=True):
            fits[name] = _read_lmer(folder, key, name, lmer_formula(models[name], slopes[name]))
    return fits


def _keys(models: dict[str, list[str]]) -> list[str]:
    """File-safe names of the models (``m0``, ``m1``, ...)."""
    return [f"m{index}" for index in range(len(models))]


def _read_lmer(folder: Path, key: str, name: str, declared: str) -> Fit:
    import pandas as pd

    info_table = pd.read_csv(folder / f"info_{key}.csv", keep_default_na=False)
    info = dict(zip(info_table["key"], info_table["value"].astype(str), strict=True))
    if info.get("error"):
        raise TracktaleError(f"lmer failed for {declared!r}: {info['error']}")
    steps = pd.read_csv(folder / f"steps_{key}.csv", keep_default_na=False)
    fixed = pd.read_csv(folder / f"fixed_{key}.csv")
    fixed = fixed[fixed["term"] != "(Intercept)"]
    singular = "singular fit; " if info.get("singular") == "TRUE" else ""
    random = random_of(info["formula"])
    return Fit(name, "lme4", _with_interval(fixed), singular + info["messages"], random, steps)


def random_of(formula: str) -> str:
    """The random part of an lmer formula (every model here has one: the item intercepts)."""
    return formula[formula.index(" + (") + 3 :] if " + (" in formula else ""
