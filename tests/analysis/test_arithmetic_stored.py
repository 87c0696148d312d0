"""The arithmetic analysis reads the judgement the explicit task stored, under every option."""

from __future__ import annotations

import functools

import pandas as pd
import pytest

from tests.scripted_scorers import Answering
from tracktale.analysis.arithmetic import ArithmeticOptions, scored_rows
from tracktale.models import store
from tracktale.models.tasks import score_items
from tracktale.stimuli.arithmetic import ArithmeticParadigm
from tracktale.stimuli.registry import get_paradigm

OUTPUT_ONLY = ["model_id", "revision", "item_id", "task", "output"]


@functools.cache
def stimulus_set():
    return get_paradigm("arithmetic").generate_set(
        "model", 1, {"datasets": ["int_1-10_add_lb1"], "horizons": [5], "per_horizon": 12}
    )


def _answer(number, item):
    """Right; an echoed placeholder before the right answer (the first-answer rules differ);
    or nothing to parse."""
    return (
        f"Step 1: ...\n<answer>{item.answer}</answer>",
        f"<answer>FINAL_RESULT</answer> <answer>{item.answer}</answer>",
        "I am not sure.",
    )[number % 3]


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    items = stimulus_set().items
    answers = {item.prompt: _answer(n, item) for n, item in enumerate(items)}
    folder = tmp_path_factory.mktemp("store")
    rows = score_items(Answering(answers), items, "explicit", stimulus_sha256="s")
    store.write_shard(folder, rows)
    return store.read_results(folder)


@pytest.mark.parametrize("reference", ["paper", "ieee"])
@pytest.mark.parametrize("first_answer", ["span", "numeric"])
def test_every_option_picks_a_stored_column(stored, monkeypatch, reference, first_answer):
    options = ArithmeticOptions(reference=reference, first_answer=first_answer)
    before = scored_rows(stored[OUTPUT_ONLY], stimulus_set(), options)  # scored from output

    def refuse(self, item, response):
        raise AssertionError("a stored output was scored again")

    monkeypatch.setattr(ArithmeticParadigm, "score_response", refuse)
    now = scored_rows(stored, stimulus_set(), options)
    columns = ["item_id", "faa", "caa", "expected", "parseable", "answer_position"]
    pd.testing.assert_frame_equal(
        now[columns].reset_index(drop=True), before[columns].reset_index(drop=True)
    )
    assert now["faa"].sum() == (4 if first_answer == "span" else 8)
