"""Which vocabulary entries begin a word, and which token starts a document, per tokenizer.

Corrected word surprisal (:mod:`tracktale.models.surprisal`) needs, at every position, the
probability that the next token begins a new word. For tokenizers whose tokens carry the space
before a word (byte-level BPE: GPT-2, Pythia/GPT-NeoX, OLMo 2, SmolLM2, where the raw entry
starts with ``Ġ``; SentencePiece: Llama 2, Mistral, where it starts with ``▁``), that is the
total probability of the tokens that begin with whitespace. The set is read from the tokenizer
itself, once: every id is decoded after a fixed letter (decoding an id alone loses the leading
space of SentencePiece's first piece), and an entry whose decoded text begins with whitespace
(as ``str.split`` sees it: space, newline, tab, ...) begins a word. Byte-fallback pieces
(``<0x0A>``) decode to their byte and count alike.

Words here are whitespace-separated (punctuation stays with its word, as a self-paced reading
display shows it), so a word ends exactly where the text continues with whitespace or ends. Two
kinds of tokens therefore end a word besides whitespace-initial ones: the end-of-text token
(``eos_token``) and ``<|endoftext|>`` (the document separator of the GPT-2 family, which is not
the declared EOS of every chat model: SmolLM2-Instruct's EOS is ``<|im_end|>``). Tokens that
begin with punctuation do not end a word: ``dog.`` is one word. This is the rule of Pimentel &
Meister's own implementation (``wordsprobability``: whitespace-marked tokens plus the EOS; they
leave punctuation out), widened from ``Ġ`` alone to every whitespace character.

The document start: the token a text is scored after, so that its first word has a context.
A tokenizer that prepends a BOS by itself (Llama, Mistral, Gemma) gets that BOS; otherwise the
vocabulary's ``<|endoftext|>`` (Pythia, OLMo 2, GPT-2, SmolLM2: their training documents are
separated by it; SmolLM2's declared BOS ``<|im_start|>`` is a chat marker and is not used); a
tokenizer with neither has none, and the first word of each text is flagged, not scored.
"""

from __future__ import annotations

from typing import Any, Literal

WordProbability = Literal["corrected", "naive"]
WORD_PROBABILITIES: tuple[WordProbability, ...] = ("corrected", "naive")
"""How a word's surprisal is computed: ``corrected`` (with the end-of-word factor, the
default) or ``naive`` (the sum of its tokens' surprisals)."""

DOCUMENT_SEPARATOR = "<|endoftext|>"
"""The GPT-2 family's document separator, present in the vocabularies of Pythia, OLMo 2 and
SmolLM2."""

_PROBE = "a"
"""A letter decoded before each entry, so that a SentencePiece decoder keeps its leading space."""


def word_start_mask(tokenizer: Any, vocab_size: int) -> list[bool]:
    """For each id below ``vocab_size``, whether the token ends the word before it.

    True for entries that begin with whitespace, the EOS and ``<|endoftext|>``; ids past the
    tokenizer's vocabulary (a model's padded embedding rows) are False.

    Args:
        tokenizer: A Hugging Face tokenizer.
        vocab_size: The model's number of logits.
    """
    probe_ids = tokenizer(_PROBE, add_special_tokens=False)["input_ids"]
    probe = tokenizer.decode(probe_ids, clean_up_tokenization_spaces=False)
    size = min(vocab_size, len(tokenizer))
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    # No clean-up: it would glue `` .`` to the probe and hide its space.
    texts = tokenizer.batch_decode(
        [[*probe_ids, index] for index in range(size)], clean_up_tokenization_spaces=False
    )
    mask = [False] * vocab_size
    for index, text in enumerate(texts):
        if index in special or not text.startswith(probe):
            continue
        rest = text[len(probe) :]
        mask[index] = bool(rest) and rest[0].isspace()
    for index in _word_ending_specials(tokenizer):
        if 0 <= index < vocab_size:
            mask[index] = True
    return mask


def _word_ending_specials(tokenizer: Any) -> set[int]:
    ids = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    separator = _token_id(tokenizer, DOCUMENT_SEPARATOR)
    if separator is not None:
        ids.add(separator)
    return ids


def _token_id(tokenizer: Any, token: str) -> int | None:
    index = tokenizer.get_vocab().get(token)
    return int(index) if index is not None else None


def document_start(tokenizer: Any, bos_requested: str, adds_bos: bool) -> int | None:
    """The id a text is scored after for word surprisal (``None``: no start token).

    Args:
        tokenizer: The model's tokenizer.
        bos_requested: The BOS policy asked for: ``none`` means no start token, ``add`` the
            tokenizer's BOS, ``auto`` the family's document start (see the module doc).
        adds_bos: Whether the tokenizer prepends its BOS by itself.
    """
    if bos_requested == "none":
        return None
    if bos_requested == "add" or adds_bos:
        return tokenizer.bos_token_id
    return _token_id(tokenizer, DOCUMENT_SEPARATOR)
