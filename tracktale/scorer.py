"""The scorer contract: what a model backend answers, and the result row every stage reads.

A backend (Hugging Face transformers, an OpenAI-compatible endpoint, ...) implements
:class:`Scorer` over three small request types, in the field's terms: the log-probability of
continuations given a shared prefix (``conditional_score``), the log-probability of a whole
sequence with per-token surprisal (``sequence_score``), and greedy generation (``generate``).
Scoring an item produces :class:`ResultRecord` rows, one per (model, revision, item, task); the
results store and the analyses read nothing else.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

TASKS = ("implicit", "explicit", "sequence")
"""The built-in tasks, in the order ``tracktale.models.tasks`` registers them (a test checks it).

``implicit``: compare the log-probabilities of the good and bad continuations.
``explicit``: generate an answer to the item's prompt and score it with the paradigm.
``sequence``: the log-probability of the item's text (the manipulation check)."""

REDUCTIONS = ("sum", "mean")


@dataclass(frozen=True, slots=True)
class ChoiceRequest:
    """Continuations of one shared prefix (the prefix is run once for all of them).

    Attributes:
        prefix: The shared context, without trailing whitespace.
        continuations: Each with its own leading space (see :mod:`tracktale.item`).
    """

    prefix: str
    continuations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SequenceRequest:
    """A whole text whose tokens are all scored (the first against the BOS, if any).

    Attributes:
        text: The text.
        word_ends: Also give, before each token and after the last, the log-probability that
            the next token ends the word before it (:attr:`TokenScores.word_ends`), with the
            text scored after the model's document-start token instead of the BOS policy's
            (:mod:`tracktale.models.word_boundaries`). A backend without the next-token
            distribution leaves them empty.
    """

    text: str
    word_ends: bool = False


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """A prompt to complete greedily.

    The caller decides the format: a backend renders ``messages`` with the model's chat template
    when they are given, and uses ``prompt`` as plain text when they are ``None``.

    Attributes:
        prompt: Plain text for base models.
        messages: The same prompt as chat turns, for models with a chat template.
        max_new_tokens: The generation budget.
        stop: Strings that end the generation early.
        temperature: 0 for greedy decoding (the default); above 0, sample from the softmax of
            the logits divided by it.
        seed: The sample's seed (sampled decoding; ``None``: the backend's own choice).
    """

    prompt: str
    messages: tuple[Mapping[str, str], ...] | None = None
    max_new_tokens: int = 8
    stop: tuple[str, ...] = ()
    temperature: float = 0.0
    seed: int | None = None


@dataclass(frozen=True, slots=True)
class TokenScores:
    """Per-token log-probabilities (natural log) of a scored span.

    Attributes:
        tokens: The scored tokens as strings.
        logprobs: log P(token | everything before it), one per token.
        offsets: Character offset of each token's start within the scored span (for aligning
            surprisal to words); empty where the backend cannot give them.
        ids: The tokens' ids in the model's vocabulary; empty where the backend has none.
        boundary_merged: For a continuation: the tokenizer merged characters across the
            prefix/continuation boundary, so the continuation was tokenized on its own.
        word_ends: For a sequence asked with ``word_ends``: ``log P(the next token ends the
            word | everything before)`` before each scored token and after the last (one more
            than ``logprobs``); empty where not asked or not available.
        word_starts: With ``word_ends``: whether each scored token ends the word before it
            (begins with whitespace, or is an end-of-text token).
        start_token: With ``word_ends``: the token the text was scored after (its first token
            is then scored); ``None``: no start token, the first token is not scored.
    """

    tokens: tuple[str, ...]
    logprobs: tuple[float, ...]
    offsets: tuple[int, ...] = ()
    ids: tuple[int, ...] = ()
    boundary_merged: bool = False
    word_ends: tuple[float, ...] = ()
    word_starts: tuple[bool, ...] = ()
    start_token: str | None = None

    @property
    def n_tokens(self) -> int:
        """Number of scored tokens."""
        return len(self.logprobs)

    def reduce(self, reduction: str = "sum") -> float:
        """Sum or mean of the log-probabilities."""
        if reduction not in REDUCTIONS:
            raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
        total = math.fsum(self.logprobs)
        return total if reduction == "sum" else total / max(1, len(self.logprobs))


@dataclass(frozen=True, slots=True)
class Generation:
    """A greedy completion with what the backend knows about it.

    Attributes:
        text: The generated text (without the prompt, cut at the first stop string).
        tokens: The generated tokens as strings, up to the cut; empty where the backend does not
            report them.
        logprobs: log P(token | prompt, earlier tokens) of each of ``tokens``; empty where the
            backend does not report them.
        finish_reason: Why generation stopped (``stop``, ``length``, ...), where reported.
        details: Anything else worth a column (served model, token usage, ...), as the
            backend's :attr:`Scorer.generation_details` declare.
    """

    text: str
    tokens: tuple[str, ...] = ()
    logprobs: tuple[float, ...] = ()
    finish_reason: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class GenerationDetails:
    """What a backend reports about each generation beyond the text: by default, nothing.

    A backend that reports more (token usage, a fingerprint, ...) declares a subclass as its
    :attr:`Scorer.generation_details`; the explicit task checks every :attr:`Generation.details`
    against it, and its fields are columns of the explicit task's rows.
    """


@dataclass(frozen=True)
class ModelInfo:
    """What identifies a loaded model in the results.

    Attributes:
        model_id: Hub id or local path, as given.
        revision: The revision asked for (branch, tag, ``step1000``, commit) or ``None``.
        resolved_sha: The commit the revision resolved to, where the hub gives one.
        backend: The backend's registry name.
        dtype: Compute dtype (``float32``, ``bfloat16``, ...).
        device: Where it ran (``cpu``, ``cuda:0``, ``auto``).
        bos_policy: Whether a BOS token is prepended (``"add"``/``"none"``).
        details: Anything else worth recording (package versions, chat template use, ...).
    """

    model_id: str
    revision: str | None
    resolved_sha: str | None
    backend: str
    dtype: str
    device: str
    bos_policy: str
    details: Mapping[str, Any] = field(default_factory=dict)


class Scorer(abc.ABC):
    """A language model that can be asked for log-probabilities and greedy generations."""

    info: ModelInfo
    generation_details: ClassVar[type[GenerationDetails]] = GenerationDetails
    """The record :attr:`Generation.details` follow (listed for the store in
    ``tracktale.models.registry``, so that reading results does not import the backend)."""

    @abc.abstractmethod
    def __init__(
        self,
        model_id: str,
        *,
        revision: str | None = None,
        dtype: str = "float32",
        device: str = "auto",
        batch_size: int | None = None,
        bos: str = "auto",
        notify: Callable[[str], None] | None = None,
        **backend_options: Any,
    ) -> None:
        """Load the model: the constructor every backend has, as ``load_scorer`` calls it.

        Args:
            model_id: Hub id, local folder or endpoint model name.
            revision: Branch, tag or commit (``None``: the default branch).
            dtype: ``float32``, ``bfloat16`` or ``float16`` (what a backend cannot choose it
                records as it is).
            device: ``auto``, ``cpu``, ``cuda``, ``cuda:1``, ...
            batch_size: Requests per batch (``None``: the backend's default).
            bos: The BOS policy (``auto``, ``add``, ``none``).
            notify: Called with one line for what the user should know while loading.
            **backend_options: The backend's own keywords (``gguf_file``, ``base_url``, ...),
                declared by the backend's own constructor.
        """

    @abc.abstractmethod
    def conditional_score(self, requests: Sequence[ChoiceRequest]) -> list[list[TokenScores]]:
        """Per-token log-probabilities of each continuation given its prefix.

        Returns:
            For each request, one :class:`TokenScores` per continuation, in order.
        """

    @abc.abstractmethod
    def sequence_score(self, requests: Sequence[SequenceRequest]) -> list[TokenScores]:
        """Per-token log-probabilities of whole texts."""

    @abc.abstractmethod
    def generate(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """Greedy completions (the generated text only, without the prompt)."""

    def generate_detailed(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Greedy completions with token log-probabilities where the backend has them.

        The default wraps :meth:`generate` (text only); a backend that gets log-probabilities
        with its completions (an API endpoint) overrides it.
        """
        return [Generation(text) for text in self.generate(requests)]


@dataclass(frozen=True)
class ResultRecord:
    """One row of the results store: one task on one item by one model revision.

    The identity is ``(model_id, revision, item_id, task)``; ``scores`` holds the task's
    measurements, flattened into columns by the store, as declared by the task's result model
    in :mod:`tracktale.schema.results` (``ImplicitResult``, ``ExplicitResult`` plus what the
    paradigm's ``score_response`` adds, ``SequenceResult``), against which the task checks
    every row it produces.
    """

    model_id: str
    revision: str | None
    item_id: str
    task: str
    stimulus_sha256: str
    paradigm: str
    info: ModelInfo
    scores: Mapping[str, Any]

    @property
    def key(self) -> tuple[str, str, str, str]:
        """The row's identity in the store (``""`` stands for no revision)."""
        return (self.model_id, self.revision or "", self.item_id, self.task)
