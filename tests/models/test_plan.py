"""Sweep plans: expansion into one job per model revision, and one-line errors naming the key."""

from __future__ import annotations

import textwrap

import pytest

from tracktale.errors import TracktaleError
from tracktale.models.plan import load_plan
from tracktale.models.revisions import PRESETS


def write(tmp_path, text, name="sweep.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def set_dir(stimulus_dir, tmp_path):
    # A stimulus set beside the plan, named relative to it.
    (tmp_path / "sets").mkdir()
    (tmp_path / "sets" / "model").symlink_to(stimulus_dir)
    return tmp_path / "sets" / "model"


def test_a_plan_expands_into_one_job_per_model_revision(tmp_path, set_dir):
    path = write(
        tmp_path,
        """
        store: results
        stimuli: [sets/model]
        tasks: [implicit, sequence]
        scoring: {dtype: bfloat16, batch_size: 8, roles: main}
        executor:
          name: slurm
          partition: gpu
          gpus_per_node: 1
          timeout_min: 120
        models:
          - id: EleutherAI/pythia-160m
            preset: pythia-log
            revisions: [main]
          - id: allenai/OLMo-2-1124-7B
            revisions: step1000,step2000
            dtype: float32
            resources: {gpus_per_node: 2, mem_gb: 200}
          - EleutherAI/pythia-70m
          - id: gpt-4o-2024-08-06
            backend: openai
            tasks: [explicit]
            concurrency: 4
        """,
    )
    plan = load_plan(path)
    assert plan.store == (tmp_path / "results").resolve()
    assert plan.stimuli == (set_dir.resolve(),)
    assert plan.executor == "slurm"
    labels = [job.label for job in plan.jobs]
    pythia = [f"EleutherAI/pythia-160m@{rev}" for rev in PRESETS["pythia-log"]]
    assert labels == [
        *pythia,
        "EleutherAI/pythia-160m@main",
        "allenai/OLMo-2-1124-7B@step1000",
        "allenai/OLMo-2-1124-7B@step2000",
        "EleutherAI/pythia-70m",
        "gpt-4o-2024-08-06",
    ]
    first, olmo, openai = plan.jobs[0], plan.jobs[-4], plan.jobs[-1]
    assert first.tasks == ("implicit", "sequence") and first.scoring["dtype"] == "bfloat16"
    assert first.resources.partition == "gpu" and first.resources.gpus_per_node == 1
    assert olmo.scoring["dtype"] == "float32" and olmo.scoring["batch_size"] == 8
    assert olmo.resources.gpus_per_node == 2 and olmo.resources.mem_gb == 200
    assert olmo.resources.partition == "gpu" and olmo.resources.timeout_min == 120
    assert openai.tasks == ("explicit",) and openai.scoring["concurrency"] == 4
    assert plan.jobs[-2].revision is None


BASE = """
store: results
stimuli: [sets/model]
models:
  - id: EleutherAI/pythia-70m
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (BASE + "colour: blue\n", "line 6: colour: unknown key (known: executor, models,"),
        (BASE + "    revison: [step0]\n", "line 6: models[0].revison: unknown key"),
        (BASE + "    dtype: fp16\n", "models[0].dtype: 'fp16' is not one of float32, bfloat16"),
        (BASE + "    batch_size: many\n", "models[0].batch_size: expected int, got str 'many'"),
        (BASE + "    batch_size: true\n", "models[0].batch_size: expected int, got True"),
        (BASE + "    batch_size: 0\n", "models[0].batch_size: must be at least 1, got 0"),
        (BASE + "    preset: pythia-lg\n", "models[0].preset: unknown revision preset 'pythia-lg'"),
        (BASE + "    revisions: [1000]\n", "models[0].revisions: expected strings, got 1000"),
        (BASE + "    tasks: [explain]\n", "models[0].tasks: 'explain' is not one of implicit"),
        (BASE + "    max_memory: 0=lots\n", "models[0].max_memory: size 'lots' for device 0"),
        (BASE + "    backend: openai\n", "models[0]: --task implicit: the openai backend answers"),
        (BASE + "    concurrency: 4\n", "--concurrency: not an option of the hf backend"),
        (BASE + "  - id: EleutherAI/pythia-70m\n", "models[1]: EleutherAI/pythia-70m is already"),
        (BASE + "executor: {name: kubernetes}\n", "executor.name: 'kubernetes' is not one of"),
        (BASE + "executor: {mem_gb: -1}\n", "executor.mem_gb: must be at least"),
        (BASE.replace("sets/model", "sets/nothing"), "line 3: stimuli[0]: no stimulus set folder"),
        (BASE.replace("store: results\n", ""), "missing key 'store'"),
        (BASE + "  - [a, b]\n", "models[1]: expected a mapping of keys, got list"),
        (BASE + "tasks: [implicit\n", "not valid YAML"),
        ("", "the plan is empty"),
        (BASE + "    preset: true\n", "models[0].preset: expected a list (or a comma-separated"),
        (BASE + "    top_logprobs: 25\n", "models[0].top_logprobs: must be at most 20, got 25"),
        (BASE + "    temperature: hot\n", "temperature: expected int or float, got str 'hot'"),
        (BASE + "    max_new_tokens: 2.0\n", "max_new_tokens: expected int, got float 2.0"),
        (BASE + "executor: {sbatch: [a]}\n", "executor.sbatch: expected dict, got list ['a']"),
        (BASE + "scoring: {roles: [main, bonus]}\n", "scoring.roles: 'bonus' is not one of main"),
    ],
)
def test_plan_errors_are_one_line_naming_the_key(tmp_path, set_dir, text, expected):
    path = write(tmp_path, text)
    with pytest.raises(TracktaleError) as error:
        load_plan(path)
    message = str(error.value)
    assert message.startswith(str(path)) and "\n" not in message
    assert expected in message, message


def test_a_folder_that_is_not_a_stimulus_set(tmp_path, set_dir):
    (tmp_path / "sets" / "empty").mkdir()
    path = write(tmp_path, BASE.replace("sets/model", "sets/empty"))
    with pytest.raises(TracktaleError, match=r"stimuli\[0\]: .* is not a stimulus set"):
        load_plan(path)


def test_local_model_folders_are_relative_to_the_plan(tmp_path, set_dir, model_dirs):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "tiny").symlink_to(model_dirs["pythia"])
    path = write(tmp_path, BASE.replace("EleutherAI/pythia-70m", "./models/tiny"))
    plan = load_plan(path)
    assert plan.jobs[0].model_id == str((tmp_path / "models" / "tiny").resolve())


def test_the_documented_plan_example_is_a_valid_plan(tmp_path, stimulus_dir):
    from tests.conftest import REPO_ROOT

    readme = (REPO_ROOT / "docs" / "guides" / "models.md").read_text()
    section = readme[readme.index("## Running on a cluster") :]
    example = section[section.index("```yaml") + len("```yaml") : section.index("```\n")]
    (tmp_path / "sets").mkdir()
    for name in ("model", "boxes"):
        (tmp_path / "sets" / name).symlink_to(stimulus_dir)
    plan = load_plan(write(tmp_path, example))
    assert plan.executor == "slurm" and len(plan.jobs) == 154 + 2 + 1 + 1 + 1
    llama, gpt, served = plan.jobs[-3:]
    assert llama.resources.gpus_per_node == 2 and llama.resources.partition == "gpu"
    assert llama.scoring["max_memory"] == {0: "75GiB", 1: "75GiB"}
    assert gpt.scoring["backend"] == "openai" and gpt.tasks == ("explicit",)
    assert served.scoring["backend"] == "completions" and served.tasks == plan.jobs[0].tasks
    assert served.scoring["base_url"] == "http://gpu-node-7:8000/v1"
