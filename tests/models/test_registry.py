"""The backend registry: its static list of each backend's options matches the constructors."""

from __future__ import annotations

import inspect

import pytest

from tracktale.models import registry

COMMON = {"model_id", "revision", "dtype", "device", "batch_size", "bos", "notify"}


@pytest.mark.parametrize("backend", registry.backend_names())
def test_declared_options_are_the_constructor_keywords(backend):
    parameters = set(inspect.signature(registry._backend_class(backend).__init__).parameters)
    assert parameters - {"self"} == COMMON | set(registry.BACKEND_OPTIONS[backend])


def test_hf_is_the_default_and_answers_every_task():
    assert registry.backend_names()[0] == "hf"
    assert registry.backend_tasks("hf") == ("implicit", "explicit", "sequence")
    assert registry.backend_tasks("openai") == ("explicit",)
    assert registry.recorded_dtype("hf", "bfloat16") == "bfloat16"
    assert registry.recorded_dtype("openai", "bfloat16") == "server"
