"""A completions endpoint's echoed prompt: which tokens lie where, with what log-probability.

A completions request with ``echo: true`` and ``logprobs: N`` answers with the prompt's text
followed by what was generated, and ``logprobs`` (the legacy schema): ``tokens``,
``token_logprobs`` (``None`` for a token without context) and ``text_offset``, each token's
start. Tokens are found by these character offsets only, never by tokenizing on our side:

- **Where the offsets start.** llama-cpp-python counts them in the echoed text (its BOS token
  is not listed); vLLM counts them in the concatenation of the listed token strings, BOS
  included (``<|begin_of_text|>`` then moves every offset by its length). So the offsets are
  first mapped onto the prompt: by the length of what the token strings hold before the prompt.
  Tokens that lie before the prompt's first character are special tokens the server put there
  (a BOS).
- **Whose token is it.** A continuation's tokens are those that start at or after the boundary
  (the prefix's length) and before the prompt's end (the tokens after it were generated). A
  token that starts before the boundary and ends after it was merged across it by the server's
  tokenizer: it is counted with the continuation (it holds the continuation's first characters)
  and the span says ``boundary_merged``.

Anything that does not fit (no echo, log-probabilities for generated tokens only, offsets that
do not index the prompt) raises :class:`EchoError`: it is never scored as zeros.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracktale.errors import TracktaleError


class EchoError(TracktaleError):
    """An answer that does not hold the prompt's tokens with their log-probabilities."""


@dataclass(frozen=True)
class EchoedToken:
    """One listed token, placed in the prompt.

    Attributes:
        text: The token as the server spells it.
        start: Its first character's index in the prompt (negative: before the prompt).
        end: Where the next token starts (the prompt's end for the last prompt token).
        logprob: log P(token | what precedes it); ``None`` where the server gives none.
    """

    text: str
    start: int
    end: int
    logprob: float | None


@dataclass(frozen=True)
class EchoedPrompt:
    """The prompt's tokens as the server echoed them.

    Attributes:
        tokens: The tokens that lie within the prompt, in order.
        leading: Tokens the server put before the prompt's first character (a BOS).
        n_listed: Every listed token (prompt, leading and generated).
    """

    tokens: tuple[EchoedToken, ...]
    leading: tuple[EchoedToken, ...]
    n_listed: int

    def span(self, start: int) -> tuple[list[EchoedToken], bool]:
        """The tokens of the text from character ``start`` to the prompt's end.

        Returns:
            The tokens, and whether the first of them began before ``start`` (merged across
            the boundary).
        """
        inside = [token for token in self.tokens if token.start >= start]
        straddling = [token for token in self.tokens if token.start < start < token.end]
        return straddling + inside, bool(straddling)


def echoed_prompt(choice: Mapping[str, Any], prompt: str) -> EchoedPrompt:
    """Place a choice's listed tokens in ``prompt``.

    Args:
        choice: One entry of the answer's ``choices`` (``text`` and ``logprobs``).
        prompt: The prompt that was sent.

    Raises:
        EchoError: For an answer without the echoed prompt, without per-token log-probabilities
            in the legacy schema, with log-probabilities of generated tokens only, or with
            offsets that do not index the prompt.
    """
    text = choice.get("text")
    if not isinstance(text, str) or not text.startswith(prompt):
        raise EchoError("the answer's text does not start with the prompt: echo was ignored")
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, Mapping):
        raise EchoError("the answer has no per-token logprobs")
    strings, values, offsets = (logprobs.get(key) for key in _LEGACY_KEYS)
    if not (isinstance(strings, list) and isinstance(values, list) and isinstance(offsets, list)):
        raise EchoError(
            "the answer's logprobs lack tokens, token_logprobs and text_offset (legacy schema)"
        )
    if not strings or not len(strings) == len(values) == len(offsets):
        raise EchoError("the answer's tokens, token_logprobs and text_offset differ in length")
    joined = "".join(str(string) for string in strings)
    if prompt not in joined and "\ufffd" not in joined:
        raise EchoError(
            f"the answer lists {len(strings)} tokens that do not spell the prompt: the server "
            "returns log-probabilities of generated tokens only"
        )
    shift = _offset_origin(joined, text)
    starts = [int(offset) - shift for offset in offsets]
    placed = []
    for index, (string, value, start) in enumerate(zip(strings, values, starts, strict=True)):
        end = starts[index + 1] if index + 1 < len(starts) else start + len(str(string))
        placed.append(
            EchoedToken(str(string), start, min(end, len(prompt)), _logprob(value, string))
        )
    leading = tuple(token for token in placed if token.start < 0)
    inside = tuple(token for token in placed if 0 <= token.start < len(prompt))
    _check_covers(inside, prompt)
    return EchoedPrompt(inside, leading, len(placed))


_LEGACY_KEYS = ("tokens", "token_logprobs", "text_offset")


def _logprob(value: Any, token: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise EchoError(
            f"token {token!r} has a log-probability that is no number: {value!r}"
        ) from None


def _offset_origin(joined: str, text: str) -> int:
    """The offset of the echoed text's first character (0 unless tokens precede the text)."""
    if len(joined) > len(text) and joined.endswith(text):
        return len(joined) - len(text)
    return 0


def _check_covers(tokens: Sequence[EchoedToken], prompt: str) -> None:
    """The prompt's tokens start at its beginning and spell it (log-probabilities for all)."""
    if not tokens or tokens[0].start != 0:
        raise EchoError(
            "no listed token starts at the prompt's first character: the server returns "
            "log-probabilities of generated tokens only"
        )
    for token in tokens:
        piece = prompt[token.start : token.start + len(token.text)]
        # A token of part of a multi-byte character is spelled with a replacement character.
        if piece != token.text and "\ufffd" not in token.text:
            raise EchoError(
                f"text_offset {token.start} does not point at token {token.text!r} in the prompt"
            )
    missing = [token for token in tokens[1:] if token.logprob is None]
    if missing:
        raise EchoError(
            f"{len(missing)} of the prompt's {len(tokens)} tokens have no log-probability: the "
            "server returns log-probabilities of generated tokens only"
        )
