"""Tasks: items -> scorer requests -> result rows, for any :class:`~tracktale.scorer.Scorer`.

Each task is one registered :class:`Task`: its name, which items it applies to, how it scores
them, and its result model (:mod:`tracktale.schema.results`), against which every row it
produces is checked. The store's columns, the analysis's carried columns, the backends' tasks
and the command line's choices all follow the registry (:data:`TASK_REGISTRY`), so a new task
is one :func:`register_task`.

- ``implicit``: the summed log-probability of the good and the bad continuation after the
  shared prefix; correct when good > bad (a tie is not correct). With calibration, both
  continuations are also scored after the neutral prefix (the story's first sentence), and the
  calibrated comparison subtracts each continuation's prior:
  ``(logprob_good - prior_good) > (logprob_bad - prior_bad)``.
- ``explicit``: generation from the item's prompt, judged by the paradigm
  (:mod:`tracktale.models.explicit`).
- ``sequence``: the log-probability of the item's text (``context``) with per-token and
  per-word surprisal.

Identical requests within a call (the calibration requests of items that share a first
sentence) are sent to the scorer once.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.item import ChoicePair, Item
from tracktale.models.explicit import explicit_rows, generation_budget
from tracktale.models.surprisal import spillover, word_scores
from tracktale.models.task_options import TaskOptions, TaskRow
from tracktale.models.word_boundaries import WordProbability
from tracktale.registry import Registry
from tracktale.schema.results import (
    SHARED_RECORDS,
    ExplicitResult,
    ImplicitResult,
    JudgedResult,
    SequenceResult,
    check_result,
)
from tracktale.scorer import (
    ChoiceRequest,
    ResultRecord,
    Scorer,
    SequenceRequest,
    TokenScores,
)

__all__ = [
    "TASK_REGISTRY",
    "Task",
    "TaskOptions",
    "TaskRow",
    "applies",
    "generation_budget",
    "get_task",
    "judged_tasks",
    "register_task",
    "result_records",
    "score_items",
    "task_names",
]


SCORER_METHODS = ("conditional_score", "sequence_score", "generate")
"""What a task may ask of a scorer (a backend answers the tasks whose methods it has)."""


@dataclass(frozen=True)
class Task:
    """A model task: one registration is everything the stages need to know about it.

    Attributes:
        name: The name in rows, plans and on the command line.
        applies: Whether an item can be scored on the task.
        run: The items' rows, in the items' order.
        result: Its result model (a record of :mod:`tracktale.schema.results`).
        uses: The :data:`SCORER_METHODS` it calls (a chat endpoint only generates).
        text_key: What orders a run's items, so that items that open alike share a chunk.
        settings: The stored columns a resumed run must match, from the run's options.
        done: Of a resumed run's stored rows (a DataFrame), those it need not score again.
    """

    name: str
    applies: Callable[[Item], bool]
    run: Callable[[Scorer, Sequence[Item], TaskOptions], list[TaskRow]]
    result: type
    uses: frozenset[str]
    text_key: Callable[[Item], str]
    settings: Callable[[TaskOptions], dict[str, Any]] = field(default=lambda _options: {})
    done: Callable[[Any, TaskOptions], Any] = field(default=lambda rows, _options: rows)

    @property
    def judged(self) -> bool:
        """Whether its answers are right or wrong (its result model is a ``JudgedResult``).

        The judged tasks are the ones people do too: the analysis's accuracy comparisons and
        the command line's ``both`` are theirs.
        """
        return issubclass(self.result, JudgedResult)


TASK_REGISTRY: Registry[Task] = Registry("task")
"""Task name -> task, in registration order (the built-in ones: :data:`tracktale.scorer.TASKS`)."""


def register_task(task: Task) -> Task:
    """Add a task to the registry (or replace the one of that name).

    Raises:
        TracktaleError: For a method outside :data:`SCORER_METHODS`.
    """
    unknown = sorted(task.uses - set(SCORER_METHODS))
    if unknown:
        raise TracktaleError(f"task {task.name!r}: {unknown[0]!r} is not a scorer method")
    TASK_REGISTRY.add(task.name, task, lazy=False)
    return task


def task_names() -> tuple[str, ...]:
    """The registered tasks' names, in registration order."""
    return TASK_REGISTRY.names()


def judged_tasks() -> tuple[str, ...]:
    """The registered judged tasks' names (:attr:`Task.judged`), in registration order."""
    return tuple(name for name, task in TASK_REGISTRY.items() if task.judged)


def get_task(name: str) -> Task:
    """The registered task called ``name``.

    Raises:
        TracktaleError: For an unknown task.
    """
    return TASK_REGISTRY.get(name)


def result_records(tasks: Iterable[Task] | None = None) -> tuple[type, ...]:
    """The records a result row is made of: the shared parts, then each task's result model."""
    chosen = TASK_REGISTRY.values() if tasks is None else tasks
    return (*SHARED_RECORDS, *dict.fromkeys(task.result for task in chosen))


def applies(task: str, item: Item) -> bool:
    """Whether an item can be scored on a task (implicit needs a choice, explicit a prompt).

    Raises:
        TracktaleError: For an unknown task.
    """
    return get_task(task).applies(item)


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
        task: A registered task's name (:func:`task_names`).
        stimulus_sha256: The stimulus set's sha256, recorded in every row.
        options: Task settings.

    Returns:
        The rows, each checked against the task's result model.

    Raises:
        TracktaleError: For an unknown task, an item the task does not apply to, or a row
            that does not match the task's result model.
    """
    options = options or TaskOptions()
    chosen = get_task(task)
    for item in items:
        if not chosen.applies(item):
            raise TracktaleError(f"item {item.item_id} cannot be scored on the {task} task")
    rows = chosen.run(scorer, items, options)
    for row in rows:
        check_result(chosen.result, row.scores, task=task, extra=row.extra)
    return [
        ResultRecord(
            model_id=scorer.info.model_id,
            revision=scorer.info.revision,
            item_id=item.item_id,
            task=task,
            stimulus_sha256=stimulus_sha256,
            paradigm=item.paradigm,
            info=scorer.info,
            scores=row.scores,
        )
        for item, row in zip(items, rows, strict=True)
    ]


def _unique_choices(scorer: Scorer, requests: Iterable[ChoiceRequest]) -> list[list[TokenScores]]:
    requests = list(requests)
    unique = list(dict.fromkeys(requests))
    answers = dict(zip(unique, scorer.conditional_score(unique), strict=True))
    return [answers[request] for request in requests]


def _choice(item: Item) -> ChoicePair:
    if item.choice is None:  # applies() keeps such items out
        raise TracktaleError(f"item {item.item_id} has no choice to score")
    return item.choice


def _implicit(scorer: Scorer, items: Sequence[Item], options: TaskOptions) -> list[TaskRow]:
    choices = [_choice(item) for item in items]
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
        calibrated = options.calibrate and bool(choice.neutral_prefix)
        prior_good = prior_bad = correct_calibrated = None
        if calibrated:
            neutral_good, neutral_bad = next(priors)
            prior_good, prior_bad = neutral_good.reduce(), neutral_bad.reduce()
            correct_calibrated = (good.reduce() - prior_good) > (bad.reduce() - prior_bad)
        result = ImplicitResult(
            chat_template_used=False,
            correct=good.reduce() > bad.reduce(),
            logprob_good=good.reduce("sum"),
            logprob_bad=bad.reduce("sum"),
            mean_good=good.reduce("mean"),
            mean_bad=bad.reduce("mean"),
            n_tokens_good=good.n_tokens,
            n_tokens_bad=bad.n_tokens,
            prior_good=prior_good,
            prior_bad=prior_bad,
            correct_calibrated=correct_calibrated,
            tokens_good=list(good.tokens),
            logprobs_good=list(good.logprobs),
            token_ids_good=list(good.ids),
            tokens_bad=list(bad.tokens),
            logprobs_bad=list(bad.logprobs),
            token_ids_bad=list(bad.ids),
            boundary_merged=good.boundary_merged or bad.boundary_merged,
            calibrated=calibrated,
        )
        rows.append(TaskRow.of(result))
    return rows


def _sequence(scorer: Scorer, items: Sequence[Item], options: TaskOptions) -> list[TaskRow]:
    ends = options.word_surprisal and options.word_probability == "corrected"
    scored = scorer.sequence_score([SequenceRequest(item.context, ends) for item in items])
    rows = []
    for item, scores in zip(items, scored, strict=True):
        result = SequenceResult(
            chat_template_used=False,
            logprob=scores.reduce("sum"),
            mean=scores.reduce("mean") if scores.n_tokens else math.nan,
            n_tokens=scores.n_tokens,
            tokens=list(scores.tokens),
            logprobs=list(scores.logprobs),
            token_offsets=list(scores.offsets),
        )
        if options.word_surprisal and scores.offsets:
            result = _with_words(result, item, scores, options.word_probability)
        rows.append(TaskRow.of(result))
    return rows


def _with_words(
    result: SequenceResult, item: Item, scores: TokenScores, probability: WordProbability
) -> SequenceResult:
    """The word table of a sequence row: one list per column, one entry per word (or region)."""
    words = word_scores(item.context, scores, _word_spans(item), probability)
    surprisals = [word.surprisal for word in words]
    return dataclasses.replace(
        result,
        words=[word.word for word in words],
        word_surprisals=surprisals,
        word_surprisals_naive=[word.naive for word in words],
        word_methods=[word.method for word in words],
        word_spillover_1=spillover(surprisals, 1),
        word_spillover_2=spillover(surprisals, 2),
        word_n_tokens=[word.n_tokens for word in words],
        word_probability=probability,
        word_start_token=scores.start_token,
    )


def _word_spans(item: Item) -> list[tuple[int, int]] | None:
    """The item's words as its paradigm cuts them (``None``: whitespace-separated words)."""
    from tracktale.stimuli.registry import get_paradigm

    return get_paradigm(item.paradigm).word_spans(item)


def _explicit_settings(options: TaskOptions) -> dict[str, Any]:
    # Rows written before sampling and reruns existed hold none of these (greedy, once).
    return {
        "prompt_format_requested": options.prompt_format,
        "temperature": options.temperature,
        "num_samples": options.num_samples,
        "rerun_truncated": options.rerun_truncated,
    }


def _implicit_done(rows: Any, options: TaskOptions) -> Any:
    """A calibrated run scores again the rows stored without calibration."""
    return rows[rows["calibrated"].fillna(False).astype(bool)] if options.calibrate else rows


def _prompt_text(item: Item) -> str:
    return item.prompt or "".join(m["content"] for m in item.messages or ())


register_task(
    Task(
        name="implicit",
        applies=lambda item: item.choice is not None and item.choice.question is None,
        run=_implicit,
        result=ImplicitResult,
        uses=frozenset({"conditional_score"}),
        text_key=lambda item: item.choice.prefix if item.choice is not None else "",
        done=_implicit_done,
    )
)
register_task(
    Task(
        name="explicit",
        applies=lambda item: item.prompt is not None or bool(item.messages),
        run=explicit_rows,
        result=ExplicitResult,
        uses=frozenset({"generate"}),
        text_key=_prompt_text,
        settings=_explicit_settings,
    )
)
register_task(
    Task(
        name="sequence",
        applies=lambda item: bool(item.context),
        run=_sequence,
        result=SequenceResult,
        uses=frozenset({"sequence_score"}),
        text_key=lambda item: item.context,
        # Rows written before the choice existed hold none (naive) and are not refused.
        settings=lambda options: (
            {"word_probability": options.word_probability} if options.word_surprisal else {}
        ),
    )
)
