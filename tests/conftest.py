"""Fixtures shared by every stage's tests, and the fast lane's selection.

Every test that needs none of the heavy things below is marked ``fast`` at collection, so
``pytest -m fast`` (what ``bash scripts/test.sh --fast`` runs) needs no browser, model
weights, completions engine, R, PostgreSQL, SLURM or virtual screen. A test is heavy when it
carries one of the markers of :data:`HEAVY_MARKERS` (``slow`` included), or when it uses,
directly or through another fixture, a fixture of :data:`HEAVY_FIXTURES`, or a fixture
parametrized with a value of :data:`HEAVY_PARAMS`. Nobody marks a test ``fast`` by hand:
a new test that uses the ``browser`` fixture leaves the fast lane by itself.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"

HEAVY_MARKERS = ("slow", "browser", "real_model", "engine", "r", "postgres", "slurm", "display")
"""Markers that keep a test out of the fast lane (registered in pyproject.toml)."""
HEAVY_FIXTURES = {
    "browser": "browser",  # Chromium through Playwright (tests/experiment/test_browser.py)
    "converted_default_model": "real_model",  # the default model's weights (tests/models)
    "lme4": "r",  # R with lme4 (below)
    "brms": "r",  # R with brms (below)
    "virtual_screen": "display",  # PsychoPy on Xvfb (tests/experiment/lab/test_window.py)
}
"""Fixture name -> the marker a test that uses it gets."""
HEAVY_PARAMS = {"postgresql": "postgres"}
"""Fixture parameter -> the marker (``open_storage``'s backends: sqlite stays fast)."""


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


@pytest.fixture
def lme4() -> None:
    """R with lme4: skips the test without it (fails it under ``scripts/test.sh``).

    A test that asks for this fixture is marked ``r`` and so leaves the fast lane.
    """
    from tracktale.analysis.stats.lme4 import lme4_available

    require(lme4_available(), "R with lme4 is not installed (Debian: r-base-core r-cran-lme4)")


@pytest.fixture
def brms() -> None:
    """R with brms: skips the test without it (fails it under ``scripts/test.sh``)."""
    from tracktale.analysis.stats.bayes import brms_available

    require(brms_available(), "R with brms is not installed (Debian: r-cran-brms)")


def heavy_markers(item: pytest.Item) -> set[str]:
    """The heavy markers a collected test carries, its own and those its fixtures imply."""
    found = {name for name in HEAVY_MARKERS if item.get_closest_marker(name) is not None}
    for fixture in getattr(item, "fixturenames", ()):
        if fixture in HEAVY_FIXTURES:
            found.add(HEAVY_FIXTURES[fixture])
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        for value in callspec.params.values():
            if isinstance(value, str) and value in HEAVY_PARAMS:
                found.add(HEAVY_PARAMS[value])
    return found


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # tryfirst: the markers must be on the items before ``-m`` deselects by them.
    for item in items:
        implied = heavy_markers(item)
        for name in implied:
            if item.get_closest_marker(name) is None:
                item.add_marker(name)
        if not implied:
            item.add_marker("fast")


SMALL_RESAMPLES = 199
"""Participant-bootstrap resamples of a small report (the default: 9,999)."""
SMALL_PERMUTATIONS = "99"
"""``--permutations`` of a small report (the default: 9,999)."""


@contextlib.contextmanager
def small_report() -> Iterator[None]:
    """Reports built inside write PNG figures only and resample participants 199 times.

    A report with the defaults (every figure as PNG, PDF and SVG, 9,999 BCa resamples per
    interval, 9,999 permutations) takes a minute or more on two cores, most of it in writing
    PDF and SVG files; a test about what the page says needs none of that. Pass
    ``--permutations`` :data:`SMALL_PERMUTATIONS` (or ``ReportOptions(permutations=99)``) as
    well. The defaults themselves are tested where they matter: the three formats in
    tests/analysis/test_figures.py and test_report.py's section test, the bootstrap in
    test_stats_and_catalog.py, the permutation tests in test_permutation.py.
    """
    from tracktale.analysis.report import style
    from tracktale.analysis.stats import proportions

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(style, "FORMATS", ("png",))
        patch.setattr(proportions, "BOOTSTRAP_RESAMPLES", SMALL_RESAMPLES)
        yield


@pytest.fixture
def small_reports() -> Iterator[None]:
    """:func:`small_report` for the whole test."""
    with small_report():
        yield
