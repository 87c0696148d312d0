"""Logistic mixed models: random intercepts for participants and items (and slopes).

Model 1 is ``correct ~ complexity * task`` and model 2 adds the recency covariate, as the GLMs;
both get crossed random intercepts for participants and items. The same models are fitted by
one of two engines:

- ``lme4``: ``glmer`` (Laplace approximation) in R through :mod:`tracktale.analysis.stats.lme4`, the
  field's reference; used by ``auto`` whenever R and lme4 are installed. All models are fitted
  in one R process, with a third fit of model 1 with the other random structure (slopes when
  the models have none, none when they have them), for the likelihood-ratio tests of
  :mod:`tracktale.analysis.stats.mixed_analysis`.
- ``statsmodels``: :class:`~statsmodels.genmod.bayes_mixed_glm.BinomialBayesMixedGLM` fitted by
  variational Bayes. Its random effects are independent (no correlations), it has no
  likelihood (no LRT, AIC or BIC), and on a simulated human study its posterior SDs came out
  27% (complexity) to 42% (intercept) smaller than glmer's standard errors: every fit is
  marked ``approximate``, and the report and the CLI say so.

Predictors are standardised (complexity and recency as z-scores; task coded as ``task_coding``
says) for both engines, so their estimates are comparable. With ``slopes`` participants also
get a random complexity slope: complexity varies within participants, while each item has one
complexity, so items cannot have one. Every model is fitted to the same rows (complete in the
recency covariate), so the likelihoods are comparable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from tracktale.analysis.stats.glm import coefficient_table, design_frame, task_coding_note
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

ENGINES = ("auto", "statsmodels", "lme4")
GLMER_TESTS = ("t-bw", "z")
"""How glmer's Wald statistics are referred: ``t-bw`` (t with between-within degrees of
freedom, :func:`between_within_df`) or ``z`` (lme4's ``summary``)."""
APPROXIMATE = (
    "the mixed models are statsmodels' variational Bayes approximation (independent random "
    "effects; posterior SDs 27% (complexity) to 42% (intercept) smaller than glmer's SEs on a "
    "simulated human study), marked "
    "approximate; the inference shown is the two-way clustered GLM"
)


def approximate_warning(asked_for: bool) -> str:
    """The warning the CLI and the report give when the variational Bayes engine is used."""
    if asked_for:
        return f"--engine statsmodels: {APPROXIMATE}"
    return (
        f"R with lme4 is not installed: {APPROXIMATE} (install r-base-core and r-cran-lme4 "
        "for glmer)"
    )


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
        notes: Engine details and how predictors were scaled.
        name: ``model 1`` or ``model 2``.
        components: Variance components: ``grouping``, ``term``, ``with`` (the other term of
            a correlation, else empty), ``variance``, ``sd``, ``correlation``.
        cov: The fixed effects' covariance (terms x terms; diagonal for statsmodels).
        loglik: The log-likelihood (Laplace); NaN for statsmodels.
        aic: AIC; NaN for statsmodels.
        bic: BIC; NaN for statsmodels.
        npar: Parameters (fixed effects and variance components).
        singular: Whether lme4 reports a singular fit.
        warnings: Convergence and other warnings, as R gave them.
        approximate: True for the variational Bayes engine.
        scaling: How the design columns were built (``complexity_mean``, ``complexity_sd``,
            ``task_coding``), for marginal predictions.
    """

    engine: str
    formula: str
    fixed: pd.DataFrame
    random: pd.DataFrame
    n_obs: int
    n_participants: int
    n_items: int
    notes: tuple[str, ...]
    name: str = "model 1"
    components: Any = field(default=None, repr=False, compare=False)
    cov: Any = field(default=None, repr=False, compare=False)
    loglik: float = math.nan
    aic: float = math.nan
    bic: float = math.nan
    npar: float = math.nan
    singular: bool = False
    warnings: tuple[str, ...] = ()
    approximate: bool = False
    scaling: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_text(self) -> str:
        """A plain-text summary."""
        flag = " APPROXIMATE (variational Bayes)" if self.approximate else ""
        lines = [
            f"mixed {self.name} ({self.engine}){flag}: {self.formula}",
            f"  {self.n_obs} trials, {self.n_participants} participants, {self.n_items} items",
        ]
        if not math.isnan(self.loglik):
            lines.append(f"  logLik {self.loglik:.2f}, AIC {self.aic:.2f}, BIC {self.bic:.2f}")
        for row in self.fixed.itertuples():
            df = getattr(row, "df", math.nan)
            test = f"t({df:g})" if not math.isnan(df) and df < 1000 else "z"
            lines.append(
                f"  {row.label:<28} b={row.b:+.3f} SE={row.se:.3f} z={row.z:+.2f} "
                f"p{_p_text(row.p)} ({test}) OR={row.odds_ratio:.2f} "
                f"[{row.or_low:.2f}, {row.or_high:.2f}]"
            )
        for row in self.random.itertuples():
            lines.append(f"  random {row.group}: {row.term} SD={row.sd:.3f}")
        if self.singular:
            lines.append("  WARNING: singular fit (a variance component is at or near zero)")
        lines += [f"  WARNING: {warning}" for warning in self.warnings]
        return "\n".join([*lines, *(f"  {note}" for note in self.notes)])


def _p_text(p: float) -> str:
    from tracktale.analysis.stats.glm import format_p

    text = format_p(p)
    return text if text.startswith("<") else f"={text}"


def mixed_frame(
    trials: pd.DataFrame, recency: str | None, task_coding: str = "sum"
) -> pd.DataFrame:
    """The design frame with standardised predictors and ``item_id`` for the random effects."""
    frame, _ = design_frame(trials, recency=recency, task_coding=task_coding, extra=("item_id",))
    for name in ("complexity", *(["recency"] if recency else [])):
        centred = frame[f"{name}_c"]
        scale = centred.std()
        frame[f"{name}_z"] = centred / scale if scale > 0 else centred
    return frame


def fixed_formula(recency: bool, both_tasks: bool) -> str:
    """The fixed part of a mixed model in lme4 notation."""
    fixed = "correct ~ complexity_z * task_s" if both_tasks else "correct ~ complexity_z"
    return fixed + (" + recency_z" if recency else "")


def lme4_formula(fixed: str, slopes: bool, independent: bool = False) -> str:
    """The whole formula: the fixed part and crossed random effects."""
    participant = "(1 | agent)"
    if slopes:
        participant = "(1 + complexity_z || agent)" if independent else "(1 + complexity_z | agent)"
    return f"{fixed} + {participant} + (1 | item_id)"


def resolve_engine(engine: str) -> str:
    """``auto`` -> ``lme4`` when R has it, else ``statsmodels``.

    Raises:
        TracktaleError: For an unknown engine.
    """
    from tracktale.analysis.stats.lme4 import lme4_available

    if engine not in ENGINES:
        raise TracktaleError(f"unknown mixed-model engine {engine!r} (use {', '.join(ENGINES)})")
    if engine == "auto":
        return "lme4" if lme4_available() else "statsmodels"
    return engine


def fit_mixed(
    trials: pd.DataFrame,
    *,
    recency: str | None = None,
    engine: str = "auto",
    slopes: bool = False,
    task_coding: str = "sum",
    glmer_test: str = "t-bw",
) -> MixedFit:
    """Fit one logistic mixed model to analysed human trials.

    Args:
        trials: Human trials after exclusions.
        recency: Add this recency covariate (``focus`` or ``sentences_since_focus``).
        engine: ``auto`` (lme4 when available, else statsmodels), ``statsmodels`` or ``lme4``.
        slopes: Add by-participant random slopes for complexity.
        task_coding: ``sum`` or ``treatment`` coding of probing method.
        glmer_test: ``t-bw`` or ``z`` (see :data:`GLMER_TESTS`).

    Returns:
        The fit.

    Raises:
        TracktaleError: For an unknown engine, ``lme4`` asked for but not available, or a
            failed fit (with R's message).
    """
    engine = resolve_engine(engine)
    frame = mixed_frame(trials, recency, task_coding)
    both = frame["task"].nunique() == 2
    fixed = fixed_formula(recency is not None, both)
    name = "model 2" if recency else "model 1"
    if engine == "statsmodels":
        return fit_statsmodels(frame, fixed, slopes, task_coding, name)
    fits = fit_lme4(frame, {name: lme4_formula(fixed, slopes)}, task_coding, glmer_test)
    fit = fits[name]
    if isinstance(fit, str):
        raise TracktaleError(f"glmer failed for {lme4_formula(fixed, slopes)!r}: {fit}")
    return fit


def between_within_df(
    frame: pd.DataFrame, terms: list[str], groups: tuple[str, ...] = ("item_id", "agent")
) -> dict[str, float]:
    """Denominator degrees of freedom by the between-within rule (SAS GLIMMIX's ``DDFM=BW``).

    A fixed term that is constant within every level of a grouping factor (complexity and
    recency within items) is tested against that factor's levels: ``df = levels - (terms at
    that level, the intercept included)``. Terms that vary within every grouping factor get
    ``n - (number of terms)``, for practical purposes the normal reference.

    Args:
        frame: The rows fitted, with the design columns and the grouping columns.
        terms: The fixed terms (``Intercept``, ``complexity_z``, ``complexity_z:task_s``, ...).
        groups: The grouping factors, the one with fewer levels first where it matters.

    Returns:
        Term -> degrees of freedom.
    """
    import numpy as np

    def values(term: str) -> np.ndarray:
        if term in ("Intercept", "(Intercept)"):
            return np.ones(len(frame))
        product = np.ones(len(frame))
        for factor in term.split(":"):
            product = product * frame[factor].to_numpy(dtype=float)
        return product

    columns = {term: values(term) for term in terms}
    level_of: dict[str, str | None] = {}
    for term, column in columns.items():
        level_of[term] = None
        for group in groups:
            spread = _within_group_range(column, frame[group].to_numpy())
            if spread == 0:
                level_of[term] = group
                break
    df = {}
    for term, level in level_of.items():
        if level is None:
            df[term] = float(len(frame) - len(terms))
        else:
            at_level = sum(1 for g in level_of.values() if g == level)
            df[term] = float(frame[level].nunique() - at_level)
    return df


def _within_group_range(values: Any, groups: Any) -> float:
    """The largest within-group range of ``values`` (0: constant within every group)."""
    import pandas as pd

    grouped = pd.Series(values).groupby(pd.Series(groups))
    return float((grouped.max() - grouped.min()).max())


class _Counts(TypedDict):
    n_obs: int
    n_participants: int
    n_items: int


def _counts(frame: pd.DataFrame) -> _Counts:
    return {
        "n_obs": len(frame),
        "n_participants": int(frame["agent"].nunique()),
        "n_items": int(frame["item_id"].nunique()),
    }


def _scaling(frame: pd.DataFrame, task_coding: str) -> dict[str, Any]:
    complexity = frame["complexity"].astype(float)
    return {
        "complexity_mean": float(complexity.mean()),
        "complexity_sd": float(frame["complexity_c"].std()) or 1.0,
        "task_coding": task_coding,
    }


def _scaling_note(task_coding: str) -> str:
    return f"complexity and recency standardised (z); {task_coding_note(task_coding)}"


def fit_statsmodels(
    frame: pd.DataFrame, fixed: str, slopes: bool, task_coding: str, name: str = "model 1"
) -> MixedFit:
    """The variational Bayes approximation (see the module docstring)."""
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
    table["approximate"] = True
    groups = [component.split(":")[0] for component in model.vcp_names]
    terms = ["complexity_z" if ":" in c else "(Intercept)" for c in model.vcp_names]
    sds = np.exp(result.vcp_mean)
    random = pd.DataFrame(
        {
            "group": groups,
            "term": terms,
            "sd": sds,
            "sd_low": np.exp(result.vcp_mean - 1.96 * result.vcp_sd),
            "sd_high": np.exp(result.vcp_mean + 1.96 * result.vcp_sd),
        }
    )
    variance_components = pd.DataFrame(
        {
            "grouping": groups,
            "term": terms,
            "with": "",
            "variance": sds**2,
            "sd": sds,
            "correlation": math.nan,
            "approximate": True,
        }
    )
    return MixedFit(
        engine="statsmodels",
        formula=lme4_formula(fixed, slopes, independent=True),
        fixed=table,
        random=random,
        notes=(
            "APPROXIMATE: statsmodels BinomialBayesMixedGLM, variational Bayes (posterior mean "
            "and SD; p from the normal approximation); independent random effects; no "
            "likelihood, so no LRT, AIC or BIC",
            _scaling_note(task_coding),
        ),
        name=name,
        components=variance_components,
        cov=pd.DataFrame(np.diag(sd.to_numpy() ** 2), index=sd.index, columns=sd.index),
        npar=float(len(mean) + len(sds)),
        approximate=True,
        scaling=_scaling(frame, task_coding),
        **_counts(frame),
    )


def fit_lme4(
    frame: pd.DataFrame, formulas: dict[str, str], task_coding: str, glmer_test: str = "t-bw"
) -> dict[str, MixedFit | str]:
    """Fit every formula with glmer in one R process; a failed model is R's message (text)."""
    from tracktale.analysis.stats.lme4 import fit_glmer_models

    if glmer_test not in GLMER_TESTS:
        raise TracktaleError(f"unknown glmer test {glmer_test!r} (use t-bw or z)")
    keys = {name: f"m{index}" for index, name in enumerate(formulas)}
    columns = [c for c in frame.columns if any(c in f for f in formulas.values())]
    columns = list(dict.fromkeys(["correct", "agent", "item_id", *columns]))
    raw = fit_glmer_models(frame[columns], {keys[n]: f for n, f in formulas.items()})
    fits: dict[str, MixedFit | str] = {}
    for name, formula in formulas.items():
        fit = raw[keys[name]]
        if isinstance(fit, str):
            fits[name] = fit
        else:
            fitted = _from_glmer(fit, formula, frame, name, glmer_test)
            fits[name] = _with_scaling(fitted, frame, task_coding)
    return fits


def _with_scaling(fit: MixedFit, frame: pd.DataFrame, task_coding: str) -> MixedFit:
    import dataclasses

    notes = (*fit.notes, _scaling_note(task_coding))
    return dataclasses.replace(fit, scaling=_scaling(frame, task_coding), notes=notes)


def _from_glmer(
    fit: Any, formula: str, frame: pd.DataFrame, name: str, glmer_test: str
) -> MixedFit:
    import pandas as pd
    from scipy import stats

    terms = fit.fixed.set_index("term").rename(index=_lme4_names)
    pvalues = terms["p"]
    degrees: Any = None
    if glmer_test == "t-bw":
        df = between_within_df(frame, list(terms.index))
        degrees = terms.index.map(df).to_numpy(dtype=float)
        pvalues = pd.Series(2 * stats.t.sf(terms["z"].abs(), degrees), index=terms.index)
    reference = degrees if glmer_test == "t-bw" else math.inf
    table = coefficient_table(terms["estimate"], terms["se"], pvalues, reference)
    table["z"] = terms["z"].to_numpy()
    if glmer_test == "t-bw":
        table["df"] = degrees
        table["p_z"] = terms["p"].to_numpy()
    cov = fit.vcov.rename(index=_lme4_names, columns=_lme4_names)
    vc = fit.random
    variances = vc[vc["var2"].isna()]
    random = pd.DataFrame(
        {
            "group": variances["grp"].to_numpy(),
            "term": variances["var1"].to_numpy(),
            "sd": variances["sdcor"].to_numpy(),
        }
    )
    info = fit.info
    warnings = tuple(w for w in info.get("messages", "").split(" | ") if w)
    notes = [f"lme4 {info.get('lme4_version', '?')} glmer (Laplace), {info.get('r_version', '')}"]
    if glmer_test == "t-bw":
        notes.append(
            "p from t with between-within degrees of freedom (items - item-level terms for "
            "complexity and recency); p_z is lme4's normal reference"
        )
    return MixedFit(
        engine="lme4",
        formula=formula,
        fixed=table,
        random=random,
        notes=tuple(notes),
        name=name,
        components=_components(vc),
        cov=cov,
        loglik=float(info.get("logLik", math.nan)),
        aic=float(info.get("AIC", math.nan)),
        bic=float(info.get("BIC", math.nan)),
        npar=float(info.get("npar", math.nan)),
        singular=info.get("singular") == "TRUE",
        warnings=warnings,
        **_counts(frame),
    )


def _components(vc: pd.DataFrame) -> pd.DataFrame:
    """lme4's VarCorr table as variances, SDs and correlations (one row each)."""
    import pandas as pd

    rows = []
    for row in vc.itertuples(index=False):
        correlation = isinstance(row.var2, str) and row.var2 != ""
        rows.append(
            {
                "grouping": row.grp,
                "term": row.var1,
                "with": row.var2 if correlation else "",
                "variance": math.nan if correlation else float(row.vcov),
                "sd": math.nan if correlation else float(row.sdcor),
                "correlation": float(row.sdcor) if correlation else math.nan,
            }
        )
    return pd.DataFrame(rows)


def _lme4_names(term: str) -> str:
    """R's term names in statsmodels' spelling (``(Intercept)`` -> ``Intercept``)."""
    return "Intercept" if term == "(Intercept)" else term
