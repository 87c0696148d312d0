"""People on the boxes items: State-EM and Step-EM beside the models', in Table 1's layout.

The source paper has no human data; this row is ours. Each main trial's stored response (the
grid written out in the model's answer format by the study server) is scored with the same
``score_response`` as a model's output, so both rows use one parse and one metric. A trial
whose time ran out has no response and scores as an unparsed answer (Step-EM and State-EM 0),
as a model output without any state does under our rules.

Intervals resample participants (a participant's trials are not independent): the pooled
mean of a cell with a BCa bootstrap over participants, the interval the narrative analysis
gives human accuracy (:func:`tracktale.analysis.stats.proportions.clustered_accuracy_interval`); the
models' rows keep their bootstrap over instances.
"""

from __future__ import annotations

import pandas as pd

from tracktale.analysis.boxes.scores import METRICS, order_rows, row_factors, scored_items
from tracktale.analysis.stats.proportions import clustered_accuracy_interval
from tracktale.stimulus_set import StimulusSet

HUMAN_MODEL_ID = "people"
"""The ``model_id`` of the human row."""


def human_scored_items(trials: pd.DataFrame, stimulus_set: StimulusSet) -> pd.DataFrame:
    """One row per human main trial on the set's boxes items, scored like a model's output.

    Args:
        trials: Human trials with ``agent`` (or ``participant_id``), ``item_id``, ``task`` and
            ``response`` (``None``/NaN after a timeout); practice trials are left out.
        stimulus_set: The boxes set the study showed.

    Returns:
        :func:`~tracktale.analysis.boxes.scores.scored_items` rows with ``model_id``
        :data:`HUMAN_MODEL_ID` and the participant in ``participant``.
    """
    agent = "agent" if "agent" in trials.columns else "participant_id"
    main = {item.item_id for item in stimulus_set.select(role="main")}
    rows = trials[trials["item_id"].isin(list(main))].reset_index(drop=True)
    if rows.empty:
        return pd.DataFrame()
    response = rows["response"].where(rows["response"].notna(), "")
    # One "model" per participant makes each trial a row of its own for scored_items.
    as_results = pd.DataFrame(
        {
            "model_id": rows[agent].astype(str),
            "revision": "",
            "item_id": rows["item_id"],
            "task": rows["task"],
            "output": response.astype(str),
        }
    )
    scored = scored_items(as_results, stimulus_set)
    scored = scored.rename(columns={"model_id": "participant"})
    scored.insert(0, "model_id", HUMAN_MODEL_ID)
    return scored


def human_final_step_table(scored: pd.DataFrame, factors: list[str] | None = None) -> pd.DataFrame:
    """Table 1 in long form for people, with participant-clustered intervals.

    Args:
        scored: Rows from :func:`human_scored_items`.
        factors: The row factors (default: those that vary in ``scored``).

    Returns:
        The columns of :func:`~tracktale.analysis.boxes.scores.final_step_table` (``n`` are
        trials), plus ``participants`` and ``interval`` (how the intervals were made).
    """
    factors = factors if factors is not None else row_factors(scored)
    final = scored[scored["final"].astype(bool)]
    rows = []
    keys = [*factors, "shots"]
    for key, group in final.groupby(keys, sort=True, dropna=False):
        row = {"model_id": HUMAN_MODEL_ID, "revision": "", **dict(zip(keys, key, strict=True))}
        row["n"] = len(group)
        for metric in METRICS:
            mean, low, high, method = clustered_accuracy_interval(
                group[metric].to_numpy(dtype=float), group["participant"].to_numpy()
            )
            row |= {metric: mean, f"{metric}_low": low, f"{metric}_high": high}
            row["interval"] = method
        row["parsed"] = float(group["parsed"].mean())
        row["parse_rate"] = float(group["parse_rate"].mean())
        row["participants"] = int(group["participant"].nunique())
        rows.append(row)
    return order_rows(pd.DataFrame(rows))


def simulate_human_trials(
    stimulus_set: StimulusSet, n_participants: int = 24, seed: int = 1
) -> pd.DataFrame:
    """Simulated people on a boxes human set, without a server (tests, power analysis).

    Each participant gets the session the study would give (the list the server assigns,
    :func:`tracktale.experiment.study.design.assign_list`, nobody dropping out), answers every
    trial as :meth:`tracktale.experiment.paradigms.boxes.BoxesStudy.behave` does (per-state
    errors that grow with the steps), and is scored as the server scores.

    Returns:
        One row per trial: ``agent``, ``list_id``, ``trial_index``, ``role``, ``item_id``,
        ``task``, ``response`` (the model-format text; ``None`` after a timeout), ``correct``.
    """
    import random
    from collections import Counter

    from tracktale.experiment.paradigms import get_human_study
    from tracktale.experiment.simulation.run import draw_person
    from tracktale.experiment.study.config import Timing
    from tracktale.experiment.study.design import DesignConfig, assign_list

    study = get_human_study("boxes")
    timing = dict(Timing(**study.timing).__dict__)
    master = random.Random(f"boxes-simulate|{seed}")
    rows = []
    lists: Counter[str] = Counter()
    for index in range(n_participants):
        person = draw_person(master, index)
        rng = random.Random(master.getrandbits(64))
        list_id = assign_list(lists)
        lists[list_id] += 1
        plan = study.build_session(stimulus_set, list_id, rng.getrandbits(48), DesignConfig())
        for planned in plan.trials:
            item = stimulus_set.get(planned.item_id)
            shown = study.served_content(item, planned)
            body = study.behave(rng, person, item, shown, timing)
            scored = study.score_trial(item, planned, body["response"], "one-answer")
            rows.append(
                {
                    "agent": person.prolific_pid,
                    "list_id": list_id,
                    "trial_index": planned.trial_index,
                    "role": planned.role,
                    "item_id": item.item_id,
                    "task": planned.task,
                    "response": scored.response,
                    "correct": scored.correct,
                }
            )
    return pd.DataFrame(rows)
