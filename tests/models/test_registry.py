"""The backend registry: its static list of each backend's options matches the constructors."""

from __future__ import annotations

import inspect

import pytest

from tracktale.models import registry
from tracktale.scorer import Scorer

COMMON = {"model_id", "revision", "dtype", "device", "batch_size", "bos", "notify"}


@pytest.mark.parametrize("backend", registry.backend_names())
def test_declared_options_are_the_constructor_keywords(backend):
    parameters = set(inspect.signature(registry._backend_class(backend).__init__).parameters)
    assert parameters - {"self"} == COMMON | set(registry.BACKEND_OPTIONS[backend])


def test_the_scorer_abc_declares_the_common_constructor():
    parameters = inspect.signature(Scorer.__init__).parameters
    named = {name for name, p in parameters.items() if p.kind is not p.VAR_KEYWORD}
    assert named - {"self"} == COMMON
    assert getattr(Scorer.__init__, "__isabstractmethod__", False)


@pytest.mark.parametrize("backend", registry.backend_names())
def test_every_backend_keeps_the_common_constructor(backend):
    contract = inspect.signature(Scorer.__init__).parameters
    parameters = inspect.signature(registry._backend_class(backend).__init__).parameters
    for name in COMMON:
        assert parameters[name].kind is contract[name].kind, (backend, name)
    for name in COMMON - {"batch_size"}:  # a backend picks its own batch size
        assert parameters[name].default == contract[name].default, (backend, name)


def test_hf_is_the_default_and_answers_every_task():
    assert registry.backend_names()[0] == "hf"
    assert registry.backend_tasks("hf") == ("implicit", "explicit", "sequence")
    assert registry.backend_tasks("openai") == ("explicit",)
    assert registry.recorded_dtype("hf", "bfloat16") == "bfloat16"
    assert registry.recorded_dtype("openai", "bfloat16") == "server"
