"""Every table and figure of the boxes paper from synthetic outputs, and the authors' rules."""

import functools
from collections import Counter

import pandas as pd
import pytest

from tracktale.analysis.boxes import boxes_section
from tracktale.analysis.boxes.scores import final_step_table, scored_items
from tracktale.analysis.boxes.transitions import label_transitions
from tracktale.stimuli.boxes import PARADIGM
from tracktale.stimuli.boxes.scoring import ScoringRules

SMALL = {"instances": 4}


@functools.cache
def protocol_set(protocol):
    overrides = dict(SMALL)
    if protocol in ("probing",):
        overrides["instances"] = 2
    return PARADIGM.generate_set(protocol, 1, overrides)


def _results(stimulus_set, answer_for):
    return pd.DataFrame(
        [
            {
                "model_id": "toy/model",
                "revision": "",
                "item_id": item.item_id,
                "task": "explicit",
                "output": answer_for(item),
            }
            for item in stimulus_set
        ]
    )


def _mostly_right(item):
    """Right except on every third world, where it answers one state wrong."""
    if int(item.condition["world"].split(".")[1]) % 3:
        return item.answer
    return (
        item.answer.replace("=True", "=X", 1).replace("=False", "=True", 1).replace("=X", "=False")
    )


# protocol -> (the paper's table its boxes_table1 is, the row factor it adds, extra files)
PROTOCOLS = {
    "model": ("Table 1", None, set()),
    "compressed": ("Table 2", "initialization", {"boxes_compression.csv", "boxes_compression.tex"}),
    "distractors": ("Table 3", "distractors", set()),
    "languages": ("Table 4", None, set()),
    "formats": ("formats (Appendix C)", "prompt_format", set()),
}


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_each_protocol_makes_its_table(protocol, tmp_path):
    stimulus_set = protocol_set(protocol)
    _, factor, extra = PROTOCOLS[protocol]
    paths = boxes_section(_results(stimulus_set, _mostly_right), stimulus_set, tmp_path, n_boot=50)
    names = {path.name for path in paths}
    assert {"boxes_table1.csv", "boxes_table1.tex", "boxes_final_step.csv"} | extra <= names
    table = pd.read_csv(tmp_path / "boxes_table1.csv")
    if factor is not None:
        assert factor in table.columns and table[factor].nunique() == 2
    if protocol == "languages":
        assert set(table["language"]) == {
            "NL functor + NL argument",
            "SL functor + NL argument",
            "NL functor + SL argument",
            "SL functor + SL argument",
        }
    cells = table.filter(like="-shot").to_numpy().ravel()
    assert all(" / " in cell for cell in cells if isinstance(cell, str) and cell)


def test_probing_makes_figure_2_and_figure_4(tmp_path, small_reports):
    stimulus_set = protocol_set("probing")
    paths = boxes_section(_results(stimulus_set, _mostly_right), stimulus_set, tmp_path, n_boot=50)
    names = {path.name for path in paths}
    assert {"boxes_probing.csv", "boxes_transitions.csv", "boxes_probing_toy-model.png"} <= names
    transition_figures = [
        n for n in names if n.startswith("boxes_transitions_") and n.endswith(".png")
    ]
    assert len(transition_figures) == 8  # 2 shots x 2 languages x 2 instructions


def test_the_authors_functor_rule_raises_step_em_of_wrong_functors():
    stimulus_set = protocol_set("model")
    nl = [i for i in stimulus_set if i.condition["language"] == "nl"]

    def wrong_functor(item):  # a box's functor on its key and the key's on its box
        return (
            item.answer.replace("OPENED", "TMP")
            .replace("OBTAINED", "OPENED")
            .replace("TMP", "OBTAINED")
        )

    results = _results(nl, wrong_functor)
    ours = scored_items(results, stimulus_set)
    theirs = scored_items(results, stimulus_set, ScoringRules(functor="any"))
    assert ours["step_em"].sum() == 0 and theirs["step_em"].all()


def test_the_authors_unparsed_rule_sets_steps_aside_in_the_transitions():
    stimulus_set = protocol_set("probing")

    def conflicted(item):
        if item.condition["probe_step"] == 2:
            first = item.answer.split(", ")[0]
            flipped = (
                first.replace("=True", "=X").replace("=False", "=True").replace("=X", "=False")
            )
            return f"{item.answer}, {flipped}"  # one state given both values
        return item.answer

    results = _results(stimulus_set, conflicted)
    ours = scored_items(results, stimulus_set)
    rules = ScoringRules(unparsed="whole-step")
    theirs = scored_items(results, stimulus_set, rules)
    step2 = ours["probe_step"] == 2
    assert (ours.loc[step2, "state_em"] > 0.9).all()
    assert (theirs.loc[step2, "state_em"] == 0).all() and theirs.loc[step2, "unparsed_step"].all()
    our_labels = Counter(label_transitions(ours, stimulus_set)["category"])
    their_labels = label_transitions(theirs, stimulus_set, rules)
    assert our_labels["NP"] > 0 and our_labels["NP-prev"] > 0
    assert not set(their_labels["category"]) & {"NP", "NP-prev"}
    assert not ((their_labels["step"] == 2) | (their_labels["step"] == 3)).any()


def test_sampled_outputs_score_as_their_mean():
    stimulus_set = protocol_set("model")
    results = _results(stimulus_set, lambda item: item.answer)
    results["sample_outputs"] = [[answer, "no idea"] for answer in results["output"]]
    scored = scored_items(results, stimulus_set)
    assert (scored["step_em"] == 0.5).all() and (scored["n_samples"] == 2).all()
    table = final_step_table(scored, n_boot=20)
    assert (table["step_em"] == 0.5).all()
