"""The boxes analysis reads the judgement the explicit task stored; it scores outputs again only
under the authors' rules, for several samples, or where a row lacks the judgement."""

from __future__ import annotations

import functools

import pandas as pd
import pytest

from tests.scripted_scorers import Answering
from tracktale.analysis.boxes import boxes_outputs
from tracktale.analysis.boxes.scores import final_step_table, probing_table, scored_items
from tracktale.analysis.boxes.transitions import label_transitions
from tracktale.models import store
from tracktale.models.tasks import score_items
from tracktale.stimuli.boxes import PARADIGM, BoxesParadigm
from tracktale.stimuli.boxes.scoring import DEFAULT_RULES, ScoringRules

OUTPUT_ONLY = ["model_id", "revision", "item_id", "task", "output"]
"""What rows without the judgement hold (the analysis scored every output so before)."""


@functools.cache
def probing_set():
    return PARADIGM.generate_set("probing", 1, {"instances": 2})


def _answer(item):
    """Right, with the functors swapped (wrong for us, right for the authors), or conflicted."""
    number = int(item.condition["probe_step"])
    if number % 3 == 1:
        return (
            item.answer.replace("OPENED", "TMP")
            .replace("OBTAINED", "OPENED")
            .replace("TMP", "OBTAINED")
        )
    if number % 3 == 2:
        first = item.answer.split(", ")[0]
        return f"{item.answer}, {first.replace('=True', '=X').replace('=False', '=True')}"
    return item.answer


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """The set's explicit-task rows as the store holds them."""
    stimulus_set = probing_set()
    answers = {item.prompt: _answer(item) for item in stimulus_set}
    rows = score_items(Answering(answers), stimulus_set.items, "explicit", stimulus_sha256="s")
    folder = tmp_path_factory.mktemp("store")
    store.write_shard(folder, rows)
    return store.read_results(folder)


@pytest.fixture
def calls(monkeypatch):
    """How often the paradigm scores an output (the real scorer still answers)."""
    counted = []
    original = BoxesParadigm.score_response

    def counting(self, item, response, rules=DEFAULT_RULES):
        counted.append(item.item_id)
        return original(self, item, response, rules)

    monkeypatch.setattr(BoxesParadigm, "score_response", counting)
    return counted


def _never_scored(monkeypatch):
    def refuse(self, item, response, rules=None):
        raise AssertionError("a stored output was scored again")

    monkeypatch.setattr(BoxesParadigm, "score_response", refuse)


def test_the_default_rules_read_the_stored_judgement(stored, monkeypatch, tmp_path, small_reports):
    stimulus_set = probing_set()
    before = scored_items(stored[OUTPUT_ONLY], stimulus_set)  # every output scored
    before_files = boxes_outputs(stored[OUTPUT_ONLY], stimulus_set, tmp_path / "before", n_boot=50)
    _never_scored(monkeypatch)
    now = scored_items(stored, stimulus_set)
    pd.testing.assert_frame_equal(now, before)
    assert 0 < now["step_em"].mean() < 1 and now["unparsed_step"].sum() == 0
    for table in (final_step_table, probing_table):
        pd.testing.assert_frame_equal(table(now, n_boot=50), table(before, n_boot=50))
    pd.testing.assert_frame_equal(
        label_transitions(now, stimulus_set), label_transitions(before, stimulus_set)
    )
    now_files = boxes_outputs(stored, stimulus_set, tmp_path / "now", n_boot=50)
    tables = [p for p in before_files.written if p.suffix in (".csv", ".tex")]
    assert len(tables) >= 4 and len(now_files.written) == len(before_files.written)
    for path in tables:
        assert (tmp_path / "now" / path.name).read_bytes() == path.read_bytes(), path.name


def test_the_authors_rules_score_the_outputs_again(stored, calls):
    stimulus_set = probing_set()
    ours = scored_items(stored, stimulus_set)
    assert calls == []
    for rules in (ScoringRules(functor="any"), ScoringRules(unparsed="whole-step")):
        theirs = scored_items(stored, stimulus_set, rules)
        assert len(calls) == len(stored)
        again = scored_items(stored[OUTPUT_ONLY], stimulus_set, rules)
        pd.testing.assert_frame_equal(theirs, again)
        calls.clear()
        assert not theirs[["step_em", "state_em"]].equals(ours[["step_em", "state_em"]])


def test_several_samples_and_rows_without_the_judgement_are_scored_again(stored, calls):
    stimulus_set = probing_set()
    sampled = stored.copy()
    sampled["sample_outputs"] = [[output, "no idea"] for output in sampled["output"]]
    assert (scored_items(sampled, stimulus_set)["n_samples"] == 2).all()
    assert len(calls) == 2 * len(stored)
    calls.clear()
    # An older store without one of the judgement's columns, and a row with one empty.
    scored_items(stored.drop(columns="n_conflicts"), stimulus_set)
    assert len(calls) == len(stored)
    calls.clear()
    holed = stored.copy()
    holed.loc[holed.index[3], "predicted"] = None
    assert scored_items(holed, stimulus_set).equals(scored_items(stored, stimulus_set))
    assert calls == [holed.loc[holed.index[3], "item_id"]]
    calls.clear()
    # A table read from CSV may hold text where a truth value belongs: scored, not misread.
    texts = stored.copy()
    texts["parsed"] = texts["parsed"].astype(object)
    texts.loc[texts.index[5], "parsed"] = "False"
    assert scored_items(texts, stimulus_set).equals(scored_items(stored, stimulus_set))
    assert calls == [texts.loc[texts.index[5], "item_id"]]
