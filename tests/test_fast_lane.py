"""The fast lane: which tests tests/conftest.py marks ``fast``, and what scripts/test.sh runs."""

from __future__ import annotations

import tomllib
from types import SimpleNamespace

import pytest

from tests.conftest import HEAVY_FIXTURES, HEAVY_MARKERS, HEAVY_PARAMS, REPO_ROOT, heavy_markers


class _Item:
    """What :func:`heavy_markers` reads of a collected test."""

    def __init__(self, markers=(), fixtures=(), params=None):
        self.markers = set(markers)
        self.fixturenames = list(fixtures)
        if params is not None:
            self.callspec = SimpleNamespace(params=params)

    def get_closest_marker(self, name):
        return SimpleNamespace(name=name) if name in self.markers else None


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (_Item(fixtures=["tmp_path", "human_set"]), set()),
        (_Item(markers=["slow"]), {"slow"}),
        (_Item(markers=["parametrize"]), set()),
        (_Item(fixtures=["app", "browser"]), {"browser"}),
        (_Item(fixtures=["trials", "lme4"]), {"r"}),
        (_Item(fixtures=["scorer", "converted_default_model"]), {"real_model"}),
        (_Item(fixtures=["virtual_screen"], markers=["slow"]), {"display", "slow"}),
        (_Item(params={"backend": "postgresql"}), {"postgres"}),
        (_Item(params={"backend": "sqlite", "n": 3}), set()),
        (_Item(markers=["engine", "slurm"]), {"engine", "slurm"}),
    ],
)
def test_heavy_markers_come_from_markers_fixtures_and_parameters(item, expected):
    assert heavy_markers(item) == expected


def test_this_test_was_marked_fast_at_collection(request):
    assert request.node.get_closest_marker("fast") is not None
    assert not heavy_markers(request.node)


def test_every_marker_of_the_fast_lane_is_registered():
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    registered = {line.split(":")[0] for line in config["tool"]["pytest"]["ini_options"]["markers"]}
    implied = set(HEAVY_FIXTURES.values()) | set(HEAVY_PARAMS.values())
    assert {"fast", *HEAVY_MARKERS} <= registered
    assert implied <= set(HEAVY_MARKERS)


def test_the_fast_lane_runs_ruff_and_the_fast_tests_and_the_full_run_lists_the_slowest():
    script = (REPO_ROOT / "scripts" / "test.sh").read_text()
    fast, full = script.split('if [ "${1:-}" = --fast ]; then', 1)[1].split("\nfi\n", 1)
    assert "ruff check ." in fast and "python -m pytest -m fast" in fast
    for heavy in ("install_default_model", "install_completions_engine", "install_frontend"):
        assert heavy not in fast and heavy in full
    assert "python -m pytest --durations=25" in full
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert "exec bash scripts/test.sh\n" in ci  # CI runs the full lane


def test_a_small_report_writes_png_figures_and_fewer_resamples_then_restores_the_defaults(
    tmp_path,
):
    from tests.conftest import SMALL_RESAMPLES, small_report
    from tracktale.analysis.report.style import new_figure, save_figure, styled
    from tracktale.analysis.stats import proportions

    with small_report(), styled():
        small = save_figure(new_figure(1), tmp_path / "small", "curve", "A curve")
        assert proportions.BOOTSTRAP_RESAMPLES == SMALL_RESAMPLES
    assert sorted(p.name for p in (tmp_path / "small").iterdir()) == ["curve.png"]
    assert list(small.paths) == ["png"]
    with styled():
        full = save_figure(new_figure(1), tmp_path / "full", "curve", "A curve")
    assert list(full.paths) == ["png", "pdf", "svg"]
    assert proportions.BOOTSTRAP_RESAMPLES == 9999
