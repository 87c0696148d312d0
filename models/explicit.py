"""The explicit task: generate an answer to each item's prompt and let the paradigm judge it.

Greedy generation from the item's prompt (plain text, or its chat turns through the chat
template), scored by the paradigm's ``score_response``, whose judgement is merged into the row.
With a temperature above 0 the outputs are sampled, ``num_samples`` per item, each with a seed
derived from the run's seed, the item and the sample's number (all kept in ``sample_outputs``);
with ``rerun_truncated`` an output that hit its budget and is not correct is generated again
with the model's whole context (rows say ``truncated`` and ``rerun``). Where the backend
reports them (an API endpoint), the generated tokens' log-probabilities are stored too
(``output_logprob``, their sum: the answer's log-probability). The row's own fields are
declared by :class:`tracktale.schema.results.ExplicitResult`; the paradigm's judgement (its
``judgement`` record) and the backend's generation details (its scorer's
``generation_details`` record) come on top, each checked against its record.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracktale.errors import TracktaleError
from tracktale.item import Item
from tracktale.models.sampling import sample_seed
from tracktale.models.task_options import TaskOptions, TaskRow
from tracktale.models.tokens import use_chat_format
from tracktale.schema.results import (
    ExplicitResult,
    Judgement,
    UsedPromptFormat,
    check_record,
    field_names,
)
from tracktale.scorer import Generation, GenerationRequest, Scorer

if TYPE_CHECKING:
    from tracktale.stimuli.paradigm import Paradigm


def _paradigm(item: Item) -> Paradigm:
    from tracktale.stimuli.registry import get_paradigm

    return get_paradigm(item.paradigm)


def _request(
    item: Item, scorer: Scorer, options: TaskOptions
) -> tuple[GenerationRequest, UsedPromptFormat]:
    """The item's generation request, and the prompt format it uses (``plain``/``chat``)."""
    has_template = bool(scorer.info.details.get("has_chat_template"))
    if options.prompt_format == "chat" and not item.messages:
        raise TracktaleError(
            f"--prompt-format chat: item {item.item_id} has no chat messages to render"
        )
    chat = use_chat_format(options.prompt_format, has_template, item.messages, scorer.info.model_id)
    if not chat and item.prompt is None:
        raise TracktaleError(
            f"item {item.item_id} has no plain-text prompt (try --prompt-format chat)"
        )
    paradigm = _paradigm(item)
    request = GenerationRequest(
        prompt=item.prompt or "",
        messages=tuple(item.messages or ()) if chat else None,
        max_new_tokens=generation_budget(options, item, paradigm.item_budget(item)),
        stop=tuple(paradigm.stop_sequences),
    )
    return request, "chat" if chat else "plain"


def explicit_rows(scorer: Scorer, items: Sequence[Item], options: TaskOptions) -> list[TaskRow]:
    """One row per item: the first output, its judgement, and how it was decoded."""
    prepared = [_request(item, scorer, options) for item in items]
    requests = [request for request, _ in prepared]
    samples = _generate_samples(scorer, items, requests, options)
    rows = []
    for item, (request, prompt_format), outputs in zip(items, prepared, samples, strict=True):
        paradigm = _paradigm(item)
        judged = [paradigm.score_response(item, sample.generation.text) for sample in outputs]
        rows_judged = _check_parts(
            scorer, paradigm, judged, [dict(s.generation.details) for s in outputs]
        )
        first = outputs[0]
        result = ExplicitResult(
            correct=judged[0].correct,
            chat_template_used=prompt_format == "chat",
            output=first.generation.text,
            prompt_format=prompt_format,
            prompt_format_requested=options.prompt_format,
            max_new_tokens=request.max_new_tokens,
            temperature=options.temperature,
            num_samples=options.num_samples,
            sampling_seed=options.sampling_seed if options.temperature > 0 else None,
            sample_seed=first.seed,
            rerun_truncated=options.rerun_truncated,
        )
        result = _with_samples(_with_generation(result, first.generation), options, outputs, judged)
        rows.append(TaskRow.of(result, {**rows_judged[0], **first.generation.details}))
    return rows


def _check_parts(
    scorer: Scorer,
    paradigm: Paradigm,
    judged: Sequence[Judgement],
    details: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """Check each sample's judgement against the paradigm's record, its details the backend's.

    The judgement is built as the paradigm's record (the type checker sees its fields); the
    values are still checked here, since a dataclass does not check them when it is built.

    Returns:
        Each sample's judgement as the row's columns (its fields in declaration order).

    Raises:
        TracktaleError: For a judgement that is not the paradigm's record, a key that shadows a
            field of the task's own rows, or one that the record does not declare or that has
            the wrong type.
    """
    judge = f"the explicit task: the {paradigm.name} paradigm's judgement"
    for judgement in judged:
        if not isinstance(judgement, paradigm.judgement):
            raise TracktaleError(
                f"{judge} is a {type(judgement).__name__}, not its {paradigm.judgement.__name__}"
            )
    rows = [dataclasses.asdict(judgement) for judgement in judged]
    declared = set(field_names(ExplicitResult))
    for name in [*rows[0], *details[0]]:
        if name in declared and name != "correct":
            raise TracktaleError(
                f"{paradigm.name}: {name!r} is a field of the explicit task's rows; a "
                "paradigm's judgement or a backend's details cannot hold it"
            )
    report = f"the explicit task: the {scorer.info.backend} backend's generation details"
    for row, detail in zip(rows, details, strict=True):
        check_record(paradigm.judgement, row, writer=judge)
        check_record(type(scorer).generation_details, detail, writer=report)
    return rows


@dataclass(frozen=True)
class _Sample:
    """One output of one item, with what a rerun at full context changed."""

    generation: Generation
    seed: int | None
    truncated: bool = False
    first_pass: str | None = None


def _generate_samples(
    scorer: Scorer,
    items: Sequence[Item],
    requests: Sequence[GenerationRequest],
    options: TaskOptions,
) -> list[list[_Sample]]:
    """``num_samples`` outputs per item, each truncated wrong one generated again if asked."""
    sampled = options.temperature > 0
    flat, seeds = [], []
    for item, request in zip(items, requests, strict=True):
        for number in range(options.num_samples):
            seed = sample_seed(options.sampling_seed, item.item_id, number) if sampled else None
            flat.append(dataclasses.replace(request, temperature=options.temperature, seed=seed))
            seeds.append(seed)
    generations = scorer.generate_detailed(flat)
    samples = [_Sample(g, seed) for g, seed in zip(generations, seeds, strict=True)]
    if options.rerun_truncated:
        owners = [item for item in items for _ in range(options.num_samples)]
        _rerun(scorer, options, flat, samples, owners)
    n = options.num_samples
    return [samples[start : start + n] for start in range(0, len(samples), n)]


def _rerun(
    scorer: Scorer,
    options: TaskOptions,
    flat: Sequence[GenerationRequest],
    samples: list[_Sample],
    owners: Sequence[Item],
) -> None:
    """Generate again, in place, every sample that hit its budget and is not correct."""
    budget = _rerun_budget(scorer, options)
    again = [
        index
        for index, (sample, item) in enumerate(zip(samples, owners, strict=True))
        if sample.generation.finish_reason == "length"
        and not _paradigm(item).score_response(item, sample.generation.text).correct
    ]
    reruns = scorer.generate_detailed(
        [dataclasses.replace(flat[index], max_new_tokens=budget) for index in again]
    )
    for index, generation in zip(again, reruns, strict=True):
        old = samples[index]
        samples[index] = _Sample(generation, old.seed, True, old.generation.text)
    for index, sample in enumerate(samples):
        if sample.first_pass is None and sample.generation.finish_reason == "length":
            samples[index] = dataclasses.replace(sample, truncated=True)


def _rerun_budget(scorer: Scorer, options: TaskOptions) -> int:
    if options.rerun_max_new_tokens is not None:
        return options.rerun_max_new_tokens
    context = scorer.info.details.get("max_context")
    if not context:
        raise TracktaleError(
            f"--rerun-truncated: the {scorer.info.backend} backend does not report "
            f"{scorer.info.model_id}'s context length; give --rerun-max-new-tokens"
        )
    return int(context)  # the backend cuts it to what the context leaves after the prompt


def _with_samples(
    result: ExplicitResult,
    options: TaskOptions,
    samples: Sequence[_Sample],
    judged: Sequence[Judgement],
) -> ExplicitResult:
    """How the row's output was decoded beyond its settings, and every sample of several."""
    first = samples[0]
    if options.rerun_truncated:
        result = dataclasses.replace(
            result,
            truncated=first.truncated or first.first_pass is not None,
            rerun=first.first_pass is not None,
            rerun_max_new_tokens=options.rerun_max_new_tokens,
            output_first_pass=first.first_pass,
        )
    if options.num_samples > 1:
        result = dataclasses.replace(
            result,
            sample_outputs=[sample.generation.text for sample in samples],
            sample_correct=[judgement.correct for judgement in judged],
        )
    return result


def _with_generation(result: ExplicitResult, generation: Generation) -> ExplicitResult:
    """What a backend reports beyond the text: token log-probabilities, finish reason."""
    result = dataclasses.replace(result, finish_reason=generation.finish_reason)
    if generation.logprobs:
        result = dataclasses.replace(
            result,
            output_logprob=math.fsum(generation.logprobs),
            output_n_tokens=len(generation.logprobs),
            output_tokens=list(generation.tokens),
            output_logprobs=list(generation.logprobs),
        )
    return result


def generation_budget(options: TaskOptions, item: Item, paradigm_default: int) -> int:
    """The run's --max-new-tokens, else the item's own budget, else the paradigm's default.

    ``paradigm_default`` is the paradigm's budget for this item (its ``item_budget``).
    """
    if options.max_new_tokens is not None:
        return options.max_new_tokens
    own = item.meta.get("max_new_tokens")
    return int(own) if isinstance(own, int) and own > 0 else paradigm_default
