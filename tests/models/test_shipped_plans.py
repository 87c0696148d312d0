"""The shipped plans for the papers' models: written by the CLI, checked whole, ids on a hub."""

from __future__ import annotations

import pytest

from tests.app.test_cli import run
from tracktale.analysis.arithmetic.paper_models import PAPER_MODELS
from tracktale.errors import TracktaleError
from tracktale.models import sweep
from tracktale.models.plan import load_plan
from tracktale.models.plans import PLANS
from tracktale.models.testing import add_to_hub_cache
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import write_stimulus_set

TINY = {
    "arithmetic": ("pilot", {"datasets": ["int_1-10_add_lb1"], "horizons": [5], "per_horizon": 1}),
    "boxes": ("smoke", {}),
}


def _write(name, tmp_path, capsys):
    path = tmp_path / f"{name}.yaml"
    status, _, err = run(["models", "plan", name, "--out", str(path)], capsys)
    assert status == 0 and "paths in it are relative to" in err
    return path


def _make_sets(path, plan_text):
    """Tiny stimulus sets where the plan expects its sets (the plan is checked, not run)."""
    import yaml

    for folder in yaml.safe_load(plan_text)["stimuli"]:
        paradigm = "arithmetic" if "arith" in folder else "boxes"
        protocol, overrides = TINY[paradigm]
        stimulus_set = get_paradigm(paradigm).generate_set(protocol, 1, overrides)
        write_stimulus_set(stimulus_set, path.parent / folder)


def test_the_plans_are_listed_and_an_unknown_one_is_one_line(capsys):
    status, out, _ = run(["models", "plan"], capsys)
    assert status == 0 and all(f"{name}: " in out for name in PLANS)
    status, _, err = run(["models", "plan", "table9"], capsys)
    assert status == 1 and "no shipped plan 'table9'" in err


def test_the_arithmetic_plan_is_table_1_and_its_models_exist(
    tmp_path, capsys, model_dirs, monkeypatch
):
    from huggingface_hub import constants

    path = _write("arithmetic-table1", tmp_path, capsys)
    _make_sets(path, path.read_text())
    plan = load_plan(path)
    assert [job.model_id for job in plan.jobs] == [model.hub_id for model in PAPER_MODELS]
    assert plan.executor == "slurm" and all(job.tasks == ("explicit",) for job in plan.jobs)
    for job in plan.jobs:
        assert job.scoring["max_new_tokens"] == 32768 and job.scoring["rerun_truncated"]
        assert job.scoring["temperature"] == 0
        if job.scoring.get("backend") == "openai":
            assert job.scoring["rerun_max_new_tokens"] > 100_000
    # A hub that holds exactly these ids (tiny models under their names): each is checked there.
    cache = tmp_path / "hub"
    for job in plan.jobs:
        if job.scoring.get("backend", "hf") == "hf":
            add_to_hub_cache(cache, job.model_id, {"main": model_dirs["pythia"]})
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    sweep._check_models(plan.jobs)
    broken = plan.jobs[0].__class__(**{**plan.jobs[0].__dict__, "model_id": "deepseek-ai/typo"})
    with pytest.raises(TracktaleError, match="typo"):
        sweep._check_models([broken])


@pytest.mark.parametrize("name", ["boxes-chatgpt", "boxes-chatgpt-greedy"])
def test_the_boxes_plans_run_the_papers_models_through_the_openai_backend(name, tmp_path, capsys):
    path = _write(name, tmp_path, capsys)
    _make_sets(path, path.read_text())
    plan = load_plan(path)
    assert [job.model_id for job in plan.jobs] == ["gpt-3.5-turbo-0125", "lmsys/vicuna-13b-v1.3"]
    assert len(plan.stimuli) == 5
    for job in plan.jobs:
        assert job.scoring["backend"] == "openai" and job.tasks == ("explicit",)
        assert job.scoring["temperature"] == (1 if name == "boxes-chatgpt" else 0)
    assert plan.jobs[1].scoring["base_url"] == "http://localhost:8010/v1"
    sweep._check_models(plan.jobs)  # endpoint models: nothing to look up, no revision
    options = sweep.scoring_job(plan.jobs[0], plan.stimuli[0]).options
    assert options.temperature == plan.jobs[0].scoring["temperature"]
