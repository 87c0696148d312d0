"""``tracktale stimuli export --format pcibex``: a PCIbex-ready table that imports back the same."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tracktale.app.cli import main
from tracktale.stimuli.items import EXAMPLE_DIR
from tracktale.stimuli.items.importer import import_table
from tracktale.stimulus_set import ITEMS_FILE, read_stimulus_set, write_stimulus_set

DATA = Path(__file__).parent / "data" / "items"


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def _round_trip(source, design, tmp_path, capsys):
    original = tmp_path / "original"
    status, _, err = run(
        ["stimuli", "import", str(source), "--design", str(design), "--out", str(original)], capsys
    )
    assert status == 0, err
    status, out, err = run(["stimuli", "export", str(original), "--format", "pcibex"], capsys)
    assert status == 0, err
    exported = original / "pcibex"
    assert f"wrote {exported / 'items.csv'}" in out and f"wrote {exported / 'design.yaml'}" in out
    again = tmp_path / "again"
    status, _, err = run(
        ["stimuli", "import", str(exported / "items.csv"), "--design",
         str(exported / "design.yaml"), "--out", str(again)],
        capsys,
    )  # fmt: skip
    assert status == 0, err
    first, second = read_stimulus_set(original), read_stimulus_set(again)
    assert [item.item_id for item in second] == [item.item_id for item in first]
    assert (again / ITEMS_FILE).read_bytes() == (original / ITEMS_FILE).read_bytes()
    assert second.manifest.config["lists"] == first.manifest.config["lists"]
    return exported


def test_the_example_exports_for_pcibex_and_imports_back_the_same_items(tmp_path, capsys):
    exported = _round_trip(EXAMPLE_DIR / "items.csv", EXAMPLE_DIR / "design.yaml", tmp_path, capsys)
    raw = (exported / "items.csv").read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf")  # PCIbex would read a BOM into "Group"
    with open(exported / "items.csv", newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert list(table[0]) == [
        "Group", "Item", "Label", "movement", "distance", "Text", "Question", "Answer", "Good",
        "Bad", "Prompt",
    ]  # fmt: skip
    assert table[0] == {
        "Group": "L1",
        "Item": "1",
        "Label": "test",
        "movement": "stayed",
        "distance": "near",
        "Text": "Anna put the ball in the box. Then Anna looked at the basket.",
        "Question": "Where is the ball?",
        "Answer": "box|the box",
        "Good": "The ball is in the box.",
        "Bad": "The ball is in the basket.",
        "Prompt": "Anna put the ball in the box. Then Anna looked at the basket.\n"
        "Question: Where is the ball?\nAnswer:",
    }
    labels = [row["Label"] for row in table]
    assert labels.count("test") == 32 and labels.count("filler") == 4
    assert {row["Group"] for row in table if row["Label"] != "test"} == {""}


def test_forced_choice_prefixes_and_another_language_survive_the_round_trip(tmp_path, capsys):
    exported = _round_trip(DATA / "nl.csv", DATA / "nl.yaml", tmp_path, capsys)
    header = (exported / "items.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header == "Group,Item,Label,getal,Text,Question,Answer,Option1,Option2,Prefix,Good,Bad"


def test_right_to_left_text_survives_the_round_trip(tmp_path, capsys):
    _round_trip(DATA / "he.tsv", DATA / "he.yaml", tmp_path, capsys)


def test_screens_regions_and_a_factor_named_like_a_pcibex_column(tmp_path, capsys):
    table = [["item", "list", "screen1", "screen2", "regions"]]
    table.append(
        [
            "1",
            "a",
            "The key to the cabinets",
            "was rusty.",
            "The key | to the cabinets | was rusty.",
        ]
    )
    table.append(["1", "b", "The keys to the cabinet", "were rusty.", ""])
    with open(tmp_path / "items.csv", "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(table)
    (tmp_path / "design.yaml").write_text(
        "columns: {text: [screen1, screen2], regions: regions}\n"
        "factors:\n  list:\n    levels: [a, b]\n"
    )
    exported = _round_trip(tmp_path / "items.csv", tmp_path / "design.yaml", tmp_path, capsys)
    header = (exported / "items.csv").read_text(encoding="utf-8").splitlines()[0]
    # A factor called "list" would be PennController's list column: it gets another name.
    assert header == "Group,Item,Label,list_factor,Screen1,Screen2,Regions"


def test_a_generated_set_has_no_pcibex_export(tmp_path, capsys):
    from tests.conftest import _generated

    folder = write_stimulus_set(_generated("narrative", "human", 1), tmp_path / "narrative")
    status, _, err = run(["stimuli", "export", str(folder), "--format", "pcibex"], capsys)
    assert status == 1
    assert "the narrative paradigm exports no 'pcibex' format (it exports: none)" in err


def test_the_importer_reads_what_it_exported_without_the_cli(tmp_path):
    first = import_table(DATA / "nl.csv", DATA / "nl.yaml")
    from tracktale.stimuli.registry import get_paradigm

    written = get_paradigm("items").export(first, "pcibex", tmp_path / "out")
    assert [path.name for path in written] == ["items.csv", "design.yaml"]
    assert import_table(*written).sha256 == first.sha256
