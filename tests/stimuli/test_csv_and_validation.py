import pytest

from tracktale.errors import TracktaleError
from tracktale.stimuli.csv_export import read_items_csv, write_items_csv
from tracktale.stimuli.validation import validate_stimulus_set
from tracktale.stimulus_set import ITEMS_FILE, MANIFEST_FILE, write_stimulus_set


def test_csv_export_round_trip_is_exact(human_set, model_set, tmp_path):
    for name, stimulus_set in (("human", human_set), ("model", model_set)):
        path = tmp_path / f"{name}.csv"
        assert write_items_csv(stimulus_set, path) == len(stimulus_set)
        assert read_items_csv(path) == list(stimulus_set.items)


def test_csv_has_a_column_per_condition_factor(human_set, tmp_path):
    import csv

    write_items_csv(human_set, tmp_path / "items.csv")
    with open(tmp_path / "items.csv", encoding="utf-8-sig", newline="") as handle:
        header = next(csv.reader(handle))
    assert {
        "condition.complexity",
        "condition.focus",
        "condition.template",
        "context",
        "choice.good",
        "choice.bad",
        "answer",
    } <= set(header)


def test_csv_edited_in_a_spreadsheet_is_refused_with_its_row(human_set, tmp_path):
    path = tmp_path / "items.csv"
    write_items_csv(human_set, path)
    text = path.read_text(encoding="utf-8-sig")
    first = human_set.items[0]
    path.write_text(
        text.replace(first.context, first.context.replace("room", "flat"), 1), encoding="utf-8-sig"
    )
    with pytest.raises(TracktaleError, match="row 2"):
        read_items_csv(path)


def test_validate_passes_a_fresh_set(human_set, tmp_path):
    write_stimulus_set(human_set, tmp_path / "set")
    report = validate_stimulus_set(tmp_path / "set")
    assert report.ok and report.n_items == len(human_set)


def test_validate_reports_each_corrupted_item_by_id(human_set, tmp_path):
    write_stimulus_set(human_set, tmp_path / "set")
    path = tmp_path / "set" / ITEMS_FILE
    lines = path.read_text().splitlines()
    broken_id = human_set.items[4].item_id
    lines[4] = lines[4][: len(lines[4]) // 2]
    lines[9] = "{not json"
    path.write_text("\n".join(lines) + "\n")
    report = validate_stimulus_set(tmp_path / "set")
    messages = [str(p) for p in report.problems]
    assert any(m.startswith(f"item {broken_id} line 5") for m in messages) or any(
        "line 5" in m for m in messages
    )
    assert any("line 10: not valid JSON" in m for m in messages)
    assert any("sha256" in m for m in messages)


def test_validate_catches_an_item_whose_simulation_fails_even_with_a_fresh_id(human_set, tmp_path):
    import copy
    import json

    from tracktale.item import content_id

    write_stimulus_set(human_set, tmp_path / "set")
    path = tmp_path / "set" / ITEMS_FILE
    lines = path.read_text().splitlines()
    data = json.loads(lines[0])
    tampered = copy.deepcopy(data)
    tampered["answer"] = "drawer" if data["answer"] != "drawer" else "box"
    tampered["item_id"] = content_id(tampered)
    from tracktale.item import canonical_json

    lines[0] = canonical_json(tampered)
    path.write_text("\n".join(lines) + "\n")
    report = validate_stimulus_set(tmp_path / "set")
    assert any(
        p.item_id == tampered["item_id"] and "final location" in p.message for p in report.problems
    )


def test_validate_on_a_folder_without_a_set_is_a_clear_error(tmp_path):
    with pytest.raises(TracktaleError, match=MANIFEST_FILE):
        validate_stimulus_set(tmp_path)
