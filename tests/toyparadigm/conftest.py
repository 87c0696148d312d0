"""The toy paradigm's one registration, as a fixture (so it lasts one test)."""

from __future__ import annotations

import pytest

from tests.toyparadigm.plugin import PLUGIN
from tracktale.stimuli.registry import PLUGINS


@pytest.fixture
def toy():
    """The toy paradigm registered for one test: the one line a new paradigm adds."""
    PLUGINS.add("toy", PLUGIN, lazy=False)
    yield PLUGIN
    PLUGINS.remove("toy")


@pytest.fixture
def toy_set(toy, tmp_path):
    """Stage 1: the toy's items, written by the shared writer (content-hashed); the folder."""
    from tracktale.stimuli.registry import get_paradigm
    from tracktale.stimulus_set import write_stimulus_set

    folder = tmp_path / "toy-human"
    write_stimulus_set(get_paradigm("toy").generate_set("human", seed=3), folder)
    return folder
