"""A fast statistical simulator of human participants in the actual trial design.

Participants answer the items of a human-protocol stimulus set in the study's own design
(:mod:`tracktale.experiment.study.design`): four lists crossing a seeded Latin square of task
formats within every design cell with the order of the two format blocks, so every item is seen
in both formats across participants and every participant gets half of each cell in each format.
Accuracy follows a logistic model with the GLM's terms plus participant and item random
intercepts and, when asked for, random slopes (task and complexity by participant, task by item)
and item intercepts whose SD differs across complexity levels; a share of participants can be
simulated as guessers who answer at chance (to exercise the exclusion rules). The defaults of
:class:`SimulationParams` have no slopes (they reproduce the paper's cells);
:data:`RICHER_TRUTH` is the richer truth the null benchmarks and power runs draw from, so that a
model that fits intercepts only is not calibrated by construction.

This is the analysis' own simulator (for parameter recovery, power and report tests); the study
stage has HTTP-level simulated participants that click through the real front end.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from tracktale.analysis.data.load import HumanData
from tracktale.errors import TracktaleError
from tracktale.stimulus_set import StimulusSet
from tracktale.trial import ParticipantRecord

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


@dataclass(frozen=True)
class SimulationParams:
    """The logistic model people are simulated from (log-odds units).

    The defaults are solved so that, in the human design, the expected data reproduce the
    paper's GLM under its coding (explicit +0.5, implicit -0.5: complexity -0.38, complexity x
    task -0.09; the participant and item random effects and the timeouts flatten
    population-averaged slopes, so the person-level ones are steeper) and its accuracies of
    75.3% (explicit) and 79.3% (implicit). The expected cell accuracies are then explicit 87%
    at C1 to 65% at C4 (paper: 87.2% to 65.0%) and implicit 87% to 72% (paper: 89.0% to
    76.0%; the paper's implicit end points and its 79.3% overall cannot both lie on one
    logistic line).

    Attributes:
        intercept: Log-odds of a correct answer at mean complexity, averaged over tasks.
        complexity: Effect of one complexity level (centred).
        task: Explicit minus implicit (the paper's sum coding, explicit +0.5, as the GLM).
        interaction: Complexity x task (explicit slope minus implicit slope).
        recency: Effect of the focus position (centred); the paper found none.
        participant_sd: SD of participants' random intercepts.
        item_sd: SD of items' random intercepts.
        guessers: Share of participants who answer at chance (50%) on every trial.
        participant_task_sd: SD of participants' random task slopes (log-odds, explicit minus
            implicit).
        participant_complexity_sd: SD of participants' random complexity slopes (log-odds per
            level).
        item_task_sd: SD of items' random task slopes (each item is seen in both formats).
        item_sd_ratio: Ratio of the item-intercept SD at the highest complexity level to the
            lowest; the SDs of the levels between are spaced geometrically, with their
            geometric mean ``item_sd`` (1: the same SD at every level).
        filler_accuracy: Accuracy on the comprehension questions of attentive participants.
        timeout_rate: Share of trials that time out (scored incorrect).
    """

    intercept: float = 1.47
    complexity: float = -0.43
    task: float = -0.24
    interaction: float = -0.10
    recency: float = 0.0
    participant_sd: float = 0.5
    item_sd: float = 0.2
    guessers: float = 0.0
    filler_accuracy: float = 0.92
    timeout_rate: float = 0.02
    participant_task_sd: float = 0.0
    participant_complexity_sd: float = 0.0
    item_task_sd: float = 0.0
    item_sd_ratio: float = 1.0

    def to_dict(self) -> dict[str, float]:
        """Plain data for reports."""
        return asdict(self)

    def richer(self) -> SimulationParams:
        """These parameters with the richer truth's random effects and guessers.

        The random slopes, guessers and unequal item variance of :data:`RICHER_TRUTH` replace
        those of ``self``; the fixed effects are kept.
        """
        return replace(self, **RICHER_TRUTH)


RICHER_TRUTH: dict[str, float] = {
    "participant_task_sd": 0.5,
    "item_task_sd": 0.4,
    "participant_complexity_sd": 0.15,
    "guessers": 0.1,
    "item_sd_ratio": 2.0,
}
"""The richer truth of the null benchmarks and power runs (issue 29): by-participant task slope
SD 0.5, by-item task slope SD 0.4, by-participant complexity slope SD 0.15, 10% guessers, and an
item SD twice as large at the highest complexity level as at the lowest."""


@dataclass(frozen=True)
class HumanDesign:
    """The trials one participant of each list sees, as parallel columns.

    Attributes:
        trials: One row per (list, item): ``list_id``, ``item_id``, ``role``, ``task``,
            ``block``, ``complexity``, ``focus``, ``complexity_c``, ``focus_c``, ``task_s``,
            ``answer``.
        stimulus_sha256: The stimulus set the design comes from.
        design_seed: The study's design seed (which half of each cell is explicit in L1/L2).
    """

    trials: pd.DataFrame
    stimulus_sha256: str
    design_seed: int = 1


def human_design(stimulus_set: StimulusSet, design_seed: int = 1) -> HumanDesign:
    """The study's own list design of a human-protocol narrative set (four lists).

    The lists are built by :func:`tracktale.experiment.study.design.build_session`, the code the
    browser study and the lab mode run: the seeded Latin square of formats within every design
    cell, the blocked formats in both orders, practice before each block and the fillers.

    Raises:
        TracktaleError: When the set has no main items with complexity and focus.
    """
    import pandas as pd

    from tracktale.experiment.study.design import LIST_IDS, DesignConfig, build_session

    main = [item for item in stimulus_set if item.role == "main"]
    if not main or any("complexity" not in item.condition for item in main):
        raise TracktaleError("the stimulus set has no main narrative items to simulate")
    rows = []
    for list_id in LIST_IDS:
        plan = build_session(stimulus_set, list_id, 0, DesignConfig(seed=design_seed))
        for planned in plan.trials:
            item = stimulus_set.get(planned.item_id)
            rows.append(
                {
                    "item_id": item.item_id,
                    "role": item.role,
                    "answer": item.answer,
                    "complexity": item.condition.get("complexity"),
                    "focus": item.condition.get("focus"),
                    "list_id": list_id,
                    "task": planned.task,
                    "block": planned.block,
                }
            )
    trials = pd.DataFrame(rows)
    analysed = trials[(trials["role"] == "main") & (trials["list_id"] == LIST_IDS[0])]
    trials["complexity_c"] = trials["complexity"].astype(float) - analysed["complexity"].mean()
    trials["focus_c"] = trials["focus"].astype(float) - analysed["focus"].astype(float).mean()
    trials["task_s"] = (trials["task"] == "explicit").astype(float) - 0.5
    return HumanDesign(trials=trials, stimulus_sha256=stimulus_set.sha256, design_seed=design_seed)


def simulate_outcomes(
    design: HumanDesign, n_participants: int, params: SimulationParams, rng: np.random.Generator
) -> pd.DataFrame:
    """Simulated trials in the tidy table's columns (fast: no per-trial records).

    Participants are assigned to the lists in turn (as the study fills the least-filled list).
    Returns one row per trial with ``agent``,
    ``list_id``, ``item_id``, ``role``, ``task``, ``complexity``, ``focus``, ``correct``,
    ``timed_out`` and ``guesser``.
    """
    import numpy as np
    import pandas as pd

    if n_participants < 1:
        raise TracktaleError(f"cannot simulate {n_participants} participants")
    trials = design.trials
    lists = list(dict.fromkeys(trials["list_id"]))
    rows_of = {k: np.flatnonzero((trials["list_id"] == k).to_numpy()) for k in lists}
    assigned = [rows_of[lists[i % len(lists)]] for i in range(n_participants)]
    rows = np.concatenate(assigned)
    who = np.repeat(np.arange(n_participants), [len(r) for r in assigned])
    out = trials.iloc[rows].reset_index(drop=True)
    item_codes, item_ids = pd.factorize(out["item_id"])
    complexity, task = out["complexity_c"].to_numpy(), out["task_s"].to_numpy()
    item_scale = _item_sd_scale(out, item_codes, len(item_ids), params.item_sd_ratio)
    item_effect = rng.normal(0, params.item_sd, len(item_ids)) * item_scale
    person_effect = rng.normal(0, params.participant_sd, n_participants)
    guesser = rng.random(n_participants) < params.guessers
    # Slopes are drawn after the draws above, so studies without slopes keep their old streams.
    slopes = _slope_effects(params, n_participants, len(item_ids), rng)
    logit = (
        params.intercept
        + person_effect[who]
        + item_effect[item_codes]
        + (params.complexity + slopes["participant_complexity"][who]) * complexity
        + (params.task + slopes["participant_task"][who] + slopes["item_task"][item_codes]) * task
        + params.interaction * complexity * task
        + params.recency * out["focus_c"].to_numpy()
    )
    p = 1 / (1 + np.exp(-logit))
    p = np.where((out["role"] == "filler").to_numpy(), params.filler_accuracy, p)
    p = np.where(guesser[who], 0.5, p)
    timed_out = rng.random(len(out)) < params.timeout_rate
    correct = (rng.random(len(out)) < p) & ~timed_out
    width = len(str(n_participants))
    names = np.array([f"sim{i + 1:0{width}d}" for i in range(n_participants)])
    out = out.drop(columns=["complexity_c", "focus_c", "task_s"])
    out.insert(0, "agent", names[who])
    out["correct"] = correct.astype(float)
    out["timed_out"] = timed_out.astype(float)
    out["guesser"] = guesser[who]
    return out


def population_cell_accuracy(design: HumanDesign, params: SimulationParams) -> dict:
    """The true accuracy of each task x complexity cell over participants *and* items.

    The mean of the inverse logit over the normal distribution of the random effects a random
    participant and a random item of the cell bring (intercepts, slopes, the level's item SD),
    by Gauss-Hermite quadrature; guessers at 0.5 and timeouts (scored wrong) are mixed in. Task
    is coded as the simulator codes it: explicit +0.5, implicit -0.5.

    Returns:
        ``(task, complexity level)`` -> accuracy, for the main items.
    """
    import numpy as np
    import pandas as pd

    main = design.trials[design.trials["role"] == "main"]
    codes, ids = pd.factorize(main["item_id"])
    scale = _item_sd_scale(main, codes, len(ids), params.item_sd_ratio)
    main = main.assign(scale=scale[codes])
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    weights = weights / weights.sum()
    out = {}
    for (task, level), cell in main.groupby(["task", "complexity"]):
        c, t = float(cell["complexity_c"].iloc[0]), float(cell["task_s"].iloc[0])
        eta = params.intercept + params.complexity * c + params.task * t
        eta += params.interaction * c * t
        variance = (
            params.participant_sd**2
            + (params.item_sd * float(cell["scale"].iloc[0])) ** 2
            + t**2 * (params.participant_task_sd**2 + params.item_task_sd**2)
            + c**2 * params.participant_complexity_sd**2
        )
        attentive = float(weights @ (1 / (1 + np.exp(-(eta + np.sqrt(variance) * nodes)))))
        accuracy = (1 - params.guessers) * attentive + params.guessers * 0.5
        out[(task, level)] = accuracy * (1 - params.timeout_rate)
    return out


def _slope_effects(
    params: SimulationParams, n_participants: int, n_items: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Each participant's and item's random slopes (zeros, and no draws, where the SD is 0)."""
    import numpy as np

    sizes = {
        "participant_complexity": (params.participant_complexity_sd, n_participants),
        "participant_task": (params.participant_task_sd, n_participants),
        "item_task": (params.item_task_sd, n_items),
    }
    return {
        name: rng.normal(0, sd, size) if sd > 0 else np.zeros(size)
        for name, (sd, size) in sizes.items()
    }


def _item_sd_scale(out: pd.DataFrame, codes: np.ndarray, n_items: int, ratio: float) -> np.ndarray:
    """Per item, its level's SD relative to ``item_sd`` (geometric spacing, geometric mean 1)."""
    import numpy as np

    scale = np.ones(n_items)
    if ratio == 1.0:
        return scale
    if ratio <= 0:
        raise TracktaleError(f"item_sd_ratio must be positive, not {ratio}")
    level = out["complexity"].astype(float).to_numpy()
    levels = np.unique(level[~np.isnan(level)])
    if len(levels) < 2:
        return scale
    position = (level - levels.mean()) / (levels.max() - levels.min())
    per_row = np.where(np.isnan(position), 1.0, ratio**position)
    scale[codes] = per_row
    return scale


def simulate_human_data(
    stimulus_set: StimulusSet,
    n_participants: int,
    params: SimulationParams | None = None,
    seed: int = 0,
    study_id: str = "simulated",
) -> HumanData:
    """Simulated trials and participants with every field of the trial contract.

    Args:
        stimulus_set: A human-protocol set (main items, fillers, practice).
        n_participants: How many participants.
        params: The generating model.
        seed: Seed of every random draw.
        study_id: The study id written into the records.

    Returns:
        Trials (:class:`~tracktale.trial.TrialRecord` fields, ``source == "simulated"``) and
        participants (:class:`~tracktale.trial.ParticipantRecord` fields).
    """
    import numpy as np
    import pandas as pd

    params = params or SimulationParams()
    rng = np.random.default_rng(seed)
    design = human_design(stimulus_set)
    outcomes = simulate_outcomes(design, n_participants, params, rng)
    from tracktale.experiment.study.design import DesignConfig, build_session, session_seed_for

    config = DesignConfig(seed=design.design_seed)
    records = []
    for participant, trials in outcomes.groupby("agent", sort=True):
        # Each participant's own session (trial order, filler positions, sides), as the study
        # would build it; the outcomes are those simulated for the items.
        by_item = {row.item_id: row for row in trials.itertuples(index=False)}
        list_id = trials["list_id"].iloc[0]
        seed = session_seed_for(config.seed, study_id, participant)
        for planned in build_session(stimulus_set, list_id, seed, config).trials:
            row = by_item[planned.item_id]
            item = stimulus_set.get(row.item_id)
            records.append(_trial_record(row, item, participant, planned, study_id, design, rng))
    participants = pd.DataFrame(
        [
            ParticipantRecord(
                participant_id=pid,
                study_id=study_id,
                source="simulated",
                list_id=group["list_id"].iloc[0],
                status="completed",
                attentive=True,
                no_ai_assistance=True,
                age=int(rng.integers(18, 70)),
                gender=str(rng.choice(["female", "male", "prefer not to say"])),
                native_language="English",
                stimulus_sha256=design.stimulus_sha256,
            ).to_dict()
            for pid, group in outcomes.groupby("agent", sort=True)
        ]
    )
    return HumanData(pd.DataFrame(records), participants, origin="simulated participants")


def _trial_record(
    row: Any,
    item: Any,
    participant: str,
    planned: Any,
    study_id: str,
    design: HumanDesign,
    rng: np.random.Generator,
) -> dict[str, Any]:
    correct, timed_out = bool(row.correct), bool(row.timed_out)
    two_choice = row.task != "explicit"
    if timed_out:
        response = None
    elif row.task == "explicit":
        response = item.answer if correct else _wrong_container(item)
    else:
        response = (item.choice.good if correct else item.choice.bad).strip()
    return {
        "client_trial_id": f"{participant}-{planned.trial_index}",
        "participant_id": participant,
        "study_id": study_id,
        "source": "simulated",
        "stimulus_sha256": design.stimulus_sha256,
        "item_id": row.item_id,
        "role": row.role,
        "task": row.task,
        "list_id": row.list_id,
        "block": planned.block,
        "trial_index": planned.trial_index,
        "response": response,
        "correct": correct,
        "timed_out": timed_out,
        "reading_time_ms": float(min(40000.0, rng.lognormal(9.3, 0.35))),
        "reading_timed_out": False,
        "response_time_ms": None if timed_out else float(min(15000.0, rng.lognormal(8.1, 0.4))),
        "good_side": planned.good_side if two_choice else None,
        "screen_width": 1280,
        "screen_height": 800,
        "blur_count": 0,
        "hidden_count": 0,
        "restarts": 0,
    }


def _wrong_container(item: Any) -> str:
    containers = [c.get("noun") for c in item.truth.get("containers", []) if isinstance(c, dict)]
    wrong = [c for c in containers if c and c != item.answer]
    return wrong[0] if wrong else "nothing"


def simulate_model_results(
    stimulus_set: StimulusSet,
    models: dict[str, list[str]] | list[str],
    seed: int = 0,
    complexity_slope: float = -0.3,
) -> pd.DataFrame:
    """Results-store rows for made-up models, for tests and demonstrations.

    A model's ability grows with its nominal size (from :mod:`tracktale.analysis.data.catalog`),
    base models are near chance on the explicit task, and checkpoint revisions (``stepN``) are
    weaker the earlier they are. Sequence log-probabilities fall with story length and are lower
    for the pseudoword and improbable templates.

    Args:
        stimulus_set: The set the models were "scored" on (its main items are used).
        models: Model ids, or model id -> revisions (``""`` for the final model).
        seed: Seed of every random draw.
        complexity_slope: Log-odds change per complexity level.

    Returns:
        One row per (model, revision, item, task) with the results store's columns.
    """
    import numpy as np
    import pandas as pd

    from tracktale.analysis.data.catalog import describe_model, training_step

    rng = np.random.default_rng(seed)
    revisions = models if isinstance(models, dict) else {m: [""] for m in models}
    items = [item for item in stimulus_set if item.role == "main"]
    rows = []
    for model_id, model_revisions in revisions.items():
        description = describe_model(model_id)
        size = description.nominal_parameters
        ability = -1.0 + 0.9 * np.log10((1e9 if math.isnan(size) else size) / 1e7)
        for revision in model_revisions:
            step = training_step(revision)
            trained = 1.0 if math.isnan(step) else min(1.0, np.log10(step + 10) / np.log10(143010))
            for item in items:
                rows += _model_rows(
                    item,
                    model_id,
                    revision,
                    description,
                    ability * trained,
                    complexity_slope,
                    stimulus_set.sha256,
                    rng,
                )
    return pd.DataFrame(rows)


_TEMPLATE_PENALTY = {"standard": 0.0, "pseudoword": -50.0, "improbable": -28.0}


def _model_rows(
    item: Any,
    model_id: str,
    revision: str,
    description: Any,
    ability: float,
    slope: float,
    sha: str,
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    complexity = float(item.condition.get("complexity", 1))
    common = {
        "model_id": model_id,
        "revision": revision,
        "resolved_sha": hashlib.sha1(f"{model_id}@{revision}".encode()).hexdigest(),
        "item_id": item.item_id,
        "stimulus_sha256": sha,
        "paradigm": item.paradigm,
        "backend": "simulated",
        "dtype": "float32",
        "device": "cpu",
        "bos_policy": "none",
        "n_parameters": description.nominal_parameters,
    }
    rows = []
    for task in ("implicit", "explicit"):
        logit = ability + slope * (complexity - 3)
        if task == "explicit" and not description.instruct:
            logit = -1.5
        correct = bool(rng.random() < 1 / (1 + math.exp(-logit)))
        good = float(rng.normal(-20, 3))
        bad = good - (1 if correct else -1) * float(rng.exponential(1.5))
        rows.append(
            {
                **common,
                "task": task,
                "correct": correct,
                "correct_calibrated": bool(rng.random() < 1 / (1 + math.exp(-logit - 0.1))),
                "logprob_good": good if task == "implicit" else None,
                "logprob_bad": bad if task == "implicit" else None,
                "n_tokens_good": 14 if task == "implicit" else None,
                "n_tokens_bad": 14 if task == "implicit" else None,
                "output": (item.answer if correct else "table") if task == "explicit" else None,
                "prompt_format": ("chat" if description.instruct else "plain")
                if task == "explicit"
                else None,
            }
        )
    n_words = float(item.meta.get("n_words", 40))
    penalty = _TEMPLATE_PENALTY.get(str(item.condition.get("template")), 0.0)
    rows.append(
        {
            **common,
            "task": "sequence",
            "correct": None,
            "logprob": float(-3.2 * n_words + penalty + rng.normal(0, 6)),
            "n_tokens": int(1.3 * n_words),
        }
    )
    return rows
