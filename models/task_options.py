"""How the model tasks are run, and what one item's row holds: shared by every task module.

Kept apart from the task registry (:mod:`tracktale.models.tasks`) so that the task modules
(:mod:`tracktale.models.explicit`) and the registry that lists them do not import each other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracktale.errors import TracktaleError
from tracktale.models.sampling import check_sampling
from tracktale.models.tokens import PROMPT_FORMATS
from tracktale.models.word_boundaries import WORD_PROBABILITIES, WordProbability

if TYPE_CHECKING:
    from tracktale.schema.results import TaskResult


@dataclass(frozen=True)
class TaskOptions:
    """How the tasks are run; every setting that changes a score is recorded in the row.

    Attributes:
        calibrate: Also score the implicit continuations after the neutral prefix.
        prompt_format: ``auto`` (chat template when the tokenizer has one), ``plain``, ``chat``.
        max_new_tokens: Generation budget; ``None``: the paradigm's default.
        word_surprisal: Add per-word surprisal to sequence rows.
        word_probability: ``corrected`` (with the end-of-word factor, after the document
            start; the default) or ``naive`` (summed tokens, the earlier values), see
            :mod:`tracktale.models.surprisal`. The naive sums are stored either way.
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
    word_probability: WordProbability = "corrected"
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
        if self.word_probability not in WORD_PROBABILITIES:
            raise TracktaleError(
                f"--word-probability: {self.word_probability!r} is not one of "
                f"{', '.join(WORD_PROBABILITIES)}"
            )
        if self.prompt_format not in PROMPT_FORMATS:
            raise TracktaleError(
                f"--prompt-format: {self.prompt_format!r} is not one of {', '.join(PROMPT_FORMATS)}"
            )
        if self.max_new_tokens is not None and self.max_new_tokens < 1:
            raise TracktaleError(f"--max-new-tokens must be at least 1, got {self.max_new_tokens}")


@dataclass(frozen=True)
class TaskRow:
    """One item's scores as a task wrote them.

    Attributes:
        scores: The row's task fields.
        extra: Names in ``scores`` that the task's result model does not declare but that the
            row may hold (the paradigm's judgement keys, the backend's generation details).
    """

    scores: dict[str, Any]
    extra: frozenset[str] = frozenset()

    @classmethod
    def of(cls, result: TaskResult, extra: Mapping[str, Any] | None = None) -> TaskRow:
        """The row of a result record the task built (so the type checker sees a wrong key).

        Args:
            result: The task's record (``ImplicitResult``, ``ExplicitResult``, ...).
            extra: Columns the record does not declare (a paradigm's judgement, a backend's
                details), added beside its fields.

        An optional field left at its ``None`` default is left out, as the tasks wrote their
        rows before they built records (a sequence row without word surprisal has no ``words``).
        """
        scores = {
            f.name: getattr(result, f.name)
            for f in dataclasses.fields(result)
            if not (f.default is None and getattr(result, f.name) is None)
        }
        added = dict(extra or {})
        return cls({**added, **scores}, frozenset(added))
