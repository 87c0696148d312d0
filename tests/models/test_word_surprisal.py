"""Corrected word surprisal equals an independent computation from a full forward pass.

The reference here shares no code with the scorer: the word-starting tokens are read from the
raw vocabulary entries (byte-level BPE entries mapped back to their UTF-8 bytes; ``▁``, byte
pieces and raw whitespace pieces of SentencePiece), the model runs once over the whole text,
and the sums over the vocabulary are written out. Tiny random-init models of the real
architectures and real tokenizer classes (GPT-NeoX, OLMo 2, Llama with a GPT-2 style and with
a SentencePiece tokenizer) stand in for the hub models; the default model (SmolLM2) runs in
the slow test.
"""

from __future__ import annotations

import math

import pytest
import torch

from tracktale.errors import TracktaleError
from tracktale.models.hf import HFScorer
from tracktale.models.surprisal import word_scores
from tracktale.models.tasks import TaskOptions, score_items
from tracktale.scorer import SequenceRequest, TokenScores

TOLERANCE = 1e-4  # nats

TEXT = (
    "In 1987, Ann's \"tiny\" key-holder didn't fit; unbelievably, the 42 keys (all "
    "rusty) cost $3.50 - she laughed!"
)
"""Punctuation, numbers, contractions, quotes and words the tiny tokenizers split in pieces."""

SENTENCEPIECE_BYTES = tuple(f"<0x{byte:02X}>" for byte in (*range(0x09, 0x0E), *range(0x1C, 0x21)))
"""Byte-fallback pieces of the bytes Python's ``str.split`` splits on (the words are
``text.split()``): tab to carriage return, the four separators, space."""


def gpt2_byte_decoder() -> dict[str, int]:
    """GPT-2's byte-to-unicode table, inverted: the character a byte-level entry shows -> byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    printable += range(ord("®"), ord("ÿ") + 1)
    table, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            table[chr(byte)] = byte
        else:
            table[chr(256 + extra)] = byte
            extra += 1
    return table


def begins_with_whitespace(token: str, byte_decoder: dict[str, int]) -> bool:
    """Whether a raw vocabulary entry's text begins with whitespace."""
    if token.startswith(("▁", *SENTENCEPIECE_BYTES)) or token[:1].isspace():
        return True  # SentencePiece marks, byte pieces, raw whitespace pieces
    if all(char in byte_decoder for char in token):  # a byte-level entry: its UTF-8 bytes
        text = bytes(byte_decoder[char] for char in token).decode("utf-8", errors="replace")
        return text[:1].isspace()
    return False


def reference_mask(tokenizer, vocab_size: int) -> torch.Tensor:
    """Word-ending ids, from the raw vocabulary entries (not by decoding through the tokenizer)."""
    mask = torch.zeros(vocab_size, dtype=torch.bool)
    special = set(tokenizer.all_special_ids)
    byte_decoder = gpt2_byte_decoder()
    for token, index in tokenizer.get_vocab().items():
        if index not in special and index < vocab_size:
            mask[index] = begins_with_whitespace(token, byte_decoder)
    for token in (tokenizer.eos_token, "<|endoftext|>"):
        index = tokenizer.get_vocab().get(token)
        if index is not None:
            mask[index] = True
    return mask


def reference_surprisals(scorer: HFScorer, text: str, start: int) -> list[float]:
    """-log P(word | context) of each whitespace word, written out from one full forward."""
    tokenizer, model = scorer.tokenizer, scorer.model
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids, offsets = encoding["input_ids"], encoding["offset_mapping"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([[start, *ids]])).logits[0].float()
    logprobs = logits.log_softmax(-1)  # row t: the distribution of token t of the text
    mask = reference_mask(tokenizer, logits.shape[-1])
    ends = [torch.logsumexp(row[mask], dim=0).item() for row in logprobs]
    words, position = [], 0
    for word in text.split():
        begin = text.index(word, position)
        position = begin + len(word)
        words.append((begin, position))
    surprisals = []
    for number, (begin, end) in enumerate(words):
        # A token is the word's when its first non-space character lies in the word; tokens of
        # whitespace only go with the next word.
        held = []
        for t, (a, b) in enumerate(offsets):
            piece = text[a:b]
            first = a + len(piece) - len(piece.lstrip()) if piece.strip() else b
            if begin <= first < end or (not piece.strip() and first == begin):
                held.append(t)
        first_token, last_token = held[0], held[-1]
        total = sum(logprobs[t, ids[t]].item() for t in held)
        total += ends[last_token + 1]  # the next token ends the word (or the text ends)
        if number > 0:
            total -= ends[first_token]  # the previous word had ended
        surprisals.append(-total)
    return surprisals


def corrected_row(scorer: HFScorer, text: str):
    (scores,) = scorer.sequence_score([SequenceRequest(text, word_ends=True)])
    return scores, word_scores(text, scores)


def sentencepiece_model(corpus, folder):
    """A Llama model with a SentencePiece-style tokenizer (``▁`` marks, adds ``<s>``)."""
    from tokenizers import SentencePieceBPETokenizer, processors
    from transformers import PreTrainedTokenizerFast

    from tracktale.models.testing import make_model, save_model

    trained = SentencePieceBPETokenizer()
    trained.train_from_iterator(
        corpus, vocab_size=600, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False
    )
    backend = trained._tokenizer
    backend.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", backend.token_to_id("<s>"))]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    tokenizer.pad_token = "<unk>"
    return save_model(folder, make_model("llama", tokenizer), tokenizer)


@pytest.fixture(scope="module")
def sentencepiece_dir(corpus, tmp_path_factory):
    # The test text is in the training text: SentencePiece has no byte fallback here.
    return sentencepiece_model([*corpus, TEXT], tmp_path_factory.mktemp("sentencepiece"))


@pytest.mark.parametrize(
    ("name", "start"),
    [("pythia", "<|endoftext|>"), ("olmo2", "<|endoftext|>"), ("llama", "<|endoftext|>")],
)
def test_corrected_surprisal_equals_the_written_out_reference(model_dirs, name, start):
    scorer = HFScorer(str(model_dirs[name]), device="cpu", batch_size=4)
    scores, words = corrected_row(scorer, TEXT)
    assert scores.start_token == start
    assert [word.word for word in words] == TEXT.split()
    assert {word.method for word in words} == {"corrected"}
    assert max(word.n_tokens for word in words) >= 3  # a word split into several tokens
    reference = reference_surprisals(scorer, TEXT, scorer.tokenizer.convert_tokens_to_ids(start))
    got = [word.surprisal for word in words]
    assert max(abs(a - b) for a, b in zip(got, reference, strict=True)) < TOLERANCE


def test_sentencepiece_tokenizers_are_covered(sentencepiece_dir):
    scorer = HFScorer(str(sentencepiece_dir), device="cpu")
    scores, words = corrected_row(scorer, TEXT)
    assert scores.start_token == "<s>"  # the tokenizer adds its BOS: that is the start
    assert {word.method for word in words} == {"corrected"}
    reference = reference_surprisals(scorer, TEXT, scorer.tokenizer.bos_token_id)
    got = [word.surprisal for word in words]
    assert max(abs(a - b) for a, b in zip(got, reference, strict=True)) < TOLERANCE


@pytest.mark.parametrize("name", ["pythia", "olmo2-instruct", "llama"])
def test_the_word_start_mask_matches_the_raw_vocabulary(model_dirs, name):
    scorer = HFScorer(str(model_dirs[name]), device="cpu")
    size = scorer.model.config.vocab_size
    mask = torch.tensor(scorer._word_start_list())
    assert torch.equal(mask, reference_mask(scorer.tokenizer, size))
    assert 0 < int(mask.sum()) < len(scorer.tokenizer) // 2


def test_the_sentencepiece_mask_matches_the_raw_vocabulary(sentencepiece_dir):
    scorer = HFScorer(str(sentencepiece_dir), device="cpu")
    size = scorer.model.config.vocab_size
    assert torch.equal(
        torch.tensor(scorer._word_start_list()), reference_mask(scorer.tokenizer, size)
    )


def test_naive_and_corrected_differ_by_the_end_of_word_factors(model_dirs):
    scorer = HFScorer(str(model_dirs["pythia"]), device="cpu")
    scores, words = corrected_row(scorer, TEXT)
    ends = scores.word_ends
    stops, first = [], 0
    for word in words:  # every token is some word's here
        stops.append((first, first + word.n_tokens))
        first += word.n_tokens
    for number, (word, (first, stop)) in enumerate(zip(words, stops, strict=True)):
        assert word.naive == pytest.approx(-sum(scores.logprobs[first:stop]))
        factor = -ends[stop] + (ends[first] if number else 0.0)
        assert word.surprisal - word.naive == pytest.approx(factor, abs=1e-9)
        assert abs(factor) > 1e-6  # the two end-of-word probabilities are not the same
    # Over the text the factors telescope to -log P(the text ends where it ends).
    total = sum(w.surprisal for w in words) - sum(w.naive for w in words)
    assert total == pytest.approx(-ends[-1]) and total > 0.1


def test_a_region_is_the_sum_of_its_words(model_dirs):
    scorer = HFScorer(str(model_dirs["olmo2"]), device="cpu")
    text = "The keys to the old cabinet were rusty."
    (scores,) = scorer.sequence_score([SequenceRequest(text, word_ends=True)])
    words = word_scores(text, scores)
    regions = word_scores(text, scores, [(0, 8), (9, 27), (28, 39)])
    assert [r.word for r in regions] == ["The keys", "to the old cabinet", "were rusty."]
    sums = [sum(w.surprisal for w in words[a:b]) for a, b in [(0, 2), (2, 6), (6, 8)]]
    assert [r.surprisal for r in regions] == pytest.approx(sums, abs=1e-9)


def test_the_first_word_is_flagged_without_a_start_token(model_dirs):
    scorer = HFScorer(str(model_dirs["pythia"]), bos="none", device="cpu")
    scores, words = corrected_row(scorer, TEXT)
    assert scores.start_token is None
    assert words[0].method == "unscored" and words[0].surprisal is None
    assert {word.method for word in words[1:]} == {"corrected"}
    # The second word's denominator is read after the text's first token: still exact.
    with_start = HFScorer(str(model_dirs["pythia"]), device="cpu")
    reference = reference_surprisals(with_start, TEXT, 0)
    assert words[1].surprisal != pytest.approx(reference[1], abs=TOLERANCE)  # other context
    assert all(word.surprisal is not None for word in words[1:])


def test_a_boundary_inside_a_token_falls_back_to_the_naive_sum_and_says_so(
    model_dirs, stimulus_set
):
    scorer = HFScorer(str(model_dirs["merging"]), device="cpu")
    text = stimulus_set.items[0].context
    _, words = corrected_row(scorer, text)
    flagged = [word for word in words if word.method == "naive_boundary_in_token"]
    assert flagged and all(word.surprisal == word.naive for word in flagged)
    # A word whose characters all sit in a token that began in the previous word holds no
    # token of its own: unscored, as before.
    methods = {word.method for word in words}
    assert methods <= {"corrected", "naive_boundary_in_token", "unscored"}
    assert all(word.surprisal is None for word in words if word.method == "unscored")


def test_the_sequence_task_keeps_naive_as_an_option(model_dirs, stimulus_set):
    scorer = HFScorer(str(model_dirs["pythia"]), device="cpu")
    item = stimulus_set.items[3]
    naive = score_items(
        scorer,
        [item],
        "sequence",
        stimulus_sha256="x",
        options=TaskOptions(word_probability="naive"),
    )[0].scores
    corrected = score_items(scorer, [item], "sequence", stimulus_sha256="x")[0].scores
    # naive: the earlier values (no start token: the first word unscored), method per word
    assert naive.get("word_start_token") is None and naive["word_surprisals"][0] is None
    assert naive["word_methods"] == ["unscored"] + ["naive"] * (len(naive["words"]) - 1)
    assert naive["word_surprisals"] == naive["word_surprisals_naive"]
    assert corrected["word_start_token"] == "<|endoftext|>"
    assert corrected["word_surprisals"][0] is not None
    assert corrected["n_tokens"] == naive["n_tokens"] + 1  # the first token is scored too
    later = zip(corrected["word_surprisals"][1:], naive["word_surprisals"][1:], strict=True)
    assert all(not math.isclose(a, b, abs_tol=1e-6) for a, b in later)
    with pytest.raises(TracktaleError, match="--word-probability"):
        TaskOptions(word_probability="summed")  # type: ignore[arg-type]


def test_a_backend_without_the_distribution_is_flagged():
    scores = TokenScores(("The", " dog"), (-1.0, -2.0), (0, 3))
    words = word_scores("The dog", scores)
    assert [w.method for w in words] == ["naive_no_distribution"] * 2
    assert [w.surprisal for w in words] == [1.0, 2.0]


@pytest.mark.slow
def test_the_default_model_matches_the_reference_too(converted_default_model, monkeypatch):
    monkeypatch.setenv("TRACKTALE_DATA", str(converted_default_model[0]))
    scorer = HFScorer("default", device="cpu", batch_size=4)
    assert scorer.tokenizer.bos_token == "<|im_start|>"  # a chat marker, not the start
    scores, words = corrected_row(scorer, TEXT)
    assert scores.start_token == "<|endoftext|>"
    assert {word.method for word in words} == {"corrected"}
    assert max(word.n_tokens for word in words) >= 3
    start = scorer.tokenizer.convert_tokens_to_ids("<|endoftext|>")
    assert torch.equal(
        torch.tensor(scorer._word_start_list()),
        reference_mask(scorer.tokenizer, scorer.model.config.vocab_size),
    )
    reference = reference_surprisals(scorer, TEXT, start)
    got = [word.surprisal for word in words]
    assert max(abs(a - b) for a, b in zip(got, reference, strict=True)) < TOLERANCE
    # A trained model knows that a word ends: the factor is small for a common word.
    the = next(word for word in words if word.word == "the")
    assert 0 < the.surprisal - the.naive < 1.0


def test_the_command_line_stores_the_word_table_and_refuses_to_mix_methods(
    model_dirs, stimulus_dir, tmp_path, capsys
):
    from tests.models.conftest import score_argv
    from tracktale.app.cli import main
    from tracktale.models.store import read_results

    def run(*extra):
        argv = score_argv(stimulus_dir, model_dirs["pythia"], tmp_path / "r", "--task", "sequence")
        with pytest.raises(SystemExit) as exit_info:
            main([*argv, "--limit", "2", *extra])
        return exit_info.value.code, capsys.readouterr().err

    code, err = run()
    assert code == 0, err
    frame = read_results(tmp_path / "r")
    row = frame.iloc[0]
    assert row["word_probability"] == "corrected" and row["word_start_token"] == "<|endoftext|>"
    assert list(row["word_methods"]) == ["corrected"] * len(row["words"])
    assert len(row["word_surprisals_naive"]) == len(row["word_spillover_2"]) == len(row["words"])
    code, err = run("--word-probability", "naive")
    assert code != 0 and "word_probability=corrected" in err and "--rescore" in err
    code, err = run("--word-probability", "summed")
    assert code != 0 and "summed" in err
