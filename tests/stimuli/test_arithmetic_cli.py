"""The arithmetic paradigm through ``tracktale stimuli``: generate, validate, show, export."""

import json

import pytest

from tracktale.app.cli import main
from tracktale.stimuli.csv_export import read_items_csv
from tracktale.stimulus_set import read_stimulus_set

SMALL = ["--datasets", "int_1-10_add_lb1,float_0-1_mixed_lb7", "--horizons", "5,95"]


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def generate(tmp_path, capsys, *extra):
    target = tmp_path / "set"
    argv = ["stimuli", "generate", "--paradigm", "arithmetic", *SMALL, "--per-horizon", "3"]
    status, out, err = run([*argv, *extra, "--out", str(target)], capsys)
    assert status == 0, err
    return target, out


def test_generate_validate_show_and_export(tmp_path, capsys):
    target, out = generate(tmp_path, capsys)
    assert "12 items" in out and "main/h95" in out and "float_0-1_mixed_lb7" in out
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["paradigm"] == "arithmetic" and manifest["protocol"] == "model"
    assert manifest["config"]["horizons"] == [5, 95]
    status, out, _ = run(["stimuli", "validate", str(target)], capsys)
    assert status == 0 and "all 12 items verified" in out
    stimulus_set = read_stimulus_set(target)
    item = stimulus_set.items[0]
    status, out, _ = run(["stimuli", "show", item.item_id[:8], "--set", str(target)], capsys)
    assert status == 0 and "Final Step: Return S7" in out and f"expected: {item.answer}" in out
    status, _, _ = run(["stimuli", "export-csv", str(target)], capsys)
    assert status == 0
    assert read_items_csv(target / "items.csv") == list(stimulus_set.items)


def test_same_options_same_bytes(tmp_path, capsys):
    first, _ = generate(tmp_path / "a", capsys, "--seed", "3")
    second, _ = generate(tmp_path / "b", capsys, "--seed", "3")
    assert (first / "items.jsonl").read_bytes() == (second / "items.jsonl").read_bytes()


def test_validate_catches_an_edited_reference(tmp_path, capsys):
    target, _ = generate(tmp_path, capsys)
    lines = (target / "items.jsonl").read_text().splitlines()
    lines[2] = lines[2].replace('"answer":"', '"answer":"1', 1)
    (target / "items.jsonl").write_text("\n".join(lines) + "\n")
    status, _, err = run(["stimuli", "validate", str(target)], capsys)
    assert status == 1 and "line 3" in err and "does not match the item's content" in err


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--datasets", "int_1-10_add"], "unknown dataset 'int_1-10_add'"),
        (["--horizons", "5,x"], "not a list of int"),
        (["--horizons", "0"], "--horizons must be positive"),
        (["--per-horizon", "0"], "--per-horizon must be at least 1"),
        (["--prompt-version", "v2"], "--prompt-version: 'v2' is not one of"),
        (["--protocol", "people"], "no protocol 'people'"),
        (["--lure", "any"], "--lure does not apply to --paradigm arithmetic"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path, capsys, extra, fragment):
    argv = ["stimuli", "generate", "--paradigm", "arithmetic", *extra, "--out", str(tmp_path)]
    status, _, err = run(argv, capsys)
    assert status == 1 and fragment in err and err.count("\n") == 1
