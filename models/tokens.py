"""Token boundaries, the BOS policy and prompt rendering, for any Hugging Face tokenizer.

The rules every backend on a Hugging Face tokenizer follows:

- **Special tokens** are never added by the tokenizer itself (``add_special_tokens=False``); a
  BOS token is prepended by this module according to the BOS policy, so what is scored does not
  depend on a tokenizer setting nobody looks at. ``auto`` adds the BOS exactly when the
  tokenizer would add one by itself (Llama: yes; Pythia and OLMo 2: no); ``add`` always adds it
  (an error where the tokenizer has none); ``none`` never does.
- **Continuations**: the continuation's tokens are the tokens of ``prefix + continuation`` after
  the tokens of ``prefix`` alone. Where the tokenizer merges characters across that boundary
  (the full text's tokens do not start with the prefix's tokens), the prefix keeps its own
  tokens and the continuation, with its leading space, is tokenized on its own: the scored span
  is then exactly the continuation's text, the prefix is shared by every continuation, and the
  row is flagged (``boundary_merged``).
- **Chat prompts** are rendered with the tokenizer's chat template (``add_generation_prompt``);
  the template decides about the BOS, so none is added on top.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracktale.errors import TracktaleError

BOS_POLICIES = ("auto", "add", "none")
PROMPT_FORMATS = ("auto", "plain", "chat")


@dataclass(frozen=True)
class EncodedChoice:
    """A prefix and its continuations as token ids.

    Attributes:
        prefix: The prefix's ids, with the BOS where the policy adds one.
        continuations: Each continuation's ids (never empty).
        merged: Per continuation, whether the tokenizer merged across the boundary.
    """

    prefix: list[int]
    continuations: list[list[int]]
    merged: list[bool]


@dataclass(frozen=True)
class EncodedText:
    """A whole text as token ids, with character offsets of the text's own tokens.

    Attributes:
        ids: Token ids, starting with the BOS where the policy adds one.
        offsets: ``(start, end)`` in the text of each non-BOS token; empty if unavailable.
        n_unscored: Leading tokens without a context to be scored against (1 without BOS).
    """

    ids: list[int]
    offsets: list[tuple[int, int]]
    n_unscored: int


def tokenizer_adds_bos(tokenizer: Any) -> bool:
    """Whether the tokenizer prepends its BOS token when asked for special tokens."""
    bos = tokenizer.bos_token_id
    if bos is None:
        return False
    ids = tokenizer("a", add_special_tokens=True)["input_ids"]
    return bool(ids) and ids[0] == bos


def resolve_bos(tokenizer: Any, policy: str, model_id: str) -> bool:
    """Decide whether a BOS token is prepended.

    Args:
        tokenizer: The model's tokenizer.
        policy: One of :data:`BOS_POLICIES`.
        model_id: For the error message.

    Returns:
        Whether to prepend the BOS token.

    Raises:
        TracktaleError: For an unknown policy, or ``add`` with a tokenizer without a BOS token.
    """
    if policy not in BOS_POLICIES:
        raise TracktaleError(f"--bos: {policy!r} is not one of {', '.join(BOS_POLICIES)}")
    if policy == "add" and tokenizer.bos_token_id is None:
        raise TracktaleError(
            f"--bos add: the tokenizer of {model_id} has no BOS token (use --bos none or auto)"
        )
    return policy == "add" or (policy == "auto" and tokenizer_adds_bos(tokenizer))


class TextEncoder:
    """Encodes prefixes, continuations, texts and prompts under one BOS policy."""

    def __init__(self, tokenizer: Any, add_bos: bool) -> None:
        self.tokenizer = tokenizer
        self.add_bos = add_bos
        self._bos = [tokenizer.bos_token_id] if add_bos else []

    def encode(self, text: str) -> list[int]:
        """The text's ids, without special tokens."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def choice(self, prefix: str, continuations: Sequence[str]) -> EncodedChoice:
        """Encode a prefix and its continuations with exact boundaries (see the module doc).

        Raises:
            TracktaleError: For an empty continuation.
        """
        prefix_ids = self._bos + self.encode(prefix)
        if not prefix_ids:
            raise TracktaleError(
                "an empty prefix without a BOS token leaves the first token unscorable "
                "(use --bos add)"
            )
        encoded, merged = [], []
        for continuation in continuations:
            if not continuation:
                raise TracktaleError(f"empty continuation after prefix {prefix[-40:]!r}")
            full = self._bos + self.encode(prefix + continuation)
            if full[: len(prefix_ids)] == prefix_ids and len(full) > len(prefix_ids):
                encoded.append(full[len(prefix_ids) :])
                merged.append(False)
            else:
                encoded.append(self.encode(continuation))
                merged.append(True)
        return EncodedChoice(prefix_ids, encoded, merged)

    def text(self, text: str) -> EncodedText:
        """Encode a whole text for sequence scoring, with character offsets where available.

        Raises:
            TracktaleError: For an empty text.
        """
        if not text:
            raise TracktaleError("cannot score the log-probability of an empty text")
        try:
            encoding = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
            offsets = [tuple(pair) for pair in encoding["offset_mapping"]]
        except (NotImplementedError, ValueError, KeyError):
            encoding = self.tokenizer(text, add_special_tokens=False)
            offsets = []
        ids = self._bos + list(encoding["input_ids"])
        return EncodedText(ids, offsets, n_unscored=0 if self.add_bos else 1)

    def text_after(self, text: str, start: int | None) -> EncodedText:
        """:meth:`text`, after the token ``start`` instead of the policy's BOS (``None``: none).

        Raises:
            TracktaleError: For an empty text.
        """
        encoded = self.text(text)
        own = encoded.ids[1 - encoded.n_unscored :]
        if start is None:
            return EncodedText(own, encoded.offsets, n_unscored=1)
        return EncodedText([start, *own], encoded.offsets, n_unscored=0)

    def prompt(self, prompt: str | None, messages: Any, use_chat: bool) -> list[int]:
        """Encode a generation prompt: chat turns through the template, or plain text."""
        if use_chat:
            rendered = self.tokenizer.apply_chat_template(
                [dict(message) for message in messages],
                add_generation_prompt=True,
                tokenize=False,
            )
            return self.encode(rendered)
        if prompt is None:
            raise TracktaleError("a plain-text generation request needs a prompt")
        return self._bos + self.encode(prompt)

    def token_strings(self, ids: Sequence[int]) -> tuple[str, ...]:
        """Each token decoded on its own (readable, with its leading space)."""
        return tuple(self.tokenizer.decode([token]) for token in ids)


def has_chat_template(tokenizer: Any) -> bool:
    """Whether the tokenizer carries a chat template."""
    return bool(getattr(tokenizer, "chat_template", None))


def use_chat_format(
    prompt_format: str,
    has_template: bool,
    messages: Sequence[Mapping[str, str]] | None,
    model_id: str,
) -> bool:
    """Decide between the plain prompt and the chat template for one request.

    ``auto`` uses the chat template when the model's tokenizer has one and the request has chat
    turns; ``chat`` insists on it; ``plain`` never uses it.

    Args:
        prompt_format: One of :data:`PROMPT_FORMATS`.
        has_template: Whether the model's tokenizer has a chat template.
        messages: The request's chat turns, if any.
        model_id: For the error message.

    Raises:
        TracktaleError: For ``chat`` with a tokenizer without a template or a request without
            chat turns.
    """
    if prompt_format not in PROMPT_FORMATS:
        raise TracktaleError(
            f"--prompt-format: {prompt_format!r} is not one of {', '.join(PROMPT_FORMATS)}"
        )
    if prompt_format == "chat" and not has_template:
        raise TracktaleError(
            f"--prompt-format chat: the tokenizer of {model_id} has no chat template "
            "(an instruct model's tokenizer is needed; use --prompt-format plain for a base model)"
        )
    if prompt_format == "chat" and not messages:
        raise TracktaleError("--prompt-format chat: an item has no chat messages to render")
    return prompt_format == "chat" or (prompt_format == "auto" and has_template and bool(messages))


def cut_at_stop(text: str, stops: Sequence[str]) -> str:
    r"""``text`` up to the first of the stop strings (all of it when none occurs).

    A stop string of whitespace alone (``"\n"``: the end of the answer's line) ends the answer
    only once it has begun: the whitespace a model writes before its first word is no answer's
    end (a base model often starts on a new line after ``Location:``).
    """
    begun = len(text) - len(text.lstrip())
    found = [
        text.find(stop, begun if stop.isspace() else 0) for stop in stops if stop and stop in text
    ]
    cut = min((at for at in found if at >= 0), default=len(text))
    return text[:cut]


def server_stops(stops: Sequence[str], limit: int) -> list[str]:
    """The stop strings an endpoint may apply itself, at most ``limit``.

    Not those of whitespace alone: a server would end on the newline before the first word;
    the caller applies them with :func:`cut_at_stop`.
    """
    return [stop for stop in stops if stop and not stop.isspace()][:limit]
