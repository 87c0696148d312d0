"""The design file's reference page is current, and the how-to's shell commands run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from tests.conftest import REPO_ROOT, require
from tracktale.stimuli.items.design import Design, Factor
from tracktale.stimuli.items.reference import reference_markdown

REFERENCE = REPO_ROOT / "docs" / "reference" / "design-yaml.md"
HOW_TO = REPO_ROOT / "docs" / "how-to" / "import-items.md"


def test_the_design_reference_is_current():
    assert REFERENCE.read_text(encoding="utf-8") == reference_markdown(), (
        "docs/reference/design-yaml.md is stale: run python scripts/design_reference.py"
    )


def _keys(model: type[BaseModel], prefix: str = ""):
    for name, field in model.model_fields.items():
        yield f"{prefix}{name}"
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _keys(annotation, f"{prefix}{name}.")
    if model is Design:
        yield from _keys(Factor, "factors.NAME.")


def test_the_reference_documents_every_key_of_the_design():
    page = REFERENCE.read_text(encoding="utf-8")
    for key in _keys(Design):
        assert f"| `{key}` |" in page, key


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", HOW_TO.read_text(encoding="utf-8"), re.S)


def _run(script: str, folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env["TRACKTALE_DATA"] = str(folder / "data")
    return subprocess.run(
        ["bash", "-e", "-c", script], cwd=folder, env=env, capture_output=True, text=True
    )


@pytest.mark.slow
def test_the_how_to_s_commands_run_and_say_what_it_shows(tmp_path):
    script = "\n".join(block for block in _blocks("bash") if "tracktale models" not in block)
    done = _run(script, tmp_path)
    assert done.returncode == 0, done.stderr
    shown_error = next(block for block in _blocks("text") if "nothing was written" in block)
    assert shown_error.strip() in done.stderr
    assert "the same items" in done.stdout and "all 18 items verified" in done.stdout


@pytest.mark.slow
def test_the_how_to_s_model_command_runs_on_the_default_model(tmp_path):
    from tracktale.errors import TracktaleError
    from tracktale.models import gguf

    try:
        gguf.default_gguf_path()
    except TracktaleError as error:
        require(False, str(error))
    blocks = _blocks("bash")
    models = [index for index, block in enumerate(blocks) if "tracktale models" in block]
    assert len(models) == 1
    done = _run("\n".join(blocks[: models[0] + 1]), tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "my-results").is_dir()
