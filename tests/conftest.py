"""Fixtures shared by every stage's tests."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"


def require(available: bool, reason: str) -> None:
    """Skip the calling test when a service or tool is missing; fail instead under CI.

    ``scripts/test.sh`` sets ``TRACKTALE_REQUIRE_SERVICES=1`` after installing and starting
    everything, so there a missing service is a broken set-up, not a reason to skip.

    Args:
        available: Whether the service or tool is there.
        reason: What is missing, for the skip or failure message.
    """
    if available:
        return
    if os.environ.get("TRACKTALE_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{reason} (scripts/test.sh should have provided it)")
    pytest.skip(reason)


@functools.cache
def _generated(paradigm: str, protocol: str, seed: int, overrides: tuple = ()):
    from tracktale.stimuli.registry import get_paradigm

    return get_paradigm(paradigm).generate_set(protocol, seed, dict(overrides))


@pytest.fixture(scope="session")
def human_set():
    """The default human-protocol narrative set (seed 1)."""
    return _generated("narrative", "human", 1)


@pytest.fixture(scope="session")
def model_set():
    """The full model-protocol narrative set: 550 items for each of the three templates."""
    return _generated("narrative", "model", 1)


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path, monkeypatch):
    # No test writes into the developer's ./tracktale-data.
    monkeypatch.setenv("TRACKTALE_DATA", str(tmp_path / "tracktale-data"))
