"""``--paradigm`` takes the paradigms registered when the command runs, not when it was imported.

The ``late_toy`` fixture first runs the commands (so that every one of them is imported and
built), then registers the toy paradigm, as a lab's paradigm registered in its own process
would be. Every run goes through the root command (``tracktale.app.cli``), never a subcommand
alone, since click builds a command's help once.
"""

from __future__ import annotations

import json

import pytest

from tests.toyparadigm.plugin import PLUGIN
from tracktale.app.cli import main
from tracktale.stimuli.registry import PLUGINS

BUILT_IN = ("narrative", "boxes", "arithmetic")
"""The generating paradigms tracktale ships."""


def run(capsys, *argv):
    """The exit status, standard output and standard error of ``tracktale ARGV``."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(map(str, argv)))
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


@pytest.fixture
def late_toy(capsys):
    """The toy paradigm, registered after the commands that take ``--paradigm`` were built."""
    for command in (("stimuli", "generate"), ("experiment", "preview-link")):
        code, out, _ = run(capsys, *command, "--help")
        assert code == 0 and "toy" not in out
    PLUGINS.add("toy", PLUGIN, lazy=False)
    yield PLUGIN
    PLUGINS.remove("toy")


def test_generate_accepts_a_paradigm_registered_after_import(late_toy, tmp_path, capsys):
    out_dir = tmp_path / "toy-set"
    argv = ("stimuli", "generate", "--paradigm", "toy", "--per-number", 1, "--out", out_dir)
    code, out, err = run(capsys, *argv, "--seed", 3)
    assert code == 0, err
    lines = (out_dir / "items.jsonl").read_text().splitlines()
    assert {json.loads(line)["paradigm"] for line in lines} == {"toy"} and len(lines) == 4
    assert "4 items" in out
    code, out, _ = run(capsys, "stimuli", "generate", "--help")
    assert code == 0 and "toy" in out and "--per-number" in out and "toy: human" in out


def test_an_unknown_paradigm_is_one_line_naming_those_registered_now(late_toy, capsys):
    code, _, err = run(capsys, "stimuli", "generate", "--paradigm", "chess")
    assert code == 2 and err.count("\n") == 1 and err.startswith("tracktale: error: ")
    assert "'chess' is not one of " + ", ".join(map(repr, (*BUILT_IN, "toy"))) in err


def test_the_studys_paradigm_option_takes_the_toys_study(late_toy, capsys):
    code, out, err = run(capsys, "experiment", "preview-link", "--paradigm", "toy")
    assert code == 0, err
    assert "preview" in out.lower()
    code, _, err = run(capsys, "experiment", "preview-link", "--paradigm", "chess")
    assert code == 2 and "'toy'" in err


def test_once_the_toy_is_removed_its_name_is_refused(capsys):
    code, _, err = run(capsys, "stimuli", "generate", "--paradigm", "toy")
    assert code == 2 and err.count("\n") == 1
    assert "'toy' is not one of " + ", ".join(map(repr, BUILT_IN)) in err
    code, out, _ = run(capsys, "stimuli", "generate", "--help")
    assert "--per-number" not in out and "[narrative|boxes|arithmetic]" in out
