"""docs/cli.md is the current help of every command (scripts/cli_reference.py writes it)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from tests.app.test_cli import walk
from tests.conftest import REPO_ROOT
from tracktale.app.cli import cli

SCRIPT = REPO_ROOT / "scripts" / "cli_reference.py"


def _reference_module():
    spec = importlib.util.spec_from_file_location("cli_reference", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_cli_md_is_current():
    reference = _reference_module()
    written = (REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == reference.render(), (
        "docs/cli.md is not current: run python scripts/cli_reference.py"
    )


def test_the_reference_has_every_command_and_each_of_its_options():
    written = (REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for path, command in walk(cli):
        name = " ".join(path)
        assert f"\n## `{name}`\n" in written, name
        section = written.split(f"\n## `{name}`\n", 1)[1].split("\n## `", 1)[0]
        for param in command.params:
            for flag in getattr(param, "opts", []):
                if flag.startswith("-"):
                    assert flag in section, (name, flag)


def test_check_mode_fails_on_a_stale_file_and_names_the_fix(tmp_path, monkeypatch):
    reference = _reference_module()
    stale = tmp_path / "cli.md"
    stale.write_text("# old\n")
    monkeypatch.setattr(reference, "REFERENCE", stale)
    monkeypatch.setattr(reference, "REPO", tmp_path)
    assert reference.main(["--check"]) == 1
    assert reference.main([]) == 0
    assert reference.main(["--check"]) == 0
    assert stale.read_text() == reference.render()


def test_the_readme_links_the_reference():
    assert "(docs/cli.md)" in (REPO_ROOT / "README.md").read_text()


def test_the_script_runs_on_its_own():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=REPO_ROOT
    )
    assert result.returncode == 0, result.stdout + result.stderr
