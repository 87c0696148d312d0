"""The design file's reference page is current, and the how-to's shell commands run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from tests.conftest import REPO_ROOT
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


@pytest.mark.slow
def test_the_how_to_shows_the_error_its_command_prints(tmp_path):
    """The page's blocks run in tests/docs; this checks the output the page shows."""
    blocks = _blocks("bash")
    upto = next(index for index, block in enumerate(blocks) if "typo.csv" in block)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env["TRACKTALE_DATA"] = str(tmp_path / "data")
    done = subprocess.run(
        ["bash", "-e", "-c", "\n".join(blocks[: upto + 1])],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    shown = next(block for block in _blocks("text") if "nothing was written" in block)
    assert shown.strip() in done.stderr
