"""The schema layer: strict records, messages that name the file and key, anchored patterns."""

from __future__ import annotations

import json
import re

import pytest

from tracktale.errors import TracktaleError
from tracktale.schema import SurveyAnswers, TrialRecord, columns, json_schema, record_model
from tracktale.stimulus_set import MANIFEST_FILE, read_manifest, write_stimulus_set


@pytest.fixture
def trial_data():
    return {
        "client_trial_id": "trial-0000",
        "participant_id": "P1",
        "study_id": "study",
        "source": "online",
        "stimulus_sha256": "0" * 64,
        "item_id": "abc",
        "role": "main",
        "task": "explicit",
        "list_id": "A",
        "block": 1,
        "trial_index": 0,
        "response": "box",
        "correct": True,
        "timed_out": False,
        "reading_time_ms": 5000,
        "reading_timed_out": False,
        "response_time_ms": 1234.5,
        "good_side": None,
        "screen_width": 1280,
        "screen_height": 800,
        "blur_count": 0,
        "hidden_count": 0,
    }


def test_a_trial_record_keeps_its_values_and_refuses_what_is_wrong(trial_data):
    record = TrialRecord.from_dict(trial_data)
    assert record.reading_time_ms == 5000 and type(record.reading_time_ms) is int
    assert (record.restarts, record.flags) == (0, "")
    cases = [
        ({"block": True}, "trial field 'block' has the wrong type (bool)"),
        ({"block": -1}, "trial field 'block' must not be negative"),
        ({"correct": 1}, "trial field 'correct' has the wrong type (int)"),
        ({"role": None}, "trial field 'role' has the wrong type (NoneType)"),
        (
            {"source": "web"},
            "trial field 'source' must be one of ('online', 'lab', 'simulated', 'preview')",
        ),
        ({"good_side": "up"}, "trial field 'good_side' must be one of ('left', 'right')"),
        ({"reading_time_ms": float("nan")}, "'reading_time_ms' must be a finite number"),
        ({"colour": "red"}, "unknown trial field 'colour'"),
    ]
    for change, message in cases:
        with pytest.raises(TracktaleError, match=re.escape(message)):
            TrialRecord.from_dict({**trial_data, **change})
    with pytest.raises(TracktaleError, match="trial field 'task' is missing"):
        TrialRecord.from_dict({k: v for k, v in trial_data.items() if k != "task"})


def test_records_are_strict_models_and_columns_follow_the_declaration():
    model = record_model(TrialRecord)
    assert model.model_config["strict"] and model.model_config["extra"] == "forbid"
    assert [c.name for c in columns(TrialRecord)] == list(model.model_fields)
    assert {c.name for c in columns(TrialRecord) if c.free_text} == {"response", "intermediates"}


def test_json_schema_patterns_are_the_anchored_server_patterns():
    schema = json_schema(SurveyAnswers, sent_only=True)
    pattern = schema["properties"]["native_language"]["pattern"]
    assert pattern == r"^(?:\S.*)$"
    for text in ("English", " English", "Eng\nlish", "E"):
        assert bool(re.search(pattern, text)) == bool(re.fullmatch(r"\S.*", text)), text
    assert schema["properties"]["age"]["anyOf"][0] == {
        "maximum": 120,
        "minimum": 18,
        "type": "integer",
    }


def test_a_bad_manifest_names_the_file_and_the_key(human_set, tmp_path):
    folder = write_stimulus_set(human_set, tmp_path / "set")
    path = folder / MANIFEST_FILE
    manifest = json.loads(path.read_text(encoding="utf-8"))
    assert read_manifest(folder) == human_set.manifest
    cases = [
        ({"n_items": "50"}, "manifest field 'n_items' has the wrong type (str)"),
        ({"seed": True}, "manifest field 'seed' has the wrong type (bool)"),
        ({"items_sha256": "XYZ"}, "manifest field 'items_sha256' has an invalid format"),
        ({"counts": {"main/C1": -1}}, "manifest field 'counts.main/C1' must not be negative"),
        ({"config": []}, "manifest field 'config' has the wrong type (list)"),
    ]
    for change, message in cases:
        path.write_text(json.dumps({**manifest, **change}), encoding="utf-8")
        with pytest.raises(TracktaleError, match=re.escape(f"{path}: {message}")):
            read_manifest(folder)
