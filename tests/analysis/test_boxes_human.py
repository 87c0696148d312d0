"""People beside models in the boxes Table 1: scoring, clustered intervals, the layout."""

from __future__ import annotations

import pandas as pd
import pytest

from tracktale.analysis.boxes import boxes_section
from tracktale.analysis.boxes.human_rows import (
    HUMAN_MODEL_ID,
    human_final_step_table,
    human_scored_items,
    simulate_human_trials,
)
from tracktale.analysis.stats.proportions import CLUSTER_BOOTSTRAP
from tracktale.stimuli.registry import get_paradigm


@pytest.fixture(scope="module")
def boxes_set():
    return get_paradigm("boxes").generate_set("human", 1)


@pytest.fixture(scope="module")
def people(boxes_set):
    return simulate_human_trials(boxes_set, n_participants=24, seed=3)


def test_simulated_people_answer_like_the_server_scores(boxes_set, people):
    assert len(people) == 24 * 18 and set(people["list_id"]) == {"L1", "L2", "L3", "L4"}
    scored = human_scored_items(people, boxes_set)
    assert len(scored) == 24 * 16  # practice left out
    main = people[people["role"] == "main"].set_index(["agent", "item_id"])
    joined = scored.set_index(["participant", "item_id"])
    assert (joined["step_em"] == main.loc[joined.index, "correct"].astype(float)).all()
    # Step-EM falls with the number of steps.
    by_steps = scored.groupby("n_steps")["step_em"].mean()
    assert by_steps[3] > by_steps[6] + 0.1, by_steps


def test_simulated_people_get_the_lists_the_study_server_assigns(people):
    from collections import Counter

    from tracktale.experiment.study.design import LIST_IDS, assign_list

    counts: Counter[str] = Counter()
    served = []
    for _ in range(24):
        served.append(assign_list(counts))
        counts[served[-1]] += 1
    assert served == [LIST_IDS[index % len(LIST_IDS)] for index in range(24)]
    by_agent = people.drop_duplicates("agent")["list_id"].tolist()
    assert by_agent == served


def test_human_cells_have_participant_clustered_intervals(boxes_set, people):
    table = human_final_step_table(human_scored_items(people, boxes_set))
    assert len(table) == 8 and set(table["model_id"]) == {HUMAN_MODEL_ID}
    assert set(table["interval"]) == {CLUSTER_BOOTSTRAP}
    assert set(table["n"]) == {48} and set(table["participants"]) == {24}
    assert (
        (table["step_em_low"] <= table["step_em"]) & (table["step_em"] <= table["step_em_high"])
    ).all()
    assert (table["state_em"] > table["step_em"]).all()


def test_timeouts_score_zero(boxes_set, people):
    timed_out = people.copy()
    timed_out.loc[timed_out.index[2], "response"] = None
    scored = human_scored_items(timed_out, boxes_set)
    row = scored[scored["item_id"] == timed_out.loc[timed_out.index[2], "item_id"]]
    row = row[row["participant"] == timed_out.loc[timed_out.index[2], "agent"]]
    assert row[["step_em", "state_em", "parsed"]].iloc[0].tolist() == [0, 0.0, False]


def test_table1_puts_people_above_the_models(boxes_set, people, tmp_path):
    items = boxes_set.select(role="main")
    results = pd.DataFrame(
        {
            "model_id": "some/model",
            "revision": None,
            "item_id": [item.item_id for item in items],
            "task": "explicit",
            "output": [item.answer if i % 3 else "no idea" for i, item in enumerate(items)],
        }
    )
    paths = boxes_section(results, boxes_set, tmp_path, n_boot=200, human=people)
    names = {path.name for path in paths}
    assert {"boxes_table1.csv", "boxes_human_final_step.csv", "boxes_final_step.csv"} <= names
    layout = pd.read_csv(tmp_path / "boxes_table1.csv")
    assert list(layout.columns) == ["model", "instruction", "language", "3-shot", "5-shot"]
    assert layout["model"].tolist() == [HUMAN_MODEL_ID] * 4 + ["some/model"] * 4
    assert all(" / " in cell for cell in layout["3-shot"])
    # Only people: their rows alone.
    alone = boxes_section(results.iloc[0:0], boxes_set, tmp_path / "alone", n_boot=50, human=people)
    assert alone and set(pd.read_csv(tmp_path / "alone" / "boxes_table1.csv")["model"]) == {
        HUMAN_MODEL_ID
    }
