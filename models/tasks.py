"""Tasks: items -> scorer requests -> result rows, for any :class:`~tracktale.scorer.Scorer`.

- ``implicit``: the summed log-probability of the good and the bad continuation after the
  shared prefix; correct when good > bad (a tie is not correct). With calibration, both
  continuations are also scored after the neutral prefix (the story's first sentence), and the
  calibrated comparison subtracts each continuation's prior:
  ``(logprob_good - prior_good) > (logprob_bad - prior_bad)``.
- ``explicit``: greedy generation from the item's prompt (plain text, or its chat turns through
  the chat template), scored by the paradigm's ``score_response``, whose dict is merged into the
  row. With a temperature above 0 the outputs are sampled, ``num_samples`` per item, each with a
  seed derived from the run's seed, the item and the sample's number (all kept in
  ``sample_outputs``); with ``rerun_truncated`` an output that hit its budget and is not correct
  is generated again with the model's whole context (rows say ``truncated`` and ``rerun``).
  Where the backend reports them (an API endpoint), the generated tokens' log-probabilities
  are stored too (``output_logprob``, their sum: the answer's log-probability).
- ``sequence``: the log-probability of the item's text (``context``) with per-token and
  per-word surprisal.

Identical requests within a call (the calibration requests of items that share a first
sentence) are sent to the scorer once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.item import Item
from tracktale.models.sampling import check_sampling, sample_seed
from tracktale.models.surprisal import align_to_words
from tracktale.models.tokens import PROMPT_FORMATS, use_chat_format
from tracktale.scorer import (
    TASKS,
    ChoiceRequest,
    Generation,
    GenerationRequest,
    ResultRecord,
    Scorer,
    SequenceRequest,
    TokenScores,
)


@dataclass(frozen=True)
class TaskOptions:
    """How the tasks are run; every setting that changes a score is recorded in the row.

    Attributes:
        calibrate: Also score the implicit continuations after the neutral prefix.
        prompt_format: ``auto`` (chat template when the tokenizer has one), ``plain``, ``chat``.
        max_new_tokens: Generation budget; ``None``: the paradigm's default.
        word_surprisal: Add per-word surprisal to sequence rows.
        temperature: Explicit task: 0 decodes greedily; above 0, samples.
        num_samples: Explicit task: outputs per item (sampled decoding); the first is the
            row's ``output``, all are kept in ``sample_outputs``.
        sampling_seed: Seeds every sample (with the item id and the sample's number).
        rerun_truncated: Explicit task: generate again, with ``rerun_max_new_tokens`` (else
            the model's whole context), every output that hit its budget and is not correct
            (the arithmetic paper's rule).
        rerun_max_new_tokens: The rerun's budget; ``None``: what the model's context leaves
            (backends that report it: hf).
    """

    calibrate: bool = False
    prompt_format: str = "auto"
    max_new_tokens: int | None = None
    word_surprisal: bool = True
    temperature: float = 0.0
    num_samples: int = 1
    sampling_seed: int = 0
    rerun_truncated: bool = False
    rerun_max_new_tokens: int | None = None

    def __post_init__(self) -> None:
        check_sampling(self.temperature, self.num_samples)
        if self.rerun_max_new_tokens is not None and self.rerun_max_new_tokens < 1:
            raise TracktaleError(
                f"--rerun-max-new-tokens must be at least 1, got {self.rerun_max_new_tokens}"
            )
        if self.prompt_format not in PROMPT_FORMATS:
            raise TracktaleError(
                f"--prompt-format: {self.prompt_format!r} is not one of {', '.join(PROMPT_FORMATS)}"
            )
        if self.max_new_tokens is not None and self.max_new_tokens < 1:
            raise TracktaleError(f"--max-new-tokens must be at least 1, got {self.max_new_tokens}")


def applies(task: str, item: Item) -> bool:
    """Whether an item can be scored on a task (implicit needs a choice, explicit a prompt)."""
    if task == "implicit":
        return item.choice is not None and item.choice.question is None
    if task == "explicit":
        return item.prompt is not None or bool(item.messages)
    if task == "sequence":
        return bool(item.context)
    raise TracktaleError(f"unknown task {task!r} (choose from {', '.join(TASKS)})")


def score_items(
    scorer: Scorer,
    items: Sequence[Item],
    task: str,
    *,
    stimulus_sha256: str,
    options: TaskOptions | None = None,
) -> list[ResultRecord]:
    """Score items on one task; one row per item, in the items' order.

    Args:
        scorer: Any backend.
        items: Items the task applies to (see :func:`applies`).
        task: One of :data:`~tracktale.scorer.TASKS`.
        stimulus_sha256: The stimulus set's sha256, recorded in every row.
        options: Task settings.

    Returns:
        The rows.

    Raises:
        TracktaleError: For an unknown task or an item the task does not apply to.
    """
    options = options or TaskOptions()
    for item in items:
        if not applies(task, item):
            raise TracktaleError(f"item {item.item_id} cannot be scored on the {task} task")
    scoring = {"implicit": _implicit, "explicit": _explicit, "sequence": _sequence}[task]
    all_scores = scoring(scorer, items, options)
    return [
        ResultRecord(
            model_id=scorer.info.model_id,
            revision=scorer.info.revision,
            item_id=item.item_id,
            task=task,
            stimulus_sha256=stimulus_sha256,
            paradigm=item.paradigm,
            info=scorer.info,
            scores=scores,
        )
        for item, scores in zip(items, all_scores, strict=True)
    ]


def _unique_choices(scorer: Scorer, requests: Iterable[ChoiceRequest]):
    requests = list(requests)
    unique = list(dict.fromkeys(requests))
    answers = dict(zip(unique, scorer.conditional_score(unique), strict=True))
    return [answers[request] for request in requests]


def _implicit(scorer: Scorer, items: Sequence[Item], options: TaskOptions) -> list[dict]:
    choices = [item.choice for item in items]
    main = [ChoiceRequest(c.prefix, (c.good, c.bad)) for c in choices]
    neutral = [
        ChoiceRequest(c.neutral_prefix, (c.good, c.bad))
        for c in choices
        if options.calibrate and c.neutral_prefix
    ]
    answers = _unique_choices(scorer, [*main, *neutral])
    priors = iter(answers[len(main) :])
    rows = []
    for choice, (good, bad) in zip(choices, answers[: len(main)], strict=True):
        row = {
            **_span("good", good),
            **_span("bad", bad),
            "correct": good.reduce() > bad.reduce(),
            "boundary_merged": good.boundary_merged or bad.boundary_merged,
            "calibrated": options.calibrate and bool(choice.neutral_prefix),
            "prior_good": None,
            "prior_bad": None,
            "correct_calibrated": None,
            "chat_template_used": False,
        }
        if row["calibrated"]:
            prior_good, prior_bad = next(priors)
            row["prior_good"], row["prior_bad"] = prior_good.reduce(), prior_bad.reduce()
            row["correct_calibrated"] = (good.reduce() - row["prior_good"]) > (
                bad.reduce() - row["prior_bad"]
            )
        rows.append(row)
    return rows


def _span(name: str, scores: TokenScores) -> dict[str, Any]:
    return {
        f"logprob_{name}": scores.reduce("sum"),
        f"mean_{name}": scores.reduce("mean"),
        f"n_tokens_{name}": scores.n_tokens,
        f"tokens_{name}": list(scores.tokens),
        f"logprobs_{name}": list(scores.logprobs),
        f"token_ids_{name}": list(scores.ids),
    }


def _explicit(scorer: Scorer, items: Sequence[Item], options: TaskOptions) -> list[dict]:
    from tracktale.stimuli.registry import get_paradigm

    has_template = bool(scorer.info.details.get("has_chat_template"))
    requests, formats = [], []
    for item in items:
        if options.prompt_format == "chat" and not item.messages:
            raise TracktaleError(
                f"--prompt-format chat: item {item.item_id} has no chat messages to render"
            )
        chat = use_chat_format(
            options.prompt_format, has_template, item.messages, scorer.info.model_id
        )
        if not chat and item.prompt is None:
            raise TracktaleError(
                f"item {item.item_id} has no plain-text prompt (try --prompt-format chat)"
            )
        paradigm = get_paradigm(item.paradigm)
        requests.append(
            GenerationRequest(
                prompt=item.prompt or "",
                messages=tuple(item.messages) if chat else None,
                max_new_tokens=generation_budget(options, item, paradigm.max_new_tokens),
                stop=tuple(paradigm.stop_sequences),
            )
        )
        formats.append("chat" if chat else "plain")
    samples = _generate_samples(scorer, items, requests, options)
    rows = []
    for item, request, prompt_format, outputs in zip(
        items, requests, formats, samples, strict=True
    ):
        paradigm = get_paradigm(item.paradigm)
        judged = [dict(paradigm.score_response(item, sample.generation.text)) for sample in outputs]
        if "correct" not in judged[0]:
            raise TracktaleError(f"paradigm {item.paradigm!r} scored a response without 'correct'")
        first = outputs[0]
        rows.append(
            {
                **judged[0],
                "correct": bool(judged[0]["correct"]),
                "output": first.generation.text,
                "prompt_format": prompt_format,
                "prompt_format_requested": options.prompt_format,
                "max_new_tokens": request.max_new_tokens,
                "chat_template_used": prompt_format == "chat",
                **_generation_columns(first.generation),
                **_sampling_columns(options, outputs, judged),
            }
        )
    return rows


@dataclass(frozen=True)
class _Sample:
    """One output of one item, with what a rerun at full context changed."""

    generation: Generation
    seed: int | None
    truncated: bool = False
    first_pass: str | None = None


def _generate_samples(
    scorer: Scorer, items: Sequence[Item], requests: Sequence[GenerationRequest], options
) -> list[list[_Sample]]:
    """``num_samples`` outputs per item, each truncated wrong one generated again if asked."""
    import dataclasses

    from tracktale.stimuli.registry import get_paradigm

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
        budget = _rerun_budget(scorer, options)
        again = [
            index
            for index, (sample, item) in enumerate(zip(samples, owners, strict=True))
            if sample.generation.finish_reason == "length"
            and not get_paradigm(item.paradigm).score_response(item, sample.generation.text)[
                "correct"
            ]
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
    n = options.num_samples
    return [samples[start : start + n] for start in range(0, len(samples), n)]


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


def _sampling_columns(
    options: TaskOptions, samples: Sequence[_Sample], judged: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """How the row's output was decoded, and every sample where there are several."""
    first = samples[0]
    columns: dict[str, Any] = {
        "temperature": options.temperature,
        "num_samples": options.num_samples,
        "sampling_seed": options.sampling_seed if options.temperature > 0 else None,
        "sample_seed": first.seed,
        "rerun_truncated": options.rerun_truncated,
    }
    if options.rerun_truncated:
        columns |= {
            "truncated": first.truncated or first.first_pass is not None,
            "rerun": first.first_pass is not None,
            "rerun_max_new_tokens": options.rerun_max_new_tokens,
            "output_first_pass": first.first_pass,
        }
    if options.num_samples > 1:
        columns["sample_outputs"] = [sample.generation.text for sample in samples]
        columns["sample_correct"] = [bool(scores["correct"]) for scores in judged]
    return columns


def _generation_columns(generation: Generation) -> dict[str, Any]:
    """What a backend reports beyond the text: token log-probabilities, finish reason, usage."""
    columns: dict[str, Any] = dict(generation.details)
    if generation.finish_reason is not None:
        columns["finish_reason"] = generation.finish_reason
    if generation.logprobs:
        columns["output_logprob"] = math.fsum(generation.logprobs)
        columns["output_n_tokens"] = len(generation.logprobs)
        columns["output_tokens"] = list(generation.tokens)
        columns["output_logprobs"] = list(generation.logprobs)
    return columns


def generation_budget(options: TaskOptions, item: Item, paradigm_default: int) -> int:
    """The run's --max-new-tokens, else the item's own budget, else the paradigm's default."""
    if options.max_new_tokens is not None:
        return options.max_new_tokens
    own = item.meta.get("max_new_tokens")
    return int(own) if isinstance(own, int) and own > 0 else paradigm_default


def _sequence(scorer: Scorer, items: Sequence[Item], options: TaskOptions) -> list[dict]:
    scored = scorer.sequence_score([SequenceRequest(item.context) for item in items])
    rows = []
    for item, scores in zip(items, scored, strict=True):
        row: dict[str, Any] = {
            "logprob": scores.reduce("sum"),
            "mean": scores.reduce("mean") if scores.n_tokens else math.nan,
            "n_tokens": scores.n_tokens,
            "tokens": list(scores.tokens),
            "logprobs": list(scores.logprobs),
            "token_offsets": list(scores.offsets),
            "chat_template_used": False,
        }
        if options.word_surprisal and scores.offsets:
            words = align_to_words(item.context, scores.offsets, scores.logprobs)
            row["words"] = [word.word for word in words]
            row["word_surprisals"] = [word.surprisal for word in words]
            row["word_n_tokens"] = [word.n_tokens for word in words]
        rows.append(row)
    return rows
