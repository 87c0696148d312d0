"""A-maze distractors from a real (tiny, random-init) transformer, through the command line."""

from __future__ import annotations

import csv
import math

import pytest

from tests.models.conftest import _trained
from tracktale.scorer import ChoiceRequest
from tracktale.stimuli.maze import MazeSettings, candidates, choose, split_word
from tracktale.stimulus_set import build_stimulus_set, write_stimulus_set

pytest.importorskip("wordfreq")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny_model(corpus, tmp_path_factory):
    from tracktale.models.testing import make_model, make_tokenizer, save_model

    tokenizer = make_tokenizer(_trained(tuple(corpus), False), kind="pythia")
    return save_model(
        tmp_path_factory.mktemp("maze") / "tiny", make_model("gpt_neox", tokenizer), tokenizer
    )


def _run(argv, capsys):
    from tracktale.app.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out + err


def test_distractors_are_the_rule_s_choice_under_the_model(
    stimulus_set, tiny_model, tmp_path, capsys
):
    from tracktale.models.hf import HFScorer

    one = build_stimulus_set(
        stimulus_set.items[:1],
        paradigm="narrative",
        protocol="model",
        generator="test",
        generator_version="0",
        seed=1,
        config={},
        design_cell=lambda item: item.role,
    )
    source = write_stimulus_set(one, tmp_path / "set")
    out = tmp_path / "d.csv"
    argv = ["stimuli", "maze-distractors", str(source), "--model", str(tiny_model)]
    argv += ["--out", str(out), "--device", "cpu", "--candidates", "5", "--vocabulary", "3000"]
    status, text = _run(argv, capsys)
    assert status == 0, text
    with out.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    item = one.items[0]
    words = item.context.split()
    assert [row["word"] for row in rows] == words and rows[0]["distractor"] == "x-x-x"
    # Redo three words by hand with the same model: the rule picks the CSV's distractor.
    scorer = HFScorer(str(tiny_model), device="cpu")
    settings = MazeSettings(n_candidates=5, vocabulary=3000)
    avoid = {split_word(word)[1].lower() for word in words}
    for index in (1, 2, 3):  # the first words: no distractor used before could be excluded
        lead, core, trail = split_word(words[index])
        pool = candidates(core, avoid, settings)
        continuations = (f" {lead}{core}", *(f" {lead}{word}" for word in pool))
        (scores,) = scorer.conditional_score(
            [ChoiceRequest(" ".join(words[:index]), continuations)]
        )
        bits = [-score.reduce() / math.log(2) for score in scores]
        used = {split_word(rows[i]["distractor"])[1].lower() for i in range(1, index)}
        scored = [(w, b) for w, b in zip(pool, bits[1:], strict=True) if w.lower() not in used]
        word, surprisal = scored[choose(bits[0], scored, settings)]
        assert rows[index]["distractor"] == f"{lead}{word}{trail}"
        assert float(rows[index]["distractor_surprisal"]) == pytest.approx(surprisal, abs=1e-3)
        assert float(rows[index]["word_surprisal"]) == pytest.approx(bits[0], abs=1e-3)
        assert rows[index]["model"] == str(tiny_model)
