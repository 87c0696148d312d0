"""``models score``'s ``--backend`` and ``--task`` take what is registered when the command runs.

Both options were ``click.Choice`` lists frozen when the command was declared, so a backend or
task registered later (a lab's plug-in in its own process) was refused although the registries
had it. The commands are built first (``--help``), then the registration is made.
"""

from __future__ import annotations

import dataclasses

import pytest

from tests.toyparadigm.test_toy_cli import run
from tracktale.models import registry
from tracktale.models.tasks import TASK_REGISTRY, get_task


@pytest.fixture
def built(capsys):
    """``models score`` built (its help printed) before any late registration."""
    code, out, _ = run(capsys, "models", "score", "--help")
    assert code == 0 and "late-backend" not in out and "late-task" not in out


@pytest.fixture
def late_backend(built):
    """A backend registered after the command line was built (the hf scorer under a new name)."""
    registry.register_backend(dataclasses.replace(registry.BACKENDS.get("hf"), name="late-backend"))
    yield "late-backend"
    registry.BACKENDS.remove("late-backend")


@pytest.fixture
def late_task(built):
    """A task registered after the command line was built (the sequence task under a new name)."""
    TASK_REGISTRY.add("late-task", dataclasses.replace(get_task("sequence"), name="late-task"))
    yield "late-task"
    TASK_REGISTRY.remove("late-task")


def test_a_backend_registered_after_the_command_was_built_is_offered(late_backend, capsys):
    code, out, _ = run(capsys, "models", "score", "--help")
    assert code == 0 and late_backend in out
    code, _, err = run(capsys, "models", "score", "--backend", "no-such-backend")
    assert code == 2 and err.count("\n") == 1
    assert f"'{late_backend}'" in err and "'no-such-backend' is not one of" in err


def test_a_task_registered_after_the_command_was_built_is_offered(late_task, capsys):
    code, out, _ = run(capsys, "models", "score", "--help")
    assert code == 0 and late_task in out
    code, _, err = run(capsys, "models", "score", "--task", "no-such-task")
    assert code == 2 and err.count("\n") == 1 and f"'{late_task}'" in err


def test_once_removed_a_late_name_is_refused(capsys):
    code, _, err = run(capsys, "models", "score", "--backend", "late-backend")
    assert code == 2 and "'late-backend' is not one of" in err
    code, _, err = run(capsys, "models", "score", "--task", "late-task")
    assert code == 2 and "'late-task' is not one of" in err
