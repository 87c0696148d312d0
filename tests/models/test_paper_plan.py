"""The shipped sweep plan of the source paper's models is valid and lists every one of them."""

from __future__ import annotations

import shutil

from tests.conftest import REPO_ROOT
from tests.models.test_sweep import run
from tracktale.analysis.data.catalog import KNOWN_MODELS, training_step
from tracktale.models import gguf
from tracktale.models.plan import load_plan
from tracktale.models.revisions import PRESETS
from tracktale.stimulus_set import write_stimulus_set

PLAN = REPO_ROOT / "plans" / "entity-tracking.yaml"


def _placed(tmp_path, stimulus_set):
    """The plan where it lives in a checkout, with the main job's model set beside it."""
    (tmp_path / "plans").mkdir()
    shutil.copy(PLAN, tmp_path / "plans" / PLAN.name)
    stimuli = tmp_path / "tracktale-data" / "stimuli" / "narrative-model-s1"
    write_stimulus_set(stimulus_set, stimuli)
    return tmp_path / "plans" / PLAN.name


def test_the_plan_has_every_model_of_section_3_4_with_checkpoints(stimulus_set, tmp_path):
    plan = load_plan(_placed(tmp_path, stimulus_set))
    finals = {job.model_id for job in plan.jobs if job.revision is None}
    # Pythia 70M-12B, OLMo 2 base + instruct, Llama, Qwen: every known model but our default.
    assert finals == set(KNOWN_MODELS) - {gguf.DEFAULT_MODEL_ID}
    revisions: dict[str, list[str]] = {}
    for job in plan.jobs:
        if job.revision is not None:
            revisions.setdefault(job.model_id, []).append(job.revision)
    for size in ("70m", "160m", "410m", "1b", "1.4b", "2.8b", "6.9b", "12b"):
        assert revisions[f"EleutherAI/pythia-{size}"] == list(PRESETS["pythia"])
    for base in ("OLMo-2-0425-1B", "OLMo-2-1124-7B", "OLMo-2-1124-13B", "OLMo-2-0325-32B"):
        stages = revisions[f"allenai/{base}"]
        assert len(stages) >= 9 and all(training_step(r) > 0 for r in stages)
        assert all(r.startswith(("stage1-step", "stage2-ingredient")) for r in stages)
    checkpoint_tasks = {job.tasks for job in plan.jobs if job.revision is not None}
    assert checkpoint_tasks == {("implicit",)}
    assert {job.tasks for job in plan.jobs if job.revision is None} == {
        ("implicit", "explicit", "sequence")
    }


def test_sweep_status_reads_the_shipped_plan_without_downloading(stimulus_set, tmp_path, capsys):
    path = _placed(tmp_path, stimulus_set)
    code, out, err = run(["models", "sweep", "--plan", str(path), "--status"], capsys)
    assert code == 0, err
    lines = [line.split("\t") for line in out.splitlines()[1:] if "\t" in line]
    assert len(lines) == len(load_plan(path).jobs) == 1303
    assert out.splitlines()[-1] == "1303 missing"
    assert {line[1] for line in lines} == {"missing"}
    assert ("allenai/OLMo-2-1124-7B@stage2-ingredient1-step11931-tokens50B", "missing") in {
        (line[0], line[1]) for line in lines
    }
