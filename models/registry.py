"""The backend registry: name -> scorer class, imported only when asked for.

A backend is a :class:`~tracktale.scorer.Scorer` subclass whose constructor takes the model id
and the keyword options ``revision``, ``dtype``, ``device``, ``batch_size``, ``bos`` and
``notify`` (see :class:`tracktale.models.hf.HFScorer`), plus its own options, listed in
:attr:`Backend.options` so that plans and command lines are checked without importing the
backend (and torch), with the tasks it answers and, for an API that decides its own precision,
the dtype its rows record whatever is asked: one :class:`Backend` declaration per backend, in
:data:`BACKENDS`.
"""

from __future__ import annotations

import inspect
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.models.tasks import SCORER_METHODS, TASK_REGISTRY
from tracktale.registry import Registry
from tracktale.scorer import GenerationDetails, Scorer


@dataclass(frozen=True)
class Backend:
    """One backend's declaration: everything the stages check without importing it.

    Attributes:
        name: The name on the command line and in plans.
        scorer: ``module:Class`` of its :class:`~tracktale.scorer.Scorer` (imported on load).
        options: Its own options (beyond the common ones), as constructor keywords.
        methods: The scorer methods it answers; it answers the tasks that use only those.
        recorded_dtype: The dtype its rows record whatever is asked (an API that decides its
            own precision), else ``None`` (the one asked for).
        generation_details: ``module:Record`` of its scorer's ``generation_details`` record,
            where it declares one, so that the store types their columns without importing
            the backend (a test checks).
    """

    name: str
    scorer: str
    options: tuple[str, ...] = ()
    methods: tuple[str, ...] = SCORER_METHODS
    recorded_dtype: str | None = None
    generation_details: str | None = None


BACKENDS: Registry[Backend] = Registry("backend")
"""Backend name -> its declaration, the default first."""


def register_backend(backend: Backend) -> Backend:
    """Add a backend's declaration to :data:`BACKENDS` (or replace the one of that name)."""
    BACKENDS.add(backend.name, backend, lazy=False)
    return backend


_ENDPOINT_OPTIONS = ("base_url", "api_key_env", "concurrency", "request_timeout", "max_retries")
register_backend(
    Backend("hf", "tracktale.models.hf:HFScorer", ("max_memory", "offload_folder", "gguf_file"))
)
register_backend(
    Backend(
        "openai",
        "tracktale.models.openai:OpenAIScorer",
        options=(
            *_ENDPOINT_OPTIONS,
            "cache_dir",
            "logprobs",
            "top_logprobs",
            "max_tokens_field",
            "seed",
        ),
        methods=("generate",),
        recorded_dtype="server",
        generation_details="tracktale.models.endpoint:ChatGenerationDetails",
    )
)
register_backend(
    Backend(
        "completions",
        "tracktale.models.completions:CompletionsScorer",
        options=(*_ENDPOINT_OPTIONS, "cache_dir", "prompts_per_request"),
        recorded_dtype="server",
        generation_details="tracktale.models.endpoint:EndpointGenerationDetails",
    )
)

BACKEND_OPTIONS: dict[str, tuple[str, ...]] = {
    name: backend.options for name, backend in BACKENDS.items()
}
"""Backend name -> the options of its own (beyond the common ones), as constructor keywords."""


def generation_details(backend: str) -> type[GenerationDetails]:
    """The record of what ``backend`` reports about each generation, without importing it."""
    path = BACKENDS.get(backend).generation_details
    return GenerationDetails if path is None else pkgutil.resolve_name(path)


def backend_names() -> tuple[str, ...]:
    """The registered backends, the default first."""
    return BACKENDS.names()


def _backend_class(backend: str) -> type[Scorer]:
    return pkgutil.resolve_name(BACKENDS.get(backend).scorer)


def backend_tasks(backend: str) -> tuple[str, ...]:
    """The registered tasks a backend can answer (a chat endpoint cannot score given text)."""
    methods = set(BACKENDS.get(backend).methods)
    return tuple(name for name, task in TASK_REGISTRY.items() if task.uses <= methods)


def check_backend(backend: str, tasks: Any, options: dict[str, Any]) -> None:
    """Check, without importing it, that a backend answers ``tasks`` and takes ``options``.

    Raises:
        TracktaleError: Naming the backend and the task or option it does not take.
    """
    answered = backend_tasks(backend)
    for task in tasks:
        if task not in answered:
            raise TracktaleError(_no_task_message(backend, task))
    for name in options:
        if name not in BACKENDS.get(backend).options:
            owners = [other.name for other in BACKENDS.values() if name in other.options]
            where = f" (an option of the {owners[0]} backend)" if owners else ""
            raise TracktaleError(
                f"--{name.replace('_', '-')}: not an option of the {backend} backend{where}"
            )


def _no_task_message(backend: str, task: str) -> str:
    if backend == "openai":
        return (
            f"--task {task}: the openai backend answers the explicit task only; a chat endpoint "
            "generates text but cannot score given continuations or texts (use --task explicit, "
            "or the hf or completions backend for log-probabilities)"
        )
    return f"--task {task}: the {backend} backend does not answer the {task} task"


def recorded_dtype(backend: str, dtype: str) -> str:
    """The dtype a backend's rows record when ``dtype`` is asked for."""
    return BACKENDS.get(backend).recorded_dtype or dtype


def check_model(
    model_id: str,
    revision: str | None,
    *,
    backend: str = "hf",
    options: Mapping[str, Any] | None = None,
) -> None:
    """Check that a model and revision can be found, without loading it.

    A sweep checks every revision before it spends hours on the first. Backends without a
    ``check`` method pass.

    Args:
        model_id: As for :func:`load_scorer`.
        revision: The revision (``None``: the default branch).
        backend: A name from :func:`backend_names`.
        options: The backend's own options; those its ``check`` takes (``gguf_file``) are passed.

    Raises:
        TracktaleError: For an unknown backend, model or revision.
    """
    check = getattr(_backend_class(backend), "check", None)
    if check is not None:
        takes = inspect.signature(check).parameters
        check(model_id, revision, **{k: v for k, v in (options or {}).items() if k in takes})


def load_scorer(model_id: str, *, backend: str = "hf", **options: Any) -> Scorer:
    """Load a model as a scorer.

    Args:
        model_id: Hub id or local folder (or, for ``openai`` and ``completions``, the
            endpoint's model name).
        backend: A name from :func:`backend_names`.
        **options: The backend's options (``revision``, ``dtype``, ``device``, ...).

    Returns:
        The scorer, ready for requests.

    Raises:
        TracktaleError: For an unknown backend, or whatever the backend cannot load.
    """
    return _backend_class(backend)(model_id, **options)
