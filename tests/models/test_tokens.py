"""Token boundaries (incl. a tokenizer that merges across them), the BOS policy, word surprisal."""

from __future__ import annotations

import pytest

from tests.models.test_equivalence import TOLERANCE, naive_logprobs
from tracktale.errors import TracktaleError
from tracktale.models.hf import HFScorer
from tracktale.models.surprisal import align_to_words
from tracktale.models.tasks import TaskOptions, score_items
from tracktale.models.tokens import TextEncoder, resolve_bos
from tracktale.scorer import ChoiceRequest, SequenceRequest


def test_a_merge_across_the_boundary_is_detected_and_the_space_stays_with_the_continuation(
    model_dirs, stimulus_set
):
    scorer = HFScorer(str(model_dirs["merging"]), batch_size=4, device="cpu")
    item = stimulus_set.items[0]
    tokenizer = scorer.tokenizer
    prefix_ids = tokenizer(item.choice.prefix, add_special_tokens=False)["input_ids"]
    full_ids = tokenizer(item.choice.prompt_good, add_special_tokens=False)["input_ids"]
    assert full_ids[: len(prefix_ids)] != prefix_ids  # this tokenizer does merge ". Later"

    encoded = scorer.encoder.choice(item.choice.prefix, [item.choice.good, item.choice.bad])
    assert encoded.merged == [True, True]
    assert encoded.prefix == prefix_ids
    assert (
        encoded.continuations[0]
        == tokenizer(item.choice.good, add_special_tokens=False)["input_ids"]
    )
    assert tokenizer.decode(encoded.continuations[0]).startswith(" Later")

    rows = score_items(scorer, stimulus_set.items[:6], "implicit", stimulus_sha256="x")
    assert all(row.scores["boundary_merged"] for row in rows)
    good = scorer.conditional_score([ChoiceRequest(item.choice.prefix, (item.choice.good,))])[0][0]
    assert good.boundary_merged and "".join(good.tokens) == item.choice.good
    reference = naive_logprobs(scorer.model, encoded.prefix, encoded.continuations[0])
    assert max(abs(a - b) for a, b in zip(good.logprobs, reference, strict=True)) < TOLERANCE


def test_no_merge_is_flagged_for_a_gpt_neox_style_tokenizer(model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs["pythia"]), device="cpu")
    rows = score_items(scorer, stimulus_set.items, "implicit", stimulus_sha256="x")
    assert not any(row.scores["boundary_merged"] for row in rows)


def test_bos_auto_follows_the_tokenizer(model_dirs):
    pythia = HFScorer(str(model_dirs["pythia"]), device="cpu")
    llama_like = HFScorer(str(model_dirs["bos"]), device="cpu")
    assert pythia.info.bos_policy == "none" and pythia.info.details["bos_requested"] == "auto"
    assert llama_like.info.bos_policy == "add"
    assert (
        llama_like.encoder.choice("Ann left.", [" She"]).prefix[0]
        == llama_like.tokenizer.bos_token_id
    )
    assert HFScorer(str(model_dirs["bos"]), bos="none", device="cpu").info.bos_policy == "none"


def test_bos_changes_what_is_scored(model_dirs, stimulus_set):
    item = stimulus_set.items[0]
    request = [ChoiceRequest(item.choice.prefix, (item.choice.good,))]
    without = HFScorer(str(model_dirs["pythia"]), bos="none", device="cpu")
    with_bos = HFScorer(str(model_dirs["pythia"]), bos="add", device="cpu")
    a = without.conditional_score(request)[0][0]
    b = with_bos.conditional_score(request)[0][0]
    assert a.ids == b.ids and a.logprobs != b.logprobs

    text = [SequenceRequest(item.context)]
    seq_without, seq_with = without.sequence_score(text)[0], with_bos.sequence_score(text)[0]
    assert seq_with.n_tokens == seq_without.n_tokens + 1  # the first token is scored against BOS
    assert seq_with.offsets[0] == 0 and seq_without.offsets[0] > 0


def test_bos_add_needs_a_bos_token():
    class NoBos:
        bos_token_id = None

    with pytest.raises(TracktaleError, match="has no BOS token"):
        resolve_bos(NoBos(), "add", "some/model")
    with pytest.raises(TracktaleError, match="--bos"):
        resolve_bos(NoBos(), "sometimes", "some/model")


def test_an_empty_prefix_needs_a_bos(model_dirs):
    scorer = HFScorer(str(model_dirs["pythia"]), device="cpu")
    with pytest.raises(TracktaleError, match="empty prefix"):
        scorer.encoder.choice("", [" Later"])
    encoder = TextEncoder(scorer.tokenizer, add_bos=True)
    assert encoder.choice("", ["Later"]).prefix == [scorer.tokenizer.bos_token_id]


def test_word_surprisal_sums_tokens_into_words():
    text = "Jack began tidying. "
    # tokens: "J" (unscored), "ack", " began", " tid", "ying", ".", " "
    words = align_to_words(text, [1, 4, 10, 14, 18, 19], [-1.0, -2.0, -3.0, -4.0, -5.0, -0.5])
    assert [w.word for w in words] == ["Jack", "began", "tidying."]
    assert words[0].surprisal is None  # its first token has no score
    assert words[1].surprisal == pytest.approx(2.0)
    assert words[2].surprisal == pytest.approx(12.0) and words[2].n_tokens == 3


def test_sequence_rows_align_surprisal_to_the_story_words(model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs["pythia"]), bos="add", device="cpu")
    item = stimulus_set.items[4]
    row = score_items(scorer, [item], "sequence", stimulus_sha256="x")[0].scores
    assert row["words"] == item.context.split()
    assert sum(row["word_surprisals_naive"]) == pytest.approx(-row["logprob"], rel=1e-6)
    assert sum(row["word_n_tokens"]) == row["n_tokens"]
    # The end-of-word factors telescope: corrected minus naive is -log P(the text ends there).
    assert set(row["word_methods"]) == {"corrected"} and row["word_probability"] == "corrected"
    assert sum(row["word_surprisals"]) - sum(row["word_surprisals_naive"]) > 0
    assert row["word_spillover_1"] == [None, *row["word_surprisals"][:-1]]
    assert row["word_spillover_2"] == [None, None, *row["word_surprisals"][:-2]]
    row = score_items(
        scorer, [item], "sequence", stimulus_sha256="x", options=TaskOptions(word_surprisal=False)
    )[0].scores
    assert "words" not in row


def test_a_newline_stop_ends_the_answer_only_once_it_has_begun():
    from tracktale.models.tokens import cut_at_stop, server_stops

    stops = ("\n", ".")
    assert cut_at_stop("The key is in the box. The box is", stops) == "The key is in the box"
    assert cut_at_stop("\nbox\nQ: The pen is in the", stops) == "\nbox"  # a first empty line
    assert cut_at_stop("\n\n", stops) == "\n\n"  # nothing begun: nothing ended
    assert cut_at_stop("abc\nStep-2", ("\nStep-",)) == "abc"  # other stops as before
    assert cut_at_stop("\nStep-2", ("\nStep-",)) == ""
    # An endpoint is not sent a whitespace stop (it would end on the first newline).
    assert server_stops(("\n", ".", "\nStep-"), 4) == [".", "\nStep-"]
