"""The paper's human analysis: a logistic GLM with cluster-robust standard errors.

Model 1: ``correct ~ complexity_c * task_s`` (mean-centred complexity, probing method and their
interaction). Model 2 adds the focus position (recency) as a centred covariate. Probing method is
sum-coded by default with **explicit +0.5, implicit -0.5**: the coding that reproduces the signs
the paper reports. Its explicit accuracy falls more steeply (87.2% at C1 to 65.0% at C4, about
-0.43 log-odds per level) than its implicit accuracy (89.0% to 76.0%, about -0.31), and its
interaction is b = -0.09: negative only if the interaction is the explicit slope minus the
implicit one (-0.43 + 0.31 = -0.12), and the complexity coefficient is then the average slope
(-0.37; reported -0.38). ``sum-implicit`` (implicit +0.5, the other sign) and ``treatment``
(explicit 0, implicit 1: complexity is the explicit slope) are available.

Standard errors are clustered by participant (``clustering="participant"``, the paper's
specification) or by participant and item (``"two-way"``, :mod:`tracktale.analysis.stats.cluster`):
complexity and focus vary only between items, so only the second counts the items' own
variation as sampling error.

Rows with a missing value in any model variable are dropped *before* the cluster groups are
built: statsmodels drops NaN rows from the design itself but not from the ``groups`` array, so
groups built from the full table would be silently misaligned with the rows actually fitted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from tracktale.analysis.stats.proportions import Z95
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

TaskCoding = Literal["sum", "treatment", "sum-implicit"]
TASK_CODINGS: tuple[TaskCoding, ...] = get_args(TaskCoding)
"""Codings of probing method (``--task-coding``); ``sum`` is the paper's (see the module)."""
_TASK_CODES = {
    "sum": {"explicit": 0.5, "implicit": -0.5},
    "treatment": {"explicit": 0.0, "implicit": 1.0},
    "sum-implicit": {"explicit": -0.5, "implicit": 0.5},
}
CLUSTERINGS = ("participant", "two-way")
"""``participant``: the paper's one-way clustering; ``two-way``: participant and item (CGM)."""
CLUSTER_COLUMNS = {"participant": ("agent",), "two-way": ("agent", "item_id")}
Recency = Literal["focus", "sentences_since_focus"]
RECENCY_COLUMNS: tuple[Recency, ...] = get_args(Recency)
"""Recency covariates the items carry: the focus object's position (F0..F3, the paper's) or the
number of sentences since the focus object was last mentioned."""

TERM_LABELS = {
    "Intercept": "intercept",
    "complexity_c": "complexity (centred)",
    "task_s": "task (explicit vs implicit)",
    "complexity_c:task_s": "complexity x task",
    "recency_c": "recency (centred)",
    "complexity_z": "complexity (z)",
    "complexity_z:task_s": "complexity (z) x task",
    "recency_z": "recency (z)",
}


@dataclass(frozen=True)
class GLMFit:
    """A fitted logistic GLM with cluster-robust standard errors.

    Attributes:
        name: Short name (``complexity``, ``complexity+recency``).
        formula: The model formula over the design columns.
        table: One row per term: ``term``, ``label``, ``b``, ``se``, ``z``, ``p``,
            ``odds_ratio``, ``or_low``, ``or_high``.
        n_obs: Trials fitted.
        n_clusters: Participants (clusters).
        n_dropped: Rows dropped for a missing value.
        notes: How predictors were coded.
        result: The statsmodels results object.
        clustering: ``participant`` or ``two-way`` (see :data:`CLUSTERINGS`).
        cov: The cluster-robust covariance of the coefficients (terms x terms).
        n_items: Items (the second cluster dimension of the two-way fit).
        complexity_mean: The mean complexity the predictor was centred at.
        task_coding: ``sum`` or ``treatment``.
        df: Degrees of freedom of the t reference of the tests and intervals (``inf``: z).
        floor_cov: For a floored two-way fit, the participant-clustered covariance whose
            variances are the floor (``None`` otherwise).
    """

    name: str
    formula: str
    table: pd.DataFrame
    n_obs: int
    n_clusters: int
    n_dropped: int
    notes: tuple[str, ...]
    result: Any = field(repr=False, compare=False)
    clustering: str = "participant"
    cov: Any = field(default=None, repr=False, compare=False)
    n_items: int = 0
    complexity_mean: float = math.nan
    task_coding: str = "sum"
    floor_cov: Any = field(default=None, repr=False, compare=False)
    df: float = math.inf

    def coefficient(self, term: str) -> pd.Series:
        """The table row of ``term`` (e.g. ``"complexity_c"``)."""
        rows = self.table[self.table["term"] == term]
        if rows.empty:
            raise TracktaleError(f"model {self.name!r} has no term {term!r}")
        return rows.iloc[0]

    def to_text(self) -> str:
        """A plain-text summary for logs and the report."""
        lines = [
            f"{self.name}: {self.formula}",
            f"  {self.n_obs} trials, {self.n_clusters} participants"
            + (f", {self.n_items} items" if self.clustering == "two-way" else "")
            + f", {self.n_dropped} rows dropped for missing values",
        ]
        for row in self.table.itertuples():
            lines.append(
                f"  {row.label:<28} b={row.b:+.3f} SE={row.se:.3f} z={row.z:+.2f} "
                f"p{'' if format_p(row.p).startswith('<') else '='}{format_p(row.p)} "
                f"OR={row.odds_ratio:.2f} "
                f"[{row.or_low:.2f}, {row.or_high:.2f}]"
            )
        return "\n".join([*lines, *(f"  {note}" for note in self.notes)])


def task_coding_note(task_coding: str) -> str:
    """How probing method is coded, for model notes (``task coded explicit +0.5 / ...``)."""
    codes = _TASK_CODES[task_coding]
    return "task coded " + " / ".join(
        f"{task} {value:+g}" if task_coding != "treatment" else f"{task} {value:g}"
        for task, value in sorted(codes.items(), key=lambda kv: -kv[1])
    )


def task_term_label(task_coding: str) -> str:
    """The label of the ``task_s`` term: which task the positive direction is."""
    codes = _TASK_CODES[task_coding]
    high = max(codes, key=lambda task: codes[task])
    low = "implicit" if high == "explicit" else "explicit"
    return f"task ({high} vs {low})"


def task_values(task_coding: str) -> dict[str, float]:
    """The value of the task predictor for each task under a coding."""
    return dict(_TASK_CODES[task_coding])


def format_p(p: float) -> str:
    """``p < .001`` style, as papers print it."""
    if math.isnan(p):
        return "nan"
    return "<.001" if p < 0.001 else f"{p:.3f}".lstrip("0")


def design_frame(
    trials: pd.DataFrame,
    *,
    recency: str | None = None,
    task_coding: str = "sum",
    extra: tuple[str, ...] = (),
) -> tuple[pd.DataFrame, int]:
    """The model variables of the analysed trials, complete rows only, centred after dropping.

    Args:
        trials: Tidy trials (``correct``, ``complexity``, ``task``, ``agent``, ...).
        recency: The recency column (one of :data:`RECENCY_COLUMNS`) or ``None``.
        task_coding: One of :data:`TASK_CODINGS` (``sum``: explicit +0.5 / implicit -0.5).
        extra: Further columns to carry (e.g. ``item_id`` for mixed models).

    Returns:
        The design frame (``correct``, ``complexity_c``, ``task_s``, ``recency_c``, ``agent``,
        extras) and the number of rows dropped for missing values.

    Raises:
        TracktaleError: Naming a missing column, an unknown coding, or no usable rows.
    """
    if task_coding not in TASK_CODINGS:
        raise TracktaleError(f"unknown task coding {task_coding!r} (use {', '.join(TASK_CODINGS)})")
    if recency is not None and recency not in RECENCY_COLUMNS:
        raise TracktaleError(
            f"unknown recency covariate {recency!r} (use {' or '.join(RECENCY_COLUMNS)})"
        )
    needed = ["correct", "complexity", "task", "agent", *([recency] if recency else []), *extra]
    for column in needed:
        if column not in trials.columns:
            raise TracktaleError(f"the trial table has no column {column!r} for the GLM")
    rows = trials[trials["task"].isin(("explicit", "implicit"))][needed]
    frame = rows.dropna().copy()
    dropped = len(rows) - len(frame)
    if frame.empty:
        raise TracktaleError("no complete explicit or implicit trials to fit the GLM on")
    if frame["correct"].nunique() < 2:
        raise TracktaleError("every analysed trial has the same outcome: the GLM cannot be fitted")
    frame["correct"] = frame["correct"].astype(float)
    complexity = frame["complexity"].astype(float)
    frame["complexity_c"] = complexity - complexity.mean()
    frame["task_s"] = frame["task"].map(task_values(task_coding)).astype(float)
    if recency:
        position = frame[recency].astype(float)
        frame["recency_c"] = position - position.mean()
    return frame.reset_index(drop=True), dropped


def glm_terms(recency: bool, both_tasks: bool = True) -> list[str]:
    """The GLM's terms (``a:b`` is the product of two design columns)."""
    terms = ["complexity_c", "task_s", "complexity_c:task_s"] if both_tasks else ["complexity_c"]
    return terms + (["recency_c"] if recency else [])


def glm_formula(terms: list[str]) -> str:
    """The formula the terms spell, for reports."""
    return "correct ~ " + " + ".join(terms)


def fit_clustered_logit(frame: pd.DataFrame, terms: list[str], cluster: str = "agent") -> Any:
    """Fit a binomial GLM with cluster-robust (sandwich) standard errors.

    The design matrix is built directly from the columns (no formula parsing: this runs
    thousands of times in a power analysis). ``frame`` must already be complete (see
    :func:`design_frame`): the groups are built from exactly the rows that are fitted.
    """
    import pandas as pd
    import statsmodels.api as sm

    exog = pd.DataFrame({"Intercept": 1.0}, index=frame.index)
    for term in terms:
        factors = term.split(":")
        column = frame[factors[0]].astype(float)
        for factor in factors[1:]:
            column = column * frame[factor].astype(float)
        exog[term] = column
    groups, labels = pd.factorize(frame[cluster])
    if len(labels) < 2:
        # The sandwich estimator divides by (clusters - 1); statsmodels fails obscurely.
        raise TracktaleError(
            f"clustered standard errors need at least 2 participants, the data has {len(labels)}"
        )
    model = sm.GLM(frame["correct"].astype(float), exog, family=sm.families.Binomial())
    return model.fit(cov_type="cluster", cov_kwds={"groups": groups})


def fit_human_glm(
    trials: pd.DataFrame,
    *,
    recency: str | None = None,
    task_coding: str = "sum",
    clustering: str = "participant",
    reference: str = "normal",
    floor: bool = True,
) -> GLMFit:
    """The paper's GLM on analysed human trials (one row per trial).

    Args:
        trials: Human trials after exclusions.
        recency: Add this recency covariate (``focus`` reproduces the paper's second model).
        task_coding: The coding of probing method (:data:`TASK_CODINGS`).
        clustering: ``participant`` (the paper's) or ``two-way`` (participant and item).
        reference: ``normal`` (z) or ``t`` (G - 1 df, G the fewest clusters of a dimension)
            for the p-values of a two-way fit; the participant-clustered fit uses z as the paper.
        floor: For a two-way fit, test each term with the larger of its two-way and its
            participant-clustered variance (see :func:`floored_variance`); ``False`` uses the
            two-way (Cameron-Gelbach-Miller) variance alone.

    Returns:
        The fit with its coefficient table.
    """
    import numpy as np

    if clustering not in CLUSTERINGS:
        raise TracktaleError(f"unknown clustering {clustering!r} (use participant or two-way)")
    extra = ("item_id",) if clustering == "two-way" else ()
    frame, dropped = design_frame(trials, recency=recency, task_coding=task_coding, extra=extra)
    both = frame["task"].nunique() == 2
    terms = glm_terms(recency is not None, both)
    result = fit_clustered_logit(frame, terms)
    complexity_mean = float(frame["complexity"].astype(float).mean())
    notes = [
        f"complexity centred at its mean ({complexity_mean:.3f})",
        task_coding_note(task_coding),
    ]
    if clustering == "participant":
        se, pvalues, cov = result.bse, result.pvalues, result.cov_params()
        df = math.inf
        notes.append("standard errors clustered by participant (the paper's specification)")
    else:
        from tracktale.analysis.stats.cluster import clustered_inference

        inference = clustered_inference(result, frame, CLUSTER_COLUMNS[clustering], reference)
        cov, floor_cov = inference.cov, result.cov_params() if floor else None
        se = floored_variance(cov, floor_cov) ** 0.5
        pvalues = inference.p_of(result.params / se)
        df = math.inf if reference == "normal" else float(inference.df)
        test = "z" if reference == "normal" else f"t({inference.df:g})"
        rule = ", each SE at least the participant-clustered one" if floor else ""
        notes.append(
            "standard errors clustered by participant and item (Cameron-Gelbach-Miller, HC1"
            f"{rule}; {test} tests)"
        )
        if se.isna().any():
            notes.append("a two-way variance estimate is not positive: its SE is not reported")
    if recency:
        notes.append(f"recency: {recency}, centred")
    if not both:
        notes.append(f"only the {frame['task'].iloc[0]} task is present: no task terms")
    name = "complexity" + (f"+{recency}" if recency else "")
    table = coefficient_table(result.params, se, pvalues, df)
    table["label"] = table["label"].str.replace(
        TERM_LABELS["task_s"], task_term_label(task_coding), regex=False
    )
    if clustering == "two-way":
        table["se_two_way"] = np.sqrt(np.diag(cov.to_numpy()).clip(min=0))
        table["se_participant"] = result.bse.to_numpy()
    return GLMFit(
        name=name,
        formula=glm_formula(terms),
        table=table,
        n_obs=int(result.nobs),
        n_clusters=int(frame["agent"].nunique()),
        n_dropped=dropped,
        notes=tuple(notes),
        result=result,
        clustering=clustering,
        cov=cov,
        floor_cov=floor_cov if clustering == "two-way" else None,
        n_items=int(frame["item_id"].nunique()) if "item_id" in frame else 0,
        complexity_mean=complexity_mean,
        task_coding=task_coding,
        df=df,
    )


def floored_variance(cov: pd.DataFrame, floor_cov: pd.DataFrame | None) -> pd.Series:
    """Each term's variance, at least its participant-clustered variance.

    With items drawn at random, a coefficient's variance is at least what it would be with the
    items fixed (the law of total variance), and the participant-clustered estimator targets
    the latter. The two-way estimator subtracts the participant x item (here: per-trial)
    component, and for terms balanced within items (task, its interaction) it often comes out
    *below* the participant-clustered one by noise alone, which made its tests reject a true
    null 7-8% of the time in the null-calibration benchmark. Taking the larger of the two per
    term removes that without touching terms where items matter (there the two-way is larger).
    A non-positive two-way variance is NaN unless the floor covers it.
    """
    import numpy as np
    import pandas as pd

    variance = pd.Series(np.diag(cov.to_numpy()), index=cov.index)
    variance = variance.where(variance > 0)
    if floor_cov is None:
        return variance
    floor = pd.Series(np.diag(floor_cov.loc[cov.index, cov.index].to_numpy()), index=cov.index)
    return np.fmax(variance, floor)


def coefficient_table(
    params: pd.Series, se: pd.Series, pvalues: pd.Series, df: Any = math.inf
) -> pd.DataFrame:
    """b, SE, z, p and the odds ratio with its 95% interval, one row per term.

    Args:
        params: Estimates by term.
        se: Their standard errors.
        pvalues: Their p-values.
        df: Degrees of freedom of the t reference the p-values come from (one for all terms,
            or one per term; ``inf``: the normal). The interval uses the same reference as
            the test, so a p below 0.05 and an interval that excludes 1 always agree.
    """
    import numpy as np
    import pandas as pd
    from scipy import stats

    table = pd.DataFrame(
        {
            "term": list(params.index),
            "label": [TERM_LABELS.get(t, t) for t in params.index],
            "b": params.to_numpy(dtype=float),
            "se": se.to_numpy(dtype=float),
        }
    )
    table["z"] = table["b"] / table["se"]
    table["p"] = pvalues.to_numpy(dtype=float)
    table["odds_ratio"] = np.exp(table["b"])
    degrees = np.broadcast_to(np.asarray(df, dtype=float), (len(table),))
    critical = np.where(
        np.isinf(degrees), Z95, stats.t.isf(0.025, np.where(np.isinf(degrees), 1, degrees))
    )
    table["or_low"] = np.exp(table["b"] - critical * table["se"])
    table["or_high"] = np.exp(table["b"] + critical * table["se"])
    return table
