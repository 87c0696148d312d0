"""People beside the models: FAA by horizon with participant-clustered intervals."""

import functools

import numpy as np
import pandas as pd
import pytest

from tracktale.analysis.arithmetic.human import (
    TABLE_STEM,
    human_horizon_table,
    people_and_models,
    write_people_section,
)
from tracktale.analysis.arithmetic.rows import ArithmeticOptions
from tracktale.stimuli.registry import get_paradigm


@functools.cache
def human_set():
    return get_paradigm("arithmetic").generate_set("human", 3)


def people(n=24, seed=1, perfect_horizon=None):
    """Participants who each answer one procedure per cell (12), right less often the longer
    it is, with a per-person ability; at ``perfect_horizon`` everyone is right."""
    rng = np.random.default_rng(seed)
    main = [item for item in human_set().items if item.role == "main"]
    rows = []
    for person in range(n):
        ability = rng.normal(0, 0.8)
        version = person % 4
        for item in main:
            if int(item.meta["example"]) != version:
                continue
            horizon = item.condition["horizon"]
            p = 1 / (1 + np.exp(-(3.3 - 0.13 * horizon + ability)))
            right = horizon == perfect_horizon or rng.random() < p
            response = item.answer if right else ("?" if rng.random() < 0.2 else "-1")
            rows.append((f"P{person}", item.item_id, "main", horizon, int(right), response))
    practice = next(item for item in human_set().items if item.role == "practice")
    rows.append(("P0", practice.item_id, "practice", 3, 0, None))
    columns = ["agent", "item_id", "role", "horizon", "correct", "response"]
    return pd.DataFrame(rows, columns=columns)


def model_results():
    rows = []
    for item in human_set().items:
        right = item.condition["horizon"] == 5
        answer = item.answer if right else "-1"
        rows.append(("org/model-1b", item.item_id, f"<answer>{answer}</answer>"))
    frame = pd.DataFrame(rows, columns=["model_id", "item_id", "output"])
    return frame.assign(revision=None, task="explicit")


def test_people_s_intervals_resample_participants_and_cover_the_pooled_accuracy():
    trials = people()
    table = human_horizon_table(trials).set_index("horizon")
    assert list(table.index) == [5, 10, 15]
    assert set(table["participants"]) == {24}
    assert set(table["n"]) == {24 * 4}  # 4 cells per horizon, practice left out
    main = trials[trials["role"] == "main"]
    pooled = main.groupby("horizon")["correct"].mean() * 100
    assert np.allclose(table["faa"], pooled)
    assert (table["ci_low"] < table["faa"]).all() and (table["faa"] < table["ci_high"]).all()
    assert set(table["interval"]) == {"participant bootstrap (BCa)"}
    assert table.loc[5, "faa"] > table.loc[15, "faa"]
    # PAR: answers that are numbers ("?" is not; "-1" and the right answers are).
    for horizon, group in main.groupby("horizon"):
        expected = 100 * (group["response"] != "?").mean()
        assert table.loc[horizon, "par"] == pytest.approx(expected)
    assert (table["par"] < 100).all()
    assert human_horizon_table(trials.drop(columns="response"))["par"].isna().all()


def test_an_all_correct_horizon_does_not_collapse_to_one_hundred_to_one_hundred():
    table = human_horizon_table(people(perfect_horizon=5)).set_index("horizon")
    assert table.loc[5, "faa"] == 100
    assert table.loc[5, "ci_high"] == 100
    assert table.loc[5, "ci_low"] < 97  # Wilson over 96 pooled trials: about 96.2
    assert table.loc[5, "interval"].startswith("Wilson")


def test_people_and_models_share_the_table_and_the_figure(tmp_path):
    options = ArithmeticOptions(n_boot=200)
    table = people_and_models(people(), model_results(), human_set(), options)
    assert list(table["model"].unique()) == ["people", "org/model-1b"]
    model = table[table["kind"] == "model"].set_index("horizon")
    assert model.loc[5, "faa"] == 100 and model.loc[15, "faa"] == 0
    assert set(model["par"]) == {100.0}
    assert list(model.index) == [5, 10, 15]  # the practice horizon is not a model point
    paths = write_people_section(people(), model_results(), human_set(), tmp_path, options)
    names = {path.name for path in paths}
    assert f"{TABLE_STEM}.csv" in names
    assert {"arithmetic_people_vs_models_by_horizon.png"} <= names
    written = pd.read_csv(tmp_path / f"{TABLE_STEM}.csv")
    assert len(written) == 6


def test_people_alone_and_rows_of_another_set(tmp_path):
    alone = write_people_section(people(), None, human_set(), tmp_path / "a")
    assert len(pd.read_csv(tmp_path / "a" / f"{TABLE_STEM}.csv")) == 3
    assert alone
    other = people().assign(item_id="not-in-this-set")
    assert write_people_section(other, None, human_set(), tmp_path / "b") == []


@pytest.mark.parametrize("seed", [2, 3])
def test_the_curve_falls_with_the_horizon(seed):
    table = human_horizon_table(people(n=48, seed=seed)).set_index("horizon")
    assert table.loc[5, "faa"] > table.loc[15, "faa"]


def test_probed_intermediate_values_are_scored_against_the_procedure():
    import json

    from tracktale.stimuli.arithmetic.executor import execute_context

    trials = people()
    main = trials["role"] == "main"
    texts = []
    for row, (item_id, is_main) in enumerate(zip(trials["item_id"], main, strict=True)):
        if not is_main:
            texts.append(None)
            continue
        values = execute_context(human_set().get(item_id).context).values
        right = str(values[3])  # S4, as the person computed it, or a slip on every third row
        entries = [{"variable": "S4", "value": right if row % 3 else str(values[3] + 1)},
                   {"variable": "S5", "value": ""}]  # fmt: skip
        texts.append(json.dumps(entries))
    table = human_horizon_table(trials.assign(intermediates=texts), stimulus_set=human_set())
    table = table.set_index("horizon")
    for horizon, group in trials[main].groupby("horizon"):
        rows = group.index.to_numpy()
        assert table.loc[horizon, "probed"] == len(rows)  # the empty S5 is not counted
        expected = 100 * (rows % 3 != 0).mean()
        assert table.loc[horizon, "intermediate_accuracy"] == pytest.approx(expected)
    assert human_horizon_table(trials)["intermediate_accuracy"].isna().all()
