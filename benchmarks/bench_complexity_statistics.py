"""Candidate statistics for the complexity item-permutation test, on the same null studies.

Issue 29 (second pass): the report's primary complexity test (the score of centred complexity
at the task-only model, items' complexity permuted across all items) rejected 6.7-7.0% of
300-study runs at item SD 0.5 under the null benchmarks' richer truth, whose item SD grows 2x
from C1 to C4 and whose participants have their own complexity slopes. This script puts, on
the same simulated studies (``NullScenario``'s streams, as ``bench_null_calibration.py``), the
report's statistic beside candidates that should resist that truth:

- ``score``: the report's (probability-scale summed residuals; not studentized);
- ``logit``: the OLS slope of the items' empirical logits, ``log((k + 0.5) / (n - k + 0.5))``,
  on complexity (the attenuation of a probability by a larger item variance is gone);
- ``logit HC2``: that slope over its HC2 standard error, the studentized statistic permuted
  (DiCiccio & Romano 2017: valid under heteroscedasticity asymptotically);
- ``rank`` / ``rank HC2``: the same on the items' ranks (a median is unmoved by the spread);
- ``score two-way``: the report's score over its two-way (item + participant - trial) SE, so
  the participants' own complexity slopes count;
- ``logit two-way``: the empirical-logit slope over a two-way SE: its HC2 item part plus the
  participants' part of its linearization (each trial's residual from its item's and its
  participant's means, over ``n_i p_i (1 - p_i)``) minus the trials' own;
- ``logit two-way HC3 t``: that studentized slope with an HC3 item part, referred to
  t(items - 2) instead of permuted (issue 29's third pass; the report's default since);
- ``report's default``: the report's complexity test as it is now
  (:func:`~tracktale.analysis.stats.permutation.complexity_test_of_trials`, its fixed seed).

Prints each rejection rate at alpha 0.05 with its Wilson 95% interval (``--complexity``: a
planted effect in log-odds per level, so the rates are power). Asserts nothing.

Run: .venv/bin/python benchmarks/bench_complexity_statistics.py [--studies 1000] [--seed 2]
[--participants 48] [--item-sd 0.5] [--participant-complexity-sd 0.15] [--item-sd-ratio 2]
[--only-t]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy.stats import rankdata

from tracktale.analysis.power.calibration import NullScenario, null_studies
from tracktale.analysis.stats.permutation import complexity_test_of_trials
from tracktale.analysis.stats.proportions import wilson_interval
from tracktale.stimuli.registry import get_paradigm

NAMES = (
    "score",
    "logit",
    "logit HC2",
    "rank",
    "rank HC2",
    "score two-way",
    "logit two-way",
    "logit two-way HC3 t",
    "report's default",
)


def _permuted(c: np.ndarray, permutations: int, rng: np.random.Generator) -> np.ndarray:
    """The observed centred covariate (row 0) and its random relabellings."""
    c = c - c.mean()
    drawn = rng.permuted(np.broadcast_to(c, (permutations, len(c))), axis=1)
    return np.vstack([c, drawn])


def _p(statistic: np.ndarray) -> float:
    extreme = np.sum(np.abs(statistic[1:]) >= abs(statistic[0]) * (1 - 1e-9))
    return float((1 + extreme) / len(statistic))


def _slope_hc2(y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """OLS slope of ``y`` on each row of ``w`` (centred) and its HC2 variance."""
    y = y - y.mean()
    sxx = float(w[0] @ w[0])
    b = w @ y / sxx
    e = y[None, :] - b[:, None] * w
    leverage = w**2 / sxx + 1 / len(y)
    return b, np.sum(w**2 * e**2 / (1 - leverage), axis=1) / sxx**2


def slope_p(y: np.ndarray, w: np.ndarray, studentize: bool) -> float:
    """OLS slope of ``y`` on each row of ``w`` (centred), optionally over its HC2 SE."""
    b, variance = _slope_hc2(y, w)
    return _p(b / np.sqrt(variance) if studentize else b)


def logit_two_way_p(analysed, w: np.ndarray, items: np.ndarray, logit: np.ndarray) -> float:
    """The empirical-logit slope over its HC2 item part + participant part - trial part."""
    which = np.searchsorted(items, analysed["item_id"].to_numpy())
    y = analysed["correct"].to_numpy(float)
    n = np.bincount(which, minlength=len(items)).astype(float)
    p = np.clip(np.bincount(which, weights=y, minlength=len(items)) / n, 0.02, 0.98)
    people, who = np.unique(analysed["agent"].to_numpy(), return_inverse=True)
    # Residuals from the item's mean and the participant's own (its intercept is not a slope).
    residual = y - p[which]
    residual -= (np.bincount(who, weights=residual) / np.bincount(who))[who]
    scaled = residual / (n * p * (1 - p))[which]
    cells = np.zeros((len(people), len(items)))
    np.add.at(cells, (who, which), scaled)
    squares = np.zeros(len(items))
    np.add.at(squares, which, scaled**2)
    sxx = float(w[0] @ w[0])
    b, item_part = _slope_hc2(logit, w)
    person_part = ((w @ cells.T) ** 2).sum(1) / sxx**2
    variance = np.maximum(item_part + person_part - (w**2) @ squares / sxx**2, item_part)
    return _p(b / np.sqrt(variance))


def two_way_score_p(analysed, w: np.ndarray, items: np.ndarray) -> float:
    """The report's score over its two-way SE (participants' + items' - trials' own)."""
    residual = analysed["correct"] - analysed.groupby("task")["correct"].transform("mean")
    people, who = np.unique(analysed["agent"].to_numpy(), return_inverse=True)
    which = np.searchsorted(items, analysed["item_id"].to_numpy())
    cells = np.zeros((len(people), len(items)))
    np.add.at(cells, (who, which), residual.to_numpy())
    squares = np.zeros(len(items))
    np.add.at(squares, which, residual.to_numpy() ** 2)
    by_item = cells.sum(0)
    item_part, person_part = (w**2) @ (by_item**2), ((w @ cells.T) ** 2).sum(1)
    variance = np.maximum(item_part + person_part - (w**2) @ squares, item_part)
    return _p(w @ by_item / np.sqrt(np.maximum(variance, person_part)))


def study_pvalues(
    analysed, permutations: int, rng: np.random.Generator, only: tuple[str, ...] = NAMES
) -> dict[str, float]:
    """Every candidate's p on one analysed study (``only``: these, without permuting)."""
    if set(only) <= {"logit two-way HC3 t", "report's default"}:
        p = complexity_test_of_trials(analysed, statistic="logit-hc3-t").p
        return dict.fromkeys(only, p)  # the same test while it is the report's default
    grouped = analysed.groupby("item_id", sort=True)
    k, n = grouped["correct"].sum().to_numpy(float), grouped.size().to_numpy(float)
    w = _permuted(grouped["complexity"].first().to_numpy(float), permutations, rng)
    logit = np.log((k + 0.5) / (n - k + 0.5))
    return {
        "score": complexity_test_of_trials(
            analysed, permutations=permutations, statistic="score"
        ).p,
        "logit": slope_p(logit, w, False),
        "logit HC2": slope_p(logit, w, True),
        "rank": slope_p(rankdata(logit), w, False),
        "rank HC2": slope_p(rankdata(logit), w, True),
        "score two-way": two_way_score_p(analysed, w, np.asarray(grouped.size().index)),
        "logit two-way": logit_two_way_p(analysed, w, np.asarray(grouped.size().index), logit),
        "logit two-way HC3 t": complexity_test_of_trials(analysed, statistic="logit-hc3-t").p,
        "report's default": complexity_test_of_trials(analysed, permutations=permutations).p,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--participants", type=int, default=48)
    parser.add_argument("--item-sd", type=float, default=0.5)
    parser.add_argument("--permutations", type=int, default=999)
    parser.add_argument("--participant-complexity-sd", type=float, default=0.15)
    parser.add_argument("--item-sd-ratio", type=float, default=2.0)
    parser.add_argument("--complexity", type=float, default=0.0, help="an effect: power")
    parser.add_argument(
        "--only-t",
        action="store_true",
        help="only the HC3 t test (the report's default): fast, no relabelling",
    )
    args = parser.parse_args(argv)
    names = ("logit two-way HC3 t",) if args.only_t else NAMES
    scenario = NullScenario(
        participants=args.participants,
        item_sd=args.item_sd,
        seed=args.seed,
        participant_complexity_sd=args.participant_complexity_sd,
        item_sd_ratio=args.item_sd_ratio,
        complexity=args.complexity,
    )
    print(f"{scenario}\nstart: load average {os.getloadavg()[0]:.1f}")
    stimulus_set = get_paradigm("narrative").generate_set("human", 1)
    rng = np.random.default_rng(args.seed)
    rejected = dict.fromkeys(names, 0)
    started = time.perf_counter()
    for _, analysed in null_studies(stimulus_set, scenario, range(args.studies)):
        for name, p in study_pvalues(analysed, args.permutations, rng, names).items():
            rejected[name] += p < 0.05
    seconds, load = time.perf_counter() - started, os.getloadavg()[0]
    drawn = "no relabelling" if args.only_t else f"{args.permutations} relabellings each"
    print(f"{args.studies} studies, {drawn}, {seconds:.0f} s; "
          f"end: load average {load:.1f}")  # fmt: skip
    for name, count in rejected.items():
        low, high = wilson_interval(count, args.studies)
        print(f"  {name:<18}{100 * count / args.studies:5.1f}% [{100 * low:.1f}, {100 * high:.1f}]")


if __name__ == "__main__":
    main()
