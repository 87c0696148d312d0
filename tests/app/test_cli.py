"""The CLI: help text everywhere, one-line errors, and the stimuli commands end to end."""

import json
import subprocess
import sys

import click
import pytest

from tests.processes import run_checked
from tracktale.app.cli import STAGE_GROUPS, cli, main


def walk(command, path=("tracktale",)):
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            yield from walk(command.get_command(ctx, name), (*path, name))


def test_every_command_and_option_has_help_text():
    missing = []
    for path, command in walk(cli):
        if not (command.help or "").strip():
            missing.append(" ".join(path))
        for param in command.params:
            if isinstance(param, click.Option) and not (param.help or "").strip():
                missing.append(f"{' '.join(path)} {param.opts[0]}")
    assert not missing, f"commands or options without help text: {missing}"


def test_every_stage_group_is_reachable():
    names = {path[1] for path, _ in walk(cli) if len(path) == 2}
    assert set(STAGE_GROUPS) <= names


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


@pytest.mark.parametrize(
    ("argv", "status", "fragment"),
    [
        (["stimuli", "generate", "--protocol", "lab"], 1, "no protocol 'lab'"),
        (["stimuli", "generate", "--paradigm", "chess"], 2, "'chess' is not"),
        (["stimuli", "generate", "--seed", "many"], 2, "'many' is not a valid integer"),
        (["stimuli", "generate", "--lure", "nearby"], 1, "--lure: 'nearby' is not one of"),
        (
            ["stimuli", "generate", "--protocol", "human", "--out", "/proc/no-such/set"],
            1,
            "cannot write",
        ),
        (["stimuli", "validate", "/nonexistent/set"], 1, "is not a folder"),
        (["stimuli", "show", "ffff"], 1, "no item 'ffff'"),
        (["stimuli", "frobnicate"], 2, "No such command 'frobnicate'"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_a_non_zero_exit(argv, status, fragment, capsys):
    code, out, err = run(argv, capsys)
    assert code == status
    assert err.count("\n") == 1 and err.startswith("tracktale: error: ")
    assert fragment in err


def test_generate_show_validate_export(tmp_path, capsys):
    out_dir = tmp_path / "human"
    code, out, _ = run(
        ["stimuli", "generate", "--protocol", "human", "--seed", "4", "--out", str(out_dir)], capsys
    )
    assert code == 0 and "C4.F2" in out and "50 items" in out
    first = json.loads((out_dir / "items.jsonl").read_text().splitlines()[0])
    code, out, _ = run(["stimuli", "show", first["item_id"][:8], "--set", str(out_dir)], capsys)
    assert code == 0 and first["context"][:30] in out
    code, out, _ = run(["stimuli", "validate", str(out_dir)], capsys)
    assert code == 0 and "all 50 items verified" in out
    code, out, _ = run(["stimuli", "export-csv", str(out_dir)], capsys)
    assert code == 0 and (out_dir / "items.csv").is_file()


def test_validate_exits_non_zero_naming_the_corrupted_item(tmp_path, capsys):
    out_dir = tmp_path / "set"
    run(["stimuli", "generate", "--protocol", "human", "--out", str(out_dir)], capsys)
    path = out_dir / "items.jsonl"
    lines = path.read_text().splitlines()
    item_id = json.loads(lines[2])["item_id"]
    lines[2] = lines[2].replace("began tidying", "started tidying")
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run(["stimuli", "validate", str(out_dir)], capsys)
    assert code == 1
    assert f"item {item_id} line 3" in err
    assert err.strip().splitlines()[-1].startswith("tracktale: error: ")


def test_options_of_another_paradigm_are_refused(capsys):
    code, _, err = run(["stimuli", "generate", "--shots", "3"], capsys)
    assert code == 1 and "--shots does not apply to --paradigm narrative" in err


def test_python_dash_m_runs_the_cli():
    result = subprocess.run(
        [sys.executable, "-m", "tracktale", "--version"], capture_output=True, text=True, check=True
    )
    assert "tracktale" in result.stdout


def test_a_missing_optional_dependency_names_the_extra_to_install(capsys, monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "statsmodels", None)
    monkeypatch.setitem(sys.modules, "statsmodels.api", None)
    argv = ["analysis", "power", "--method", "glm", "--sizes", "10", "--simulations", "2"]
    code, _, err = run(argv, capsys)
    assert code == 1
    assert err.strip() == (
        "tracktale: error: this command needs statsmodels: pip install 'tracktale[analysis]'"
    )


def test_every_optional_extra_named_in_messages_exists():
    import tomllib

    from tests.conftest import REPO_ROOT
    from tracktale.app.cli import OPTIONAL_EXTRAS

    extras = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert set(OPTIONAL_EXTRAS.values()) <= set(extras)


def test_show_of_an_item_in_a_set_elsewhere_says_to_give_the_set(tmp_path, capsys):
    out_dir = tmp_path / "sets" / "human"
    run(["stimuli", "generate", "--protocol", "human", "--out", str(out_dir)], capsys)
    item_id = json.loads((out_dir / "items.jsonl").read_text().splitlines()[0])["item_id"]
    code, _, err = run(["stimuli", "show", item_id[:6]], capsys)
    assert code == 1 and "for a set elsewhere give --set FOLDER" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_the_stimuli_guides_first_example_runs_as_written(tmp_path):
    # Guides are not run by tests/docs/test_doc_commands.py; this example failed (issue 31).
    import os
    import re
    import sys
    from pathlib import Path

    from tests.conftest import REPO_ROOT

    page = (REPO_ROOT / "docs" / "guides" / "stimuli.md").read_text()
    block = re.search(r"^```bash\n(.*?)^```", page, re.S | re.M).group(1)
    assert "stimuli show" in block
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env["TRACKTALE_DATA"] = str(tmp_path / "data")
    run_checked(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env)
