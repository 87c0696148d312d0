"""Null calibration: how often each default test rejects when nothing is there.

Participants are simulated in the human protocol's own design (four lists, blocked formats,
46 trials: 36 main and 10 fillers, after practice; see
:func:`~tracktale.analysis.power.simulate.human_design`) with no complexity, task, interaction or
recency effect, random intercepts for participants (SD 0.5) and for items (SD ``item_sd``,
drawn anew in every simulated study), and the paper's exclusions. By default the truth is richer
than the models fitted (:data:`~tracktale.analysis.power.simulate.RICHER_TRUTH`): random task
slopes by participant (SD 0.5) and by item (SD 0.4), random complexity slopes by participant
(SD 0.15), 10% guessers, and an item SD twice as large at C4 as at C1 (geometric mean
``item_sd``); ``NullScenario(..., **INTERCEPTS_ONLY)`` gives the old intercepts-only truth.
Each data set is analysed by every method of :mod:`tracktale.analysis.stats.inference`; the
share of p-values below alpha is the test's real type I error rate, with a Wilson 95% interval
for the simulation error; failed fits are counted apart.
``benchmarks/bench_null_calibration.py`` prints the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracktale.analysis.data.exclusions import ExclusionRules, apply_exclusions
from tracktale.analysis.power.simulate import (
    RICHER_TRUTH,
    SimulationParams,
    human_design,
    simulate_outcomes,
)
from tracktale.analysis.stats.inference import DEFAULT_TESTS, GLM_TERMS
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

    from tracktale.stimulus_set import StimulusSet

GLM_VARIANTS = (
    ("glm", "normal"),
    ("glm-2way", "normal"),
    ("glm-2way", "t"),
    ("glm-2way", "t, floored"),
)
"""(method, reference) pairs the GLM part measures: the paper's z tests; the two-way SE with z
and t(items - 1) tests; and the report's default, each SE at least the participant-clustered
one, t(items - 1)."""


@dataclass(frozen=True)
class NullScenario:
    """One simulated design under the null.

    Attributes:
        participants: Participants recruited (before exclusions).
        item_sd: SD of the items' random intercepts (log-odds).
        participant_sd: SD of the participants' random intercepts.
        intercept: Log-odds of a correct answer (1.35: about 80% correct).
        seed: Seed of the scenario (each study gets its own stream from it).
        recency: Effect of the centred focus position (log-odds per position); 0, the null,
            except in power runs (``benchmarks/bench_recency_power.py``).
        complexity: Effect of centred complexity (log-odds per level); 0, the null, except
            in power runs (``bench_recency_power.py --term complexity``).
        participant_task_sd: SD of participants' random task slopes.
        item_task_sd: SD of items' random task slopes.
        participant_complexity_sd: SD of participants' random complexity slopes (per level).
        guessers: Share of participants answering at chance.
        item_sd_ratio: Item SD at the highest complexity level over that at the lowest.
    """

    participants: int
    item_sd: float
    participant_sd: float = 0.5
    intercept: float = 1.35
    seed: int = 1
    recency: float = 0.0
    complexity: float = 0.0
    participant_task_sd: float = RICHER_TRUTH["participant_task_sd"]
    item_task_sd: float = RICHER_TRUTH["item_task_sd"]
    participant_complexity_sd: float = RICHER_TRUTH["participant_complexity_sd"]
    guessers: float = RICHER_TRUTH["guessers"]
    item_sd_ratio: float = RICHER_TRUTH["item_sd_ratio"]

    def params(self) -> SimulationParams:
        """The generating model: no fixed effect but the intercept (``recency``, ``complexity``)."""
        return SimulationParams(
            intercept=self.intercept,
            complexity=self.complexity,
            task=0.0,
            interaction=0.0,
            recency=self.recency,
            participant_sd=self.participant_sd,
            item_sd=self.item_sd,
            participant_task_sd=self.participant_task_sd,
            item_task_sd=self.item_task_sd,
            participant_complexity_sd=self.participant_complexity_sd,
            guessers=self.guessers,
            item_sd_ratio=self.item_sd_ratio,
        )


INTERCEPTS_ONLY: dict[str, float] = {
    "participant_task_sd": 0.0,
    "item_task_sd": 0.0,
    "participant_complexity_sd": 0.0,
    "guessers": 0.0,
    "item_sd_ratio": 1.0,
}
"""The null benchmarks' truth before issue 29: random intercepts only (``NullScenario(...,
**INTERCEPTS_ONLY)``), the structure glmer's default fitted, so calibrated by construction."""


def null_studies(
    stimulus_set: StimulusSet, scenario: NullScenario, simulations: range
) -> Iterator[tuple[int, pd.DataFrame]]:
    """The analysed trials of each simulated study (after the paper's exclusions)."""
    import numpy as np

    design = human_design(stimulus_set)
    rules = ExclusionRules()
    params = scenario.params()
    for sim in simulations:
        key = [scenario.seed, scenario.participants, round(1000 * scenario.item_sd), sim]
        if scenario.recency:
            # Null streams stay what they were; each effect size gets streams of its own.
            key.append(round(1000 * abs(scenario.recency)))
        if scenario.complexity:
            key += [1, round(1000 * abs(scenario.complexity))]
        rng = np.random.default_rng(key)
        trials = simulate_outcomes(design, scenario.participants, params, rng)
        trials["source"] = "simulated"
        yield sim, apply_exclusions(trials, None, rules).trials


def glm_pvalues(analysed: pd.DataFrame) -> list[dict[str, Any]]:
    """The p of every default test under every GLM variant, from one fit per model."""
    from tracktale.analysis.stats.cluster import clustered_inference
    from tracktale.analysis.stats.glm import (
        design_frame,
        fit_clustered_logit,
        floored_variance,
        glm_terms,
    )

    rows = []
    for recency in (None, "focus"):
        frame, _ = design_frame(analysed, recency=recency, extra=("item_id",))
        tests = ["recency"] if recency else [t for t in DEFAULT_TESTS if t != "recency"]
        try:
            result = fit_clustered_logit(frame, glm_terms(recency is not None))
        except (TracktaleError, ValueError, ArithmeticError):
            rows += [{"method": m, "reference": r, "test": t, "p": float("nan")}
                     for m, r in GLM_VARIANTS for t in tests]  # fmt: skip
            continue
        for method, reference in GLM_VARIANTS:
            columns = ["agent"] if method == "glm" else ["agent", "item_id"]
            inference = clustered_inference(result, frame, columns, reference.split(",")[0])
            pvalues = inference.pvalues
            if reference.endswith("floored"):
                se = floored_variance(inference.cov, result.cov_params()) ** 0.5
                pvalues = inference.p_of(result.params / se)
            for test in tests:
                p = float(pvalues[GLM_TERMS[test]])
                rows.append({"method": method, "reference": reference, "test": test, "p": p})
    return rows + permutation_pvalues(analysed)


def permutation_pvalues(analysed: pd.DataFrame) -> list[dict[str, Any]]:
    """The report's item-level tests, recency and complexity, one row each.

    Recency: focus permuted within complexity levels; complexity: the report's default test
    (since issue 29's third pass the items' empirical-logit slope over its two-way SE against
    t(items - 2), no permutation: method ``item-level``, reference ``t, HC3``).
    """
    from tracktale.analysis.stats.permutation import (
        complexity_test_of_trials,
        recency_test_of_trials,
    )

    rows = []
    for test, run in (
        ("recency", recency_test_of_trials),
        ("complexity", complexity_test_of_trials),
    ):
        try:
            p = run(analysed).p
        except TracktaleError:
            p = float("nan")
        if test == "complexity":
            rows.append({"method": "item-level", "reference": "t, HC3", "test": test, "p": p})
        else:
            rows.append({"method": "permutation", "reference": "permutation", "test": test, "p": p})
    return rows


def _glm_worker(arguments: tuple[Any, NullScenario, range]) -> list[dict[str, Any]]:
    stimulus_set, scenario, simulations = arguments
    rows = []
    for sim, analysed in null_studies(stimulus_set, scenario, simulations):
        rows += [{"sim": sim, **row} for row in glm_pvalues(analysed)]
    return rows


def glm_calibration(
    stimulus_set: StimulusSet,
    scenario: NullScenario,
    simulations: int,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """p-values of the GLM variants in ``simulations`` null studies (parallel processes).

    Returns:
        One row per (sim, method, reference, test) with ``p`` (NaN for a failed fit).
    """
    import multiprocessing

    import pandas as pd

    step = max(1, min(50, simulations // (4 * max(workers, 1)) or 1))
    chunks = [range(i, min(i + step, simulations)) for i in range(0, simulations, step)]
    jobs = [(stimulus_set, scenario, chunk) for chunk in chunks]
    rows: list[dict[str, Any]] = []
    if workers <= 1:
        results = map(_glm_worker, jobs)
        for chunk, part in zip(chunks, results, strict=True):
            rows += part
            if progress:
                progress(len(chunk))
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            for chunk, part in zip(chunks, pool.imap(_glm_worker, jobs), strict=True):
                rows += part
                if progress:
                    progress(len(chunk))
    return pd.DataFrame(rows)


def glmer_calibration(
    stimulus_set: StimulusSet,
    scenario: NullScenario,
    simulations: int,
    workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """p-values of glmer (model 1 and 2) in the first ``simulations`` of the same studies.

    Returns:
        One row per (sim, test) with ``p``, ``singular``, ``warning`` and ``error``.
    """
    import pandas as pd

    from tracktale.analysis.stats.glmer_batch import fit_batch
    from tracktale.analysis.stats.inference import glmer_batch_tests, glmer_formulas
    from tracktale.analysis.stats.mixed import mixed_frame

    frames = []
    for sim, analysed in null_studies(stimulus_set, scenario, range(simulations)):
        frame = mixed_frame(analysed, "focus")
        columns = ["correct", "agent", "item_id", "complexity_z", "task_s", "recency_z"]
        frames.append(frame[columns].assign(sim=sim))
    data = pd.concat(frames, ignore_index=True)
    rows = fit_batch(data, glmer_formulas(), workers=workers, progress=progress)
    tests = glmer_batch_tests(rows)
    tests.insert(1, "method", "glmer")
    tests.insert(2, "reference", "normal")
    return pd.concat(
        [tests, _between_within(tests, frames[0]), _recency_lrt(rows)], ignore_index=True
    )


def glmer_ladder_calibration(
    stimulus_set: StimulusSet,
    scenario: NullScenario,
    simulations: int,
    workers: int = 2,
    models: tuple[str, ...] = ("model 1",),
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """p-values of glmer with the design's maximal random effects and the ladder.

    The report's default mixed model (``--random maximal``): each study's model is fitted
    along :mod:`~tracktale.analysis.stats.random_structure`'s ladder in R (``glmer_sims.R``
    with the maximal structure), and its Wald statistics are referred to the normal (lme4's
    z) and to t with between-within degrees of freedom (the report's ``t-bw``).

    Returns:
        One row per (sim, reference, test) with ``p`` (NaN where the fit failed),
        ``singular``, ``converged``, ``steps`` (fits the ladder made) and ``formula``.
    """
    import numpy as np
    import pandas as pd

    from tracktale.analysis.stats.glmer_batch import fit_batch
    from tracktale.analysis.stats.inference import GLMER_TERMS
    from tracktale.analysis.stats.mixed import fixed_formula, mixed_frame
    from tracktale.analysis.stats.random_structure import fixed_terms, maximal_slopes

    fixed = {m: fixed_formula(m == "model 2", True) for m in models}
    frames = []
    for sim, analysed in null_studies(stimulus_set, scenario, range(simulations)):
        frame = mixed_frame(analysed, "focus")
        columns = ["correct", "agent", "item_id", "complexity_z", "task_s", "recency_z"]
        frames.append(frame[columns].assign(sim=sim))
    structure = pd.DataFrame(
        [
            {"model": model, "group": group, "term": term}
            for model, formula in fixed.items()
            for group, terms in maximal_slopes(frames[0], fixed_terms(formula)).items()
            for term in (terms or [""])
        ]
    )
    data = pd.concat(frames, ignore_index=True)
    rows = fit_batch(data, fixed, workers=workers, progress=progress, structure=structure)
    wanted = {t: GLMER_TERMS[t] for t in DEFAULT_TESTS}
    df = _ladder_df(frames[0], models)
    records = []
    for (sim, model), group in rows.groupby(["sim", "model"], sort=True):
        by_term = group.set_index("term")
        for test, term in wanted.items():
            if (test == "recency") != (model == "model 2"):
                continue
            z = float(by_term.loc[term, "z"]) if term in by_term.index else float("nan")
            common = {
                "sim": sim,
                "method": "glmer (maximal, ladder)",
                "test": test,
                "singular": bool(group["singular"].iloc[0]),
                "converged": bool(group["converged"].iloc[0]),
                "steps": group["steps"].iloc[0],
                "formula": group["formula"].iloc[0],
            }
            p_z = float(2 * stats_norm_sf(abs(z)))
            p_t = float(2 * stats_t_sf(abs(z), df[term])) if not np.isnan(z) else float("nan")
            records.append({**common, "reference": "normal", "p": p_z})
            records.append({**common, "reference": "t (between-within df)", "p": p_t})
    return pd.DataFrame(records)


def stats_norm_sf(z: float) -> float:
    """The normal upper tail (NaN in, NaN out)."""
    from scipy import stats

    return float(stats.norm.sf(z))


def stats_t_sf(z: float, df: float) -> float:
    """The t upper tail with ``df`` degrees of freedom."""
    from scipy import stats

    return float(stats.t.sf(z, df))


def _ladder_df(frame: pd.DataFrame, models: tuple[str, ...]) -> dict[str, float]:
    from tracktale.analysis.stats.mixed import between_within_df

    terms = ["Intercept", "complexity_z", "task_s", "complexity_z:task_s"]
    df = between_within_df(frame, terms)
    if "model 2" in models:
        df["recency_z"] = between_within_df(frame, [*terms, "recency_z"])["recency_z"]
    return df


def _between_within(tests: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """The same Wald statistics against t with between-within degrees of freedom."""
    import numpy as np
    from scipy import stats

    from tracktale.analysis.stats.inference import GLMER_TERMS
    from tracktale.analysis.stats.mixed import between_within_df

    terms = ["Intercept", "complexity_z", "task_s", "complexity_z:task_s"]
    df = {
        **between_within_df(frame, terms),
        "recency_z": between_within_df(frame, [*terms, "recency_z"])["recency_z"],
    }
    out = tests.copy()
    statistic = stats.norm.isf(out["p"].to_numpy() / 2)
    degrees = out["test"].map(lambda test: df[GLMER_TERMS[test]]).to_numpy(dtype=float)
    out["p"] = np.where(np.isnan(statistic), np.nan, 2 * stats.t.sf(statistic, degrees))
    out["reference"] = "t (between-within df)"
    return out


def _recency_lrt(rows: pd.DataFrame) -> pd.DataFrame:
    """Recency by the likelihood-ratio test of model 2 against model 1, per study."""
    import pandas as pd
    from scipy import stats

    fits = rows.drop_duplicates(["sim", "model"]).pivot(index="sim", columns="model")
    chisq = (2 * (fits[("logLik", "model 2")] - fits[("logLik", "model 1")])).clip(lower=0)
    df = fits[("npar", "model 2")] - fits[("npar", "model 1")]
    return pd.DataFrame(
        {
            "sim": fits.index,
            "method": "glmer",
            "reference": "likelihood ratio",
            "test": "recency",
            "p": stats.chi2.sf(chisq.to_numpy(dtype=float), df.to_numpy(dtype=float)),
        }
    )


def rejection_table(pvalues: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Rejection rate with its Wilson 95% interval per (method, reference, test).

    A failed fit (NaN p) is left out of the rate and its denominator and counted apart in
    ``failed``: counting it as a non-rejection would bias the rate down by the failure rate.
    ``simulations`` is the number of studies with a p-value, ``studies`` all of them.
    """
    import pandas as pd

    from tracktale.analysis.stats.proportions import wilson_interval

    records = []
    keys = ["method", "reference", "test"]
    for key, group in pvalues.groupby(keys, sort=False):
        valid = group["p"].dropna()
        n = len(valid)
        rejected = int((valid < alpha).sum())
        low, high = wilson_interval(rejected, n) if n else (float("nan"), float("nan"))
        records.append(
            {
                **dict(zip(keys, key, strict=True)),
                "studies": len(group),
                "simulations": n,
                "rejected": rejected,
                "rate": rejected / n if n else float("nan"),
                "ci_low": low,
                "ci_high": high,
                "failed": len(group) - n,
            }
        )
    return pd.DataFrame(records)
