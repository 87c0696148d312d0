"""Logistic mixed models: random intercepts for participants and items (and slopes).

The same model is fitted by one of two engines:

- ``statsmodels``: :class:`~statsmodels.genmod.bayes_mixed_glm.BinomialBayesMixedGLM` fitted by
  variational Bayes. Its random effects are independent (no correlations) and its posterior SDs
  are known to be somewhat too small, so it is a check, not what a reviewer expects. It needs
  nothing beyond Python.
- ``lme4``: ``glmer`` (Laplace approximation) in R through :mod:`tracktale.analysis.lme4`, the
  field's reference; used by ``auto`` whenever R and lme4 are installed.

Predictors are standardised (complexity and recency as z-scores; task sum-coded +-0.5) for both
engines, so their estimates are comparable. With ``slopes`` participants also get a random
complexity slope: complexity varies within participants, while each item has one complexity, so
items cannot have one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracktale.analysis.glm import coefficient_table, design_frame, task_coding_note
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

ENGINES = ("auto", "statsmodels", "lme4")


@dataclass(frozen=True)
class MixedFit:
    """A fitted logistic mixed model.

    Attributes:
        engine: ``statsmodels`` or ``lme4``.
        formula: The model in lme4 notation (also for statsmodels, for reading).
        fixed: ``term``, ``label``, ``b``, ``se``, ``z``, ``p``, ``odds_ratio``, ``or_low``,
            ``or_high`` (for statsmodels: posterior mean and SD, normal-approximation p).
        random: ``group``, ``term``, ``sd`` (and, for statsmodels, a 95% interval).
        n_obs: Trials.
        n_participants: Participants.
        n_items: Items.
        notes: Engine details, warnings and how predictors were scaled.
    """

    engine: str
    formula: str
    fixed: pd.DataFrame
    random: pd.DataFrame
    n_obs: int
    n_participants: int
    n_items: int
    notes: tuple[str, ...]

    def to_text(self) -> str:
        """A plain-text summary."""
        lines = [
            f"mixed model ({self.engine}): {self.formula}",
            f"  {self.n_obs} trials, {self.n_participants} participants, {self.n_items} items",
        ]
        for row in self.fixed.itertuples():
            lines.append(f"  {row.label:<28} b={row.b:+.3f} SE={row.se:.3f} z={row.z:+.2f}")
        for row in self.random.itertuples():
            lines.append(f"  random {row.group}: {row.term} SD={row.sd:.3f}")
        return "\n".join([*lines, *(f"  {note}" for note in self.notes)])


def mixed_frame(trials: pd.DataFrame, recency: str | None) -> pd.DataFrame:
    """The design frame with standardised predictors and ``item_id`` for the random effects."""
    frame, _ = design_frame(trials, recency=recency, extra=("item_id",))
    for name in ("complexity", *(["recency"] if recency else [])):
        centred = frame[f"{name}_c"]
        scale = centred.std()
        frame[f"{name}_z"] = centred / scale if scale > 0 else centred
    return frame


def fit_mixed(
    trials: pd.DataFrame,
    *,
    recency: str | None = None,
    engine: str = "auto",
    slopes: bool = False,
) -> MixedFit:
    """Fit the logistic mixed model to analysed human trials.

    Args:
        trials: Human trials after exclusions.
        recency: Add this recency covariate (``focus`` or ``sentences_since_focus``).
        engine: ``auto`` (lme4 when available, else statsmodels), ``statsmodels`` or ``lme4``.
        slopes: Add by-participant random slopes for complexity.

    Returns:
        The fit.

    Raises:
        TracktaleError: For an unknown engine, or ``lme4`` asked for but not available.
    """
    from tracktale.analysis.lme4 import lme4_available

    if engine not in ENGINES:
        raise TracktaleError(f"unknown mixed-model engine {engine!r} (use {', '.join(ENGINES)})")
    if engine == "auto":
        engine = "lme4" if lme4_available() else "statsmodels"
    frame = mixed_frame(trials, recency)
    both = frame["task"].nunique() == 2
    fixed = "complexity_z * task_s" if both else "complexity_z"
    if recency:
        fixed += " + recency_z"
    fit = _fit_lme4 if engine == "lme4" else _fit_statsmodels
    return fit(frame, f"correct ~ {fixed}", slopes)


def _counts(frame: pd.DataFrame) -> dict[str, int]:
    return {
        "n_obs": len(frame),
        "n_participants": int(frame["agent"].nunique()),
        "n_items": int(frame["item_id"].nunique()),
    }


def _fit_statsmodels(frame: pd.DataFrame, fixed: str, slopes: bool) -> MixedFit:
    import numpy as np
    import pandas as pd
    from scipy import stats
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    components = {"agent": "0 + C(agent)", "item_id": "0 + C(item_id)"}
    if slopes:
        components["agent:complexity_z"] = "0 + C(agent):complexity_z"
    model = BinomialBayesMixedGLM.from_formula(fixed, components, frame)
    result = model.fit_vb()
    mean = pd.Series(result.fe_mean, index=model.exog_names)
    sd = pd.Series(result.fe_sd, index=model.exog_names)
    pvalues = pd.Series(2 * stats.norm.sf(np.abs(mean / sd)), index=model.exog_names)
    table = coefficient_table(mean, sd, pvalues)
    random = pd.DataFrame(
        {
            "group": [name.split(":")[0] for name in model.vcp_names],
            "term": ["complexity_z" if ":" in name else "(Intercept)" for name in model.vcp_names],
            "sd": np.exp(result.vcp_mean),
            "sd_low": np.exp(result.vcp_mean - 1.96 * result.vcp_sd),
            "sd_high": np.exp(result.vcp_mean + 1.96 * result.vcp_sd),
        }
    )
    return MixedFit(
        engine="statsmodels",
        formula=_lme4_formula(fixed, slopes, independent=True),
        fixed=table,
        random=random,
        notes=(
            "statsmodels BinomialBayesMixedGLM, variational Bayes (posterior mean and SD; "
            "p from the normal approximation); independent random effects",
            f"complexity and recency standardised (z); {task_coding_note('sum')}",
        ),
        **_counts(frame),
    )


def _fit_lme4(frame: pd.DataFrame, fixed: str, slopes: bool) -> MixedFit:
    import pandas as pd

    from tracktale.analysis.lme4 import fit_glmer

    formula = _lme4_formula(fixed, slopes, independent=False)
    columns = [c for c in frame.columns if c in formula or c in ("agent", "item_id")]
    fit = fit_glmer(frame[columns], formula)
    terms = fit.fixed.set_index("term").rename(index=lambda t: _lme4_names(t))
    table = coefficient_table(terms["estimate"], terms["se"], terms["p"])
    table["z"] = terms["z"].to_numpy()
    vc = fit.random[fit.random["var2"].isna()] if "var2" in fit.random else fit.random
    random = pd.DataFrame(
        {"group": vc["grp"].to_numpy(), "term": vc["var1"].to_numpy(), "sd": vc["sdcor"].to_numpy()}
    )
    notes = [
        f"lme4 {fit.info.get('lme4_version', '?')} glmer (Laplace), "
        f"{fit.info.get('r_version', '')}",
        f"logLik {float(fit.info.get('logLik', math.nan)):.2f}, AIC "
        f"{float(fit.info.get('AIC', math.nan)):.2f}",
        f"complexity and recency standardised (z); {task_coding_note('sum')}",
    ]
    if fit.info.get("singular") == "TRUE":
        notes.append("singular fit: a random-effect variance is estimated at (or near) zero")
    if fit.info.get("messages"):
        notes.append(f"lme4 warnings: {fit.info['messages']}")
    return MixedFit(
        engine="lme4",
        formula=formula,
        fixed=table,
        random=random,
        notes=tuple(notes),
        **_counts(frame),
    )


def _lme4_formula(fixed: str, slopes: bool, independent: bool) -> str:
    participant = "(1 | agent)"
    if slopes:
        participant = "(1 + complexity_z || agent)" if independent else "(1 + complexity_z | agent)"
    return f"{fixed} + {participant} + (1 | item_id)"


def _lme4_names(term: str) -> str:
    """R's term names in statsmodels' spelling (``(Intercept)`` -> ``Intercept``)."""
    return "Intercept" if term == "(Intercept)" else term
