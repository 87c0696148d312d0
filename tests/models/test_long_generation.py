"""Long generations show their progress, are stored batch by batch, and fit the paradigm.

Issue 31, item 11: scoring the arithmetic set's 12 items with the explicit task printed
nothing for 12 minutes and stored nothing before it was killed. The bar stood at 0/12 (it
moved per batch, and one batch generated for minutes), the run wrote its rows once per chunk
of 128 items, and every procedure, 5 steps or 95, got 4,096 tokens.
"""

from __future__ import annotations

import pytest

from tests.conftest import _generated
from tracktale.models import store
from tracktale.models.runner import Reporter, ScoringJob, run_scoring
from tracktale.models.tasks import TaskOptions
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import write_stimulus_set


@pytest.fixture(scope="module")
def arithmetic_dir(tmp_path_factory):
    stimulus_set = _generated(
        "arithmetic", "pilot", 1,
        (("datasets", ("int_1-10_add_lb1",)), ("horizons", (5,)), ("per_horizon", 3)),
    )  # fmt: skip
    return write_stimulus_set(stimulus_set, tmp_path_factory.mktemp("arith") / "set")


class Killed(Exception):
    """Stands in for the user's Ctrl-C."""


class Recorder(Reporter):
    def __init__(self, kill_in_second_batch: bool = False):
        self.events: list[tuple[str, float]] = []
        self.written = 0
        self.kill = kill_in_second_batch

    def partial(self, count):
        self.events.append(("partial", count))
        if self.kill and self.written:
            raise Killed

    def advance(self, count):
        self.events.append(("advance", count))
        self.written += count


def _job(arithmetic_dir, model_dirs, out, **options):
    return ScoringJob(
        arithmetic_dir,
        str(model_dirs["pythia"]),
        out,
        tasks=("explicit",),
        options=TaskOptions(prompt_format="plain", **options),
        batch_size=1,
        device="cpu",
    )


def test_the_bar_moves_within_a_batch_of_long_generations(arithmetic_dir, model_dirs, tmp_path):
    recorder = Recorder()
    run_scoring(_job(arithmetic_dir, model_dirs, tmp_path / "r", max_new_tokens=100), recorder)
    before_first_write = []
    for kind, count in recorder.events:
        if kind == "advance":
            break
        before_first_write.append(count)
    # The 100-token generation reported its blocks of 32 tokens before the batch ended.
    assert len(before_first_write) >= 2, recorder.events
    assert 0 < before_first_write[0] < 1 and before_first_write == sorted(before_first_write)


def test_each_batch_is_stored_when_it_ends_and_a_rerun_resumes(
    arithmetic_dir, model_dirs, tmp_path
):
    out = tmp_path / "results"
    job = _job(arithmetic_dir, model_dirs, out, max_new_tokens=40)
    with pytest.raises(Killed):
        run_scoring(job, Recorder(kill_in_second_batch=True))
    assert len(store.read_results(out)) == 1  # the first batch, written before the kill
    summary = run_scoring(job, Recorder())
    assert summary.already[("", "explicit")] == 1
    assert summary.scored[("", "explicit")] == 2
    assert len(store.read_results(out)) == 3


def test_an_arithmetic_item_gets_the_budget_its_trace_needs(arithmetic_dir, model_dirs, tmp_path):
    paradigm = get_paradigm("arithmetic")
    long = _generated(
        "arithmetic", "pilot", 1,
        (("datasets", ("int_1-10_add_lb1",)), ("horizons", (5, 95)), ("per_horizon", 1)),
    )  # fmt: skip
    budgets = {item.condition["horizon"]: paradigm.item_budget(item) for item in long}
    assert budgets == {5: 128 + 40 * 5, 95: 128 + 40 * 95}
    # The explicit task asks for it (and records it), unless the run sets its own.
    run_scoring(_job(arithmetic_dir, model_dirs, tmp_path / "r"), Recorder())
    rows = store.read_results(tmp_path / "r")
    assert set(rows["max_new_tokens"]) == {328}
