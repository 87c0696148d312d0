"""The backend registry: name -> scorer class, imported only when asked for.

A backend is a :class:`~tracktale.scorer.Scorer` subclass whose constructor takes the model id
and the keyword options ``revision``, ``dtype``, ``device``, ``batch_size``, ``bos`` and
``notify`` (see :class:`tracktale.models.hf.HFScorer`), plus its own options, listed in
:data:`BACKEND_OPTIONS` so that plans and command lines are checked without importing the
backend (and torch), with the tasks it answers and, for an API that decides its own precision,
the dtype its rows record whatever is asked.
"""

from __future__ import annotations

import inspect
import pkgutil
from collections.abc import Mapping
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.models.tasks import SCORER_METHODS, TASK_REGISTRY
from tracktale.scorer import GenerationDetails, Scorer

_BACKENDS = {
    "hf": "tracktale.models.hf:HFScorer",
    "openai": "tracktale.models.openai:OpenAIScorer",
    "completions": "tracktale.models.completions:CompletionsScorer",
}

BACKEND_OPTIONS: dict[str, tuple[str, ...]] = {
    "hf": ("max_memory", "offload_folder", "gguf_file"),
    "openai": (
        "base_url",
        "api_key_env",
        "concurrency",
        "request_timeout",
        "max_retries",
        "cache_dir",
        "logprobs",
        "top_logprobs",
        "max_tokens_field",
        "seed",
    ),
    "completions": (
        "base_url",
        "api_key_env",
        "concurrency",
        "request_timeout",
        "max_retries",
        "cache_dir",
        "prompts_per_request",
    ),
}
"""Backend name -> the options of its own (beyond the common ones), as constructor keywords."""

_BACKEND_METHODS = {"hf": SCORER_METHODS, "openai": ("generate",), "completions": SCORER_METHODS}
"""The scorer methods each backend answers; it answers the tasks that use only those."""
_RECORDED_DTYPE = {"openai": "server", "completions": "server"}
_GENERATION_DETAILS = {
    "openai": "tracktale.models.endpoint:ChatGenerationDetails",
    "completions": "tracktale.models.endpoint:EndpointGenerationDetails",
}
"""Backend name -> its scorer's ``generation_details`` record, where it declares one (else
none), so that the store types their columns without importing the backend (a test checks)."""


def generation_details(backend: str) -> type[GenerationDetails]:
    """The record of what ``backend`` reports about each generation, without importing it."""
    _known(backend)
    path = _GENERATION_DETAILS.get(backend)
    return GenerationDetails if path is None else pkgutil.resolve_name(path)


def backend_names() -> tuple[str, ...]:
    """The registered backends, the default first."""
    return tuple(_BACKENDS)


def _known(backend: str) -> None:
    if backend not in _BACKENDS:
        raise TracktaleError(f"unknown backend {backend!r} (choose from {', '.join(_BACKENDS)})")


def _backend_class(backend: str) -> type[Scorer]:
    _known(backend)
    return pkgutil.resolve_name(_BACKENDS[backend])


def backend_tasks(backend: str) -> tuple[str, ...]:
    """The registered tasks a backend can answer (a chat endpoint cannot score given text)."""
    _known(backend)
    methods = set(_BACKEND_METHODS[backend])
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
        if name not in BACKEND_OPTIONS[backend]:
            owners = [other for other, names in BACKEND_OPTIONS.items() if name in names]
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
    _known(backend)
    return _RECORDED_DTYPE.get(backend, dtype)


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
