import json
import os

import pytest

from tracktale.errors import TracktaleError
from tracktale.stimulus_set import (
    ITEMS_FILE,
    MANIFEST_FILE,
    read_stimulus_set,
    write_stimulus_set,
)


def test_write_then_read_gives_the_same_set(human_set, tmp_path):
    write_stimulus_set(human_set, tmp_path / "set")
    again = read_stimulus_set(tmp_path / "set")
    assert again.items == human_set.items
    assert again.manifest == human_set.manifest


def test_manifest_records_generator_seed_config_counts_and_hash(human_set, tmp_path):
    write_stimulus_set(human_set, tmp_path / "set")
    manifest = json.loads((tmp_path / "set" / MANIFEST_FILE).read_text())
    assert manifest["seed"] == 1
    assert manifest["config"]["protocol"] == "human"
    assert manifest["config"]["fillers"] == 10
    assert manifest["generator"] == "tracktale.stimuli.narrative"
    assert sum(manifest["counts"].values()) == manifest["n_items"] == len(human_set)
    import hashlib

    data = (tmp_path / "set" / ITEMS_FILE).read_bytes()
    assert manifest["items_sha256"] == hashlib.sha256(data).hexdigest()
    assert len(data.splitlines()) == len(human_set)


def test_refuses_to_overwrite_without_permission(human_set, tmp_path):
    write_stimulus_set(human_set, tmp_path / "set")
    with pytest.raises(TracktaleError, match="--overwrite"):
        write_stimulus_set(human_set, tmp_path / "set")
    write_stimulus_set(human_set, tmp_path / "set", overwrite=True)
    assert read_stimulus_set(tmp_path / "set").items == human_set.items
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set"]  # no leftovers


def test_never_replaces_a_folder_that_is_not_a_stimulus_set(human_set, tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "thesis.tex").write_text("precious")
    with pytest.raises(TracktaleError, match="not a stimulus set"):
        write_stimulus_set(human_set, tmp_path / "notes", overwrite=True)
    assert (tmp_path / "notes" / "thesis.tex").read_text() == "precious"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into read-only folders")
def test_unwritable_folder_is_a_one_line_error(human_set, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(TracktaleError, match="cannot write"):
        write_stimulus_set(human_set, locked / "set")


def test_unwritable_target_is_a_one_line_error(human_set, tmp_path):
    with pytest.raises(TracktaleError, match="cannot write"):
        write_stimulus_set(human_set, "/proc/tracktale-set")


def test_failed_write_leaves_the_old_set_untouched(human_set, tmp_path, monkeypatch):
    write_stimulus_set(human_set, tmp_path / "set")
    before = (tmp_path / "set" / ITEMS_FILE).read_bytes()

    def broken_replace(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "rename", broken_replace)
    with pytest.raises(TracktaleError, match="No space left"):
        write_stimulus_set(human_set, tmp_path / "set", overwrite=True)
    assert (tmp_path / "set" / ITEMS_FILE).read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda lines: lines.__setitem__(3, lines[3][:40]), "line 4: not valid JSON"),
        (
            lambda lines: lines.__setitem__(2, lines[2].replace('"answer":"', '"answer":"x')),
            "line 3 .*does not match the item's content",
        ),
        (
            lambda lines: lines.__setitem__(0, lines[0].replace('{"answer"', '{ "answer"')),
            "line 1 .*canonical",
        ),
        (lambda lines: lines.pop(), "does not match the sha256"),
    ],
)
def test_corrupted_or_edited_lines_are_refused(human_set, tmp_path, edit, message):
    write_stimulus_set(human_set, tmp_path / "set")
    path = tmp_path / "set" / ITEMS_FILE
    lines = path.read_text().splitlines()
    edit(lines)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TracktaleError, match=message):
        read_stimulus_set(tmp_path / "set")


def test_missing_manifest_is_named(tmp_path):
    (tmp_path / "set").mkdir()
    with pytest.raises(TracktaleError, match="no manifest.json"):
        read_stimulus_set(tmp_path / "set")


def test_lookup_by_id_and_selection(human_set):
    first = human_set.items[0]
    assert human_set.get(first.item_id) is first
    with pytest.raises(TracktaleError, match="no item"):
        human_set.get("0000")
    assert len(human_set.select(role="main", complexity=1)) == 8
    assert len(human_set.select(role="filler")) == 10
