"""Boxes analysis: transitions on hand-built trajectories, aggregation, tables and figures."""

from collections import Counter

import pandas as pd
import pytest

from tracktale.analysis.boxes import boxes_section
from tracktale.analysis.boxes.scores import (
    bootstrap_mean,
    final_step_table,
    paired_compression,
    probing_table,
    scored_items,
)
from tracktale.analysis.boxes.tables import paper_layout
from tracktale.analysis.boxes.transitions import (
    CATEGORIES,
    label_states,
    label_transitions,
    transition_counts,
)
from tracktale.analysis.report.tables import to_latex
from tracktale.errors import TracktaleError
from tracktale.stimuli.boxes import PARADIGM


def test_every_transition_category_on_a_hand_built_trajectory():
    # Eight states; the step changes states 0-3 (False -> True) and leaves 4-7 untouched.
    before = [False, False, False, False, True, False, True, False]
    now = [True, True, True, True, True, False, True, False]
    answered_before = "FFTT" + "TFFT"  # states 2, 3, 6, 7 were already wrong
    answered_now = "TFTF" + "TTTT"
    assert label_states(before, now, answered_before, answered_now) == [
        "CU",  # correct before, updated, correct now
        "NFU",  # correct before, updated, still the old value
        "VA",  # wrong before (already True), updated, so now correct without changing
        "DW",  # wrong before, updated, and changed away from the new truth
        "MC",  # correct, untouched, kept
        "HU-IO",  # correct, untouched, changed to a wrong value
        "HU-AC",  # wrong, untouched, changed back to the right value
        "DR",  # wrong, untouched, the error kept
    ]
    assert label_states([True, False], [True, False], "T?", "?F") == ["NP", "NP-prev"]
    assert label_states([True], [True], "!", "T") == ["NP-prev"]


def _results(stimulus_set, answer_for, model="toy/model", revision=None):
    return pd.DataFrame(
        [
            {
                "model_id": model,
                "revision": revision,
                "item_id": item.item_id,
                "task": "explicit",
                "output": answer_for(item),
            }
            for item in stimulus_set
        ]
    )


@pytest.fixture(scope="module")
def probed():
    overrides = {"boxes": 4, "max_steps": 3, "instances": 4, "compress": 1, "shots": [2]}
    return PARADIGM.generate_set("smoke", 3, overrides)


def test_transitions_through_the_results_of_a_probed_instance(probed):
    instance = probed.select(initialization="normal", instruction="flipped-truth", n_steps=4)[0]
    instance_items = probed.select(instance=instance.condition["instance"])
    assert [i.condition["probe_step"] for i in instance_items] == [1, 2, 3, 4]

    def answer(item):
        if item.condition["instance"] != instance.condition["instance"]:
            return item.answer
        parts = item.answer.split(", ")
        step = item.condition["probe_step"]
        if step == 2:  # a hallucinated update on a box that stays closed until step 4
            untouched = item.truth["states"][3]["opened"].index(False)
            parts[untouched] = parts[untouched].replace("=True", "=False")
        if step == 4:
            return "no idea"
        return ", ".join(parts)

    scored = scored_items(_results(probed, answer), probed)
    labels = label_transitions(scored, probed)
    mine = labels[labels["instance"] == instance.condition["instance"]]
    per_step = {s: Counter(g["category"]) for s, g in mine.groupby("step")}
    assert per_step[1] == {"CU": 2, "MC": 6}
    assert per_step[2] == {"CU": 2, "MC": 5, "HU-IO": 1}
    assert per_step[3] == {"CU": 2, "MC": 5, "HU-AC": 1}
    assert per_step[4] == {"NP": 8}
    counts = transition_counts(labels)
    assert set(counts["category"]) == set(CATEGORIES)
    step_totals = counts.groupby(["language", "instruction", "initialization", "step"])[
        "share"
    ].sum()
    assert (step_totals.round(9) == 1).all()


def test_bootstrap_mean_is_deterministic_and_brackets_the_mean():
    values = [0, 1, 1, 0, 1, 1, 1, 0, 1, 1]
    mean, low, high = bootstrap_mean(values, n_boot=500, seed=3)
    assert (mean, low, high) == bootstrap_mean(values, n_boot=500, seed=3)
    assert low <= mean <= high and mean == 0.7 and 0 < low < high < 1
    assert bootstrap_mean([0.5]) == (0.5, 0.5, 0.5)


def test_final_step_table_in_the_papers_layout():
    stimulus_set = PARADIGM.generate_set("model", 1, {"instances": 4, "shots": [2, 5]})

    def answer(item):  # right on normal instructions, ignoring the flip on the others
        if item.condition["instruction"] == "normal":
            return item.answer
        return item.answer.replace("=True", "=X").replace("=False", "=True").replace("=X", "=False")

    results = pd.concat(
        [
            _results(stimulus_set, answer),
            _results(stimulus_set, lambda item: "", revision="step0"),
        ]
    )
    scored = scored_items(results, stimulus_set)
    table = final_step_table(scored, n_boot=200)
    normal = table[(table["instruction"] == "normal") & (table["revision"] == "")]
    assert (normal["step_em"] == 1).all() and (normal["state_em"] == 1).all()
    flipped = table[(table["instruction"] != "normal") & (table["revision"] == "")]
    assert (flipped["state_em"] == 0).all() and (flipped["parsed"] == 1).all()
    silent = table[table["revision"] == "step0"]
    assert (silent["parsed"] == 0).all() and (silent["n"] == 4).all()
    layout = paper_layout(table)
    assert list(layout.columns) == ["model", "instruction", "language", "2-shot", "5-shot"]
    first = layout.iloc[0]
    assert first["model"] == "toy/model" and first["instruction"] == "Normal instruction"
    assert first["language"] == "NL functor + NL argument" and first["2-shot"] == "100% / 100%"
    assert layout.iloc[2]["instruction"] == "Counter-intuitive instruction (language)"
    assert r"toy/model & Normal instruction & NL functor + NL argument & 100\% / 100\%" in (
        to_latex(layout, "Table 1", "boxes_table1")
    )


def test_paired_compression_and_probing_curves(probed):
    def answer(item):  # perfect after compression, silent on the last step otherwise
        if item.condition["initialization"] == "normal" and item.condition["final"]:
            return ""
        return item.answer

    scored = scored_items(_results(probed, answer), probed)
    paired = paired_compression(scored, n_boot=200)
    assert set(paired["n_pairs"]) == {4}
    assert (paired["step_em_diff"] == 1).all()
    curves = probing_table(scored, n_boot=200)
    compressed = curves[curves["initialization"] == "compressed"]
    assert (compressed["world_step"] == compressed["probe_step"] + 1).all()


def test_results_problems_are_one_line_errors(probed):
    results = _results(probed, lambda item: item.answer)
    with pytest.raises(TracktaleError, match="no 'output' column"):
        scored_items(results.drop(columns="output"), probed)
    with pytest.raises(TracktaleError, match="twice for toy/model"):
        scored_items(pd.concat([results, results.iloc[:1]]), probed)
    other = results.assign(task="implicit")
    assert scored_items(other, probed).empty
    assert boxes_section(other, probed, "unused") == []


def test_boxes_section_writes_tables_and_figures(tmp_path):
    overrides = {"boxes": 4, "instances": 3, "instruction": ["normal"]}
    stimulus_set = PARADIGM.generate_set("smoke", 4, {**overrides, "language": ["nl"]})
    results = _results(
        stimulus_set, lambda item: item.answer if item.condition["probe_step"] < 3 else ""
    )
    paths = boxes_section(results, stimulus_set, tmp_path / "report", n_boot=100)
    names = {path.name for path in paths}
    assert {
        "boxes_final_step.csv",
        "boxes_table1.csv",
        "boxes_table1.tex",
        "boxes_probing.csv",
        "boxes_transitions.csv",
        "boxes_probing_toy-model.png",
        "boxes_probing_toy-model.svg",
        "boxes_probing_toy-model.pdf",
        "boxes_transitions_toy-model_2_nl_normal_off_single-turn_normal.pdf",
    } <= names
    assert len(names) == len(paths) == 6 + 2 * 3  # no compressed instances: no compression table
    assert all(path.is_file() and path.stat().st_size > 0 for path in paths)
    again = boxes_section(results, stimulus_set, tmp_path / "again", n_boot=100)
    for first, second in zip(paths, again, strict=True):
        assert first.read_bytes() == second.read_bytes(), first.name
