"""The backend registry: name -> scorer class, imported only when asked for.

A backend is a :class:`~tracktale.scorer.Scorer` subclass whose constructor takes the model id
and the keyword options ``revision``, ``dtype``, ``device``, ``batch_size``, ``bos`` and
``notify`` (see :class:`tracktale.models.hf.HFScorer`).
"""

from __future__ import annotations

import importlib
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.scorer import Scorer

_BACKENDS = {
    "hf": "tracktale.models.hf:HFScorer",
}


def backend_names() -> tuple[str, ...]:
    """The registered backends, the default first."""
    return tuple(_BACKENDS)


def _backend_class(backend: str) -> type[Scorer]:
    if backend not in _BACKENDS:
        raise TracktaleError(f"unknown backend {backend!r} (choose from {', '.join(_BACKENDS)})")
    module_name, _, attribute = _BACKENDS[backend].partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def check_model(model_id: str, revision: str | None, *, backend: str = "hf") -> None:
    """Check that a model and revision can be found, without loading it.

    A sweep checks every revision before it spends hours on the first. Backends without a
    ``check`` method pass.

    Raises:
        TracktaleError: For an unknown backend, model or revision.
    """
    check = getattr(_backend_class(backend), "check", None)
    if check is not None:
        check(model_id, revision)


def load_scorer(model_id: str, *, backend: str = "hf", **options: Any) -> Scorer:
    """Load a model as a scorer.

    Args:
        model_id: Hub id or local folder.
        backend: A name from :func:`backend_names`.
        **options: The backend's options (``revision``, ``dtype``, ``device``, ...).

    Returns:
        The scorer, ready for requests.

    Raises:
        TracktaleError: For an unknown backend, or whatever the backend cannot load.
    """
    return _backend_class(backend)(model_id, **options)
