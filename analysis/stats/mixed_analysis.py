"""Both mixed models together, compared as a statistician expects.

:func:`fit_mixed_models` fits model 1 and model 2 (and, with lme4, model 1 with the other random
structure) to the same rows and returns:

- **model comparison**: per model its formula, parameters, log-likelihood, AIC and BIC;
- **likelihood-ratio tests**: model 2 against model 1 (does recency add anything?) and
  by-participant complexity slopes against intercepts only. A variance tested at zero lies on
  the boundary of its parameter space, where the chi-square reference is conservative; the
  table gives the usual chi-square p (as R's ``anova`` prints it) and the 50:50 mixture of
  chi-square(df - 1) and chi-square(df) (Self and Liang 1987; Stram and Lee 1994) that holds
  for one added random slope with its correlation;
- **variance components and ICCs**: variances, SDs and correlations, and each grouping's
  intraclass correlation on the latent scale, ``var / (sum of intercept variances + pi^2/3)``
  (at mean complexity when there are slopes).

The variational Bayes engine has no likelihood: its comparison rows are empty and say why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracktale.analysis.stats.mixed import (
    MixedFit,
    fit_lme4,
    fit_statsmodels,
    fixed_formula,
    lme4_formula,
    mixed_frame,
    resolve_engine,
)
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

LOGISTIC_VARIANCE = math.pi**2 / 3
"""The variance of the standard logistic distribution: the latent residual of a logit model."""


@dataclass
class MixedAnalysis:
    """Model 1 and 2 as mixed models, their comparison and tests.

    Attributes:
        engine: ``lme4`` or ``statsmodels``.
        fits: ``model 1``, ``model 2`` (and ``model 1, slopes`` or ``model 1, no slopes``).
        comparison: ``model``, ``formula``, ``npar``, ``logLik``, ``AIC``, ``BIC``.
        lrt: ``test``, ``models``, ``chisq``, ``df``, ``p``, ``p_boundary``.
        icc: ``model``, ``grouping``, ``variance``, ``icc``.
        warnings: Every warning, one line each (singular fits, convergence, failures).
        failures: Model name -> why it could not be fitted.
        random: ``intercepts``, ``maximal`` or the random part asked for.
        ladders: With ``maximal``: model name -> its
            :class:`~tracktale.analysis.stats.random_structure.LadderFit` (every step).
        notes: What the reader should know that is not a problem (a model simplified along
            the declared ladder is the rule working, not a warning).
    """

    engine: str
    fits: dict[str, MixedFit]
    comparison: pd.DataFrame
    lrt: pd.DataFrame
    icc: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    random: str = "intercepts"
    ladders: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def ladder_table(self) -> pd.DataFrame:
        """Every step of every model's ladder, one row each (empty without a ladder)."""
        import pandas as pd

        parts = [ladder.steps.assign(model=name) for name, ladder in self.ladders.items()]
        if not parts:
            return pd.DataFrame()
        table = pd.concat(parts, ignore_index=True)
        return table[["model", *[c for c in table.columns if c != "model"]]]

    def optimizer_table(self) -> pd.DataFrame:
        """The final fits refitted with other optimizers (as ``lme4::allFit``)."""
        import pandas as pd

        parts = [
            ladder.optimizers.assign(model=name)
            for name, ladder in self.ladders.items()
            if ladder.optimizers is not None
        ]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

    @property
    def approximate(self) -> bool:
        """True for the variational Bayes engine."""
        return self.engine == "statsmodels"


def fit_mixed_models(
    trials: pd.DataFrame,
    *,
    recency: str = "focus",
    engine: str = "auto",
    slopes: bool = False,
    task_coding: str = "sum",
    glmer_test: str = "t-bw",
    random: str = "intercepts",
) -> MixedAnalysis:
    """Fit model 1 and model 2 (and the slope comparison) to analysed human trials.

    Args:
        trials: Human trials after exclusions.
        recency: The recency covariate of model 2.
        engine: ``auto``, ``lme4`` or ``statsmodels``.
        slopes: By-participant random complexity slopes in both models.
        task_coding: ``sum`` or ``treatment``.
        glmer_test: ``t-bw`` or ``z`` (:data:`~tracktale.analysis.stats.mixed.GLMER_TESTS`).
        random: ``intercepts`` (crossed random intercepts, with ``slopes`` a by-participant
            complexity slope), ``maximal`` (the design's maximal structure simplified along
            the declared ladder, :mod:`~tracktale.analysis.stats.random_structure`), or an
            lme4 random part fitted as given. The variational Bayes engine fits intercepts
            (and ``slopes``) whatever is asked.

    Returns:
        The analysis. Models that fail are listed in ``failures`` (with R's message).

    Raises:
        TracktaleError: For an unknown engine or lme4 asked for but missing.
    """
    engine = resolve_engine(engine)
    frame = mixed_frame(trials, recency, task_coding)
    both = frame["task"].nunique() == 2
    fixed = {"model 1": fixed_formula(False, both), "model 2": fixed_formula(True, both)}
    if engine == "statsmodels":
        fits: dict[str, MixedFit | str] = {}
        for name, formula in fixed.items():
            try:
                fits[name] = fit_statsmodels(frame, formula, slopes, task_coding, name)
            except (ValueError, ArithmeticError, TracktaleError) as error:
                fits[name] = str(error)
    elif random != "intercepts":
        return _fit_random(frame, fixed, random, task_coding, glmer_test)
    else:
        other = "model 1, no slopes" if slopes else "model 1, slopes"
        formulas = {name: lme4_formula(formula, slopes) for name, formula in fixed.items()}
        formulas[other] = lme4_formula(fixed["model 1"], not slopes)
        fits = fit_lme4(frame, formulas, task_coding, glmer_test)
    return _assemble(engine, fits, slopes)


RECENCY_NULL = "model 1 (model 2's random effects)"
"""The recency LRT's null model: model 1's fixed part with model 2's final random part."""


def _fit_random(
    frame: pd.DataFrame, fixed: dict[str, str], random: str, task_coding: str, glmer_test: str
) -> MixedAnalysis:
    """Fit glmer with the maximal structure (and its ladder) or a given random part."""
    import dataclasses

    from tracktale.analysis.stats.mixed import _from_glmer, _with_scaling
    from tracktale.analysis.stats.random_structure import (
        check_random,
        fit_ladders,
        fixed_terms,
        maximal_slopes,
    )

    random = check_random(random)
    if random != "maximal":
        formulas = {name: f"{formula} + {random}" for name, formula in fixed.items()}
        formulas[RECENCY_NULL] = formulas["model 1"]
        analysis = _assemble("lme4", fit_lme4(frame, formulas, task_coding, glmer_test), False)
        return dataclasses.replace(analysis, random=random)
    slopes = {name: maximal_slopes(frame, fixed_terms(f)) for name, f in fixed.items()}
    ladders = fit_ladders(frame, fixed, slopes)
    fits: dict[str, MixedFit | str] = {}
    for name, ladder in ladders.items():
        if isinstance(ladder.fit, str):
            fits[name] = ladder.fit
            continue
        fitted = _from_glmer(ladder.fit, ladder.formula, frame, name, glmer_test)
        fits[name] = _with_scaling(fitted, frame, task_coding)
    model2 = fits.get("model 2")
    if isinstance(model2, MixedFit):
        # The recency LRT tests the fixed effect alone: the null model keeps model 2's random
        # part (its ladder's end), so both sides differ only in the recency coefficient.
        random_part = model2.formula[len(fixed["model 2"]) + 3 :]
        extra = {RECENCY_NULL: f"{fixed['model 1']} + {random_part}"}
        fits.update(fit_lme4(frame, extra, task_coding, glmer_test))
    analysis = _assemble("lme4", fits, False)
    for name, ladder in ladders.items():
        changed = len(ladder.steps) > 1
        if changed:
            analysis.notes.append(
                f"mixed {name}: the maximal model was simplified along the ladder "
                f"({len(ladder.steps) - 1} step(s)); fitted {ladder.formula}"
            )
    return dataclasses.replace(analysis, random="maximal", ladders=ladders)


def _assemble(engine: str, fits: dict[str, MixedFit | str], slopes: bool) -> MixedAnalysis:
    good = {name: fit for name, fit in fits.items() if not isinstance(fit, str)}
    failures = {name: fit for name, fit in fits.items() if isinstance(fit, str)}
    warnings = [f"mixed {name} could not be fitted: {why}" for name, why in failures.items()]
    for name, fit in good.items():
        if fit.singular:
            warnings.append(f"mixed {name}: singular fit (a variance component is at or near 0)")
        # lme4's own singular-fit message says the same as the line above.
        own = [
            w for w in fit.warnings if not (fit.singular and w.startswith("boundary (singular)"))
        ]
        warnings += [f"mixed {name}: {warning}" for warning in own]
    return MixedAnalysis(
        engine=engine,
        fits=good,
        comparison=comparison_table(good),
        lrt=lrt_table(good, slopes),
        icc=icc_table(good),
        warnings=warnings,
        failures=failures,
    )


def comparison_table(fits: dict[str, MixedFit]) -> pd.DataFrame:
    """Formula, parameters, log-likelihood, AIC and BIC of every model."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "model": name,
                "formula": fit.formula,
                "npar": fit.npar,
                "logLik": fit.loglik,
                "AIC": fit.aic,
                "BIC": fit.bic,
                "singular": fit.singular,
                "approximate": fit.approximate,
            }
            for name, fit in fits.items()
        ]
    )


def likelihood_ratio(
    smaller: MixedFit, larger: MixedFit, boundary: bool = False
) -> dict[str, float]:
    """The LRT of two nested models fitted to the same rows.

    Args:
        smaller: The restricted model.
        larger: The model with the added terms.
        boundary: The added parameters include a variance tested at zero: also give the
            chi-square mixture p (``p_boundary``).

    Returns:
        ``chisq``, ``df``, ``p`` and ``p_boundary`` (NaN unless ``boundary``).
    """
    from scipy import stats

    if smaller.n_obs != larger.n_obs:
        raise TracktaleError("a likelihood-ratio test needs both models fitted to the same rows")
    chisq = max(0.0, 2 * (larger.loglik - smaller.loglik))
    df = larger.npar - smaller.npar
    p = float(stats.chi2.sf(chisq, df))
    mixture = math.nan
    if boundary:
        lower = float(stats.chi2.sf(chisq, df - 1)) if df > 1 else float(chisq <= 0)
        mixture = 0.5 * lower + 0.5 * p
    return {"chisq": chisq, "df": df, "p": p, "p_boundary": mixture}


def lrt_table(fits: dict[str, MixedFit], slopes: bool) -> pd.DataFrame:
    """Model 2 vs model 1, and participant slopes vs none (where both were fitted)."""
    import pandas as pd

    columns = ["test", "models", "chisq", "df", "p", "p_boundary"]
    rows = []
    usable = {n: f for n, f in fits.items() if not math.isnan(f.loglik)}
    null = RECENCY_NULL if RECENCY_NULL in usable else "model 1"
    if {null, "model 2"} <= set(usable):
        result = likelihood_ratio(usable[null], usable["model 2"])
        rows.append({"test": "recency", "models": "model 2 vs model 1", **result})
    other = "model 1, no slopes" if slopes else "model 1, slopes"
    if {"model 1", other} <= set(usable):
        with_slopes, without = (
            (usable["model 1"], usable[other]) if slopes else (usable[other], usable["model 1"])
        )
        result = likelihood_ratio(without, with_slopes, boundary=True)
        label = "by-participant complexity slopes"
        rows.append({"test": label, "models": "slopes vs intercepts only", **result})
    return pd.DataFrame(rows, columns=columns)


def icc_table(fits: dict[str, MixedFit]) -> pd.DataFrame:
    """Each grouping's latent-scale intraclass correlation, per model."""
    import pandas as pd

    rows = []
    for name, fit in fits.items():
        components = fit.components
        if components is None or components.empty:
            continue
        intercepts = components[(components["term"] == "(Intercept)") & (components["with"] == "")]
        total = float(intercepts["variance"].sum()) + LOGISTIC_VARIANCE
        for row in intercepts.itertuples(index=False):
            rows.append(
                {
                    "model": name,
                    "grouping": row.grouping,
                    "variance": row.variance,
                    "icc": row.variance / total,
                    "approximate": fit.approximate,
                }
            )
    return pd.DataFrame(rows, columns=["model", "grouping", "variance", "icc", "approximate"])
