"""The trial record's one declaration and what is derived from it.

The SQL columns are those of the first release; adding a field to the record is one edit
(plus the migration the study database runs when it opens an older file), and every consumer
(request validation, columns, export types, JSON Schema) picks it up; the fields the page's
plugins report reach the API with the types the schema declares.
"""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path
from typing import Annotated

import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from tests.experiment.test_storage import record, register
from tracktale.experiment.export.files import Table, _field_types, parquet_bytes
from tracktale.experiment.storage import tables
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.trialflow import _record_fields
from tracktale.experiment.study.validation import ApiError, Body, validate
from tracktale.schema import Column, TrialRecord, columns, json_schema
from tracktale.schema.fields import Sent, text

STATIC = Path(tables.__file__).parent.parent / "static"

FIRST_RELEASE = [
    ("client_trial_id", "String(64)", False),
    ("participant_id", "String(128)", False),
    ("study_id", "String(128)", False),
    ("source", "String(128)", False),
    ("stimulus_sha256", "String(128)", False),
    ("item_id", "String(128)", False),
    ("role", "String(128)", False),
    ("task", "String(128)", False),
    ("list_id", "String(128)", False),
    ("block", "Integer", False),
    ("trial_index", "Integer", False),
    ("response", "FreeText", True),
    ("correct", "Boolean", False),
    ("timed_out", "Boolean", False),
    ("reading_time_ms", "Float", False),
    ("reading_timed_out", "Boolean", False),
    ("response_time_ms", "Float", True),
    ("good_side", "String(128)", True),
    ("screen_width", "Integer", False),
    ("screen_height", "Integer", False),
    ("blur_count", "Integer", False),
    ("hidden_count", "Integer", False),
    ("restarts", "Integer", True),
    ("correct_paper_rule", "Boolean", True),
    ("flags", "String(256)", True),
    ("browser", "Integer", True),
    ("served_at", "String(128)", True),
    ("answered_at", "String(128)", True),
    ("server_elapsed_ms", "Float", True),
]
"""The trials columns as the hand-written derivation (parsing ``str(field.type)``) made them."""
ADDED_SINCE = [("intermediates", "FreeText", True), ("queued_ms", "Float", True)]
"""Fields added after the first release, in order (each with a default and a migration)."""


def _described(column: sa.Column) -> tuple[str, str, bool]:
    kind = type(column.type).__name__
    if kind == "String":
        kind = f"String({column.type.length})"
    return column.name, kind, column.nullable


def test_the_trials_columns_are_derived_unchanged():
    derived = [_described(c) for c in tables.trials.columns if c.name not in ("id", "received_at")]
    assert derived == FIRST_RELEASE + ADDED_SINCE


def test_a_database_from_before_intermediates_gets_the_column_and_keeps_its_trials(
    tmp_path, human_set
):
    url = f"sqlite:///{tmp_path / 'study.sqlite'}"
    storage = Storage(url)
    person, _ = register(storage, human_set, "PID1")
    storage.save_trial(record(person))
    storage.close()
    engine = sa.create_engine(url)
    with engine.begin() as connection:  # the file as the release before the field made it
        connection.execute(sa.text("ALTER TABLE trials DROP COLUMN intermediates"))
    engine.dispose()
    storage = Storage(url)  # opening it runs the migration
    probed = '[{"variable": "S4", "value": "12"}, {"variable": "S7", "value": ""}]'
    storage.save_trial(record(person, 1, "trial-0001", intermediates=probed))
    old, new = storage.trials()
    storage.close()
    assert (old.intermediates, new.intermediates) == (None, probed)


# The one edit: a field with its type, its rules and a default (it came after the first release).
ExtendedRecord = dataclasses.make_dataclass(
    "ExtendedRecord",
    [("keyboard", Annotated[str | None, Sent(*text(max_length=32))], None)],
    bases=(TrialRecord,),
    frozen=True,
)


def test_adding_a_trial_field_is_one_edit_plus_a_migration(tmp_path, human_set):
    url = f"sqlite:///{tmp_path / 'study.sqlite'}"
    storage = Storage(url)  # a database created before the field existed
    person, _ = register(storage, human_set, "PID1")
    storage.save_trial(record(person))
    storage.close()

    # The migration: the column is added to the existing table, as when a database is opened.
    upgraded = sa.MetaData()
    tables.participants.to_metadata(upgraded)
    table = tables.trials_table(upgraded, ExtendedRecord)
    engine = sa.create_engine(url)
    assert tables.add_missing_columns(engine, upgraded) == ["trials.keyboard"]
    assert tables.add_missing_columns(engine, upgraded) == []

    stored = ExtendedRecord(**{**record(person, 1, "trial-0001").to_dict(), "keyboard": "QWERTZ"})
    with engine.begin() as connection:
        connection.execute(table.insert().values(**stored.to_dict(), received_at=sa.func.now()))
    names = [field.name for field in dataclasses.fields(ExtendedRecord)]
    with engine.connect() as connection:
        rows = connection.execute(sa.select(*(table.c[n] for n in names)).order_by(table.c.id))
        old, new = [ExtendedRecord(**dict(zip(names, row, strict=True))) for row in rows]
    engine.dispose()
    assert (old.keyboard, new) == (None, stored)

    # Everything else follows from the declaration.
    assert columns(ExtendedRecord)[-1] == Column("keyboard", str, nullable=True)
    assert ExtendedRecord.from_dict({**stored.to_dict()}) == stored
    schema = json_schema(ExtendedRecord, sent_only=True)
    assert schema["properties"]["keyboard"]["anyOf"][0] == {"maxLength": 32, "type": "string"}
    assert "keyboard" not in schema["required"]
    body = {k: v for k, v in stored.to_dict().items() if k in Body(TrialRecord)}
    assert validate({**body, "keyboard": "AZERTY"}, Body(ExtendedRecord))["keyboard"] == "AZERTY"
    with pytest.raises(ApiError, match="'keyboard' is longer than 32 characters"):
        validate({**body, "keyboard": "x" * 33}, Body(ExtendedRecord))
    with pytest.raises(ApiError, match="unknown field 'keyboard'"):
        validate({**body, "keyboard": "AZERTY"}, Body(TrialRecord))
    # The study server takes every sent field into the record (no list of fields to extend).
    sent = validate({**body, "keyboard": "AZERTY"}, Body(ExtendedRecord))
    planned = person.plan.trials[1]
    fields = _record_fields(person, planned, sent, planned.item_id, ExtendedRecord)
    assert fields["keyboard"] == "AZERTY"
    assert "keyboard" not in _record_fields(person, planned, body, planned.item_id)
    names, kinds = _field_types(ExtendedRecord)
    exported = Table("trials", names, kinds, [tuple(stored.to_dict().values())])
    arrow = pq.read_table(io.BytesIO(parquet_bytes(exported))).schema
    assert str(arrow.field("keyboard").type) == "string"
    assert str(arrow.field("reading_time_ms").type) == "double"


# --- the front end against the JSON Schema --------------------------------------------------

_JS_TYPES = {
    "STRING": "string",
    "FLOAT": "number",
    "INT": "integer",
    "BOOL": "boolean",
    "OBJECT": "object",
}
_CASTS = {"Boolean(": "boolean", "probedValues(": "string"}
"""What the page's conversions send, whatever the plugin's type (JSON text of an object)."""


def _declared_data(plugin: str) -> dict[str, str]:
    """The ``data`` fields a jsPsych plugin declares, with their JSON types.

    Fields spread in from the shared helper (``...helpers.timedResponseData(...)``) are read from
    ``plugin-helpers.js``.
    """
    source = (STATIC / "plugins" / plugin).read_text(encoding="utf-8")
    block = source.split("data: {", 1)[1].split("\n    },", 1)[0]
    found = re.findall(r"(\w+): \{ type: jspsych\.ParameterType\.(\w+)", block)
    if "timedResponseData(" in block:
        helpers = (STATIC / "plugin-helpers.js").read_text(encoding="utf-8")
        shared = helpers.split("function timedResponseData(", 1)[1].split("\n  }", 1)[0]
        found += re.findall(r"(\w+): \{ type: ParameterType\.(\w+)", shared)
    return {name: _JS_TYPES[kind] for name, kind in found}


def _trial_body() -> tuple[dict[str, str], dict[str, str]]:
    """The body ``trials.js`` sends (field -> JavaScript expression) and its local constants."""
    source = (STATIC / "trials.js").read_text(encoding="utf-8")
    finish = source.split("finish(slot, data) {", 1)[1].split("return this.outbox", 1)[0]
    literal = finish.split("const body = {", 1)[1].split("\n      };", 1)[0]
    body = dict(re.findall(r"^\s*(\w+): (.+),$", literal, re.MULTILINE))
    constants = dict(re.findall(r"const (\w+) = (.+);", finish))
    return body, constants


def _allows(schema: dict, json_type: str) -> bool:
    options = schema.get("anyOf", [schema])
    wanted = {json_type, "number"} if json_type == "integer" else {json_type}
    return any(option.get("type") in wanted for option in options)


def test_the_page_sends_exactly_the_fields_the_schema_declares():
    schema = json_schema(TrialRecord, sent_only=True)
    body, _ = _trial_body()
    assert set(schema["required"]) <= set(body) <= set(schema["properties"])
    assert schema["additionalProperties"] is False


def test_plugin_data_reaches_the_api_with_the_declared_types():
    properties = json_schema(TrialRecord, sent_only=True)["properties"]
    reading = _declared_data("timed-reading.js")
    answers = [_declared_data("timed-choice.js"), _declared_data("timed-text-response.js")]
    answers.append(_declared_data("arithmetic-procedure.js"))
    body, constants = _trial_body()
    checked = 0
    for field, expression in body.items():
        if "? null :" in expression:
            assert _allows(properties[field], "null"), field
            expression = expression.split("? null :", 1)[1].strip()
        expression = constants.get(expression, expression)
        if expression.startswith(("Boolean(", "Math.round(")):
            kind = "boolean" if expression.startswith("Boolean(") else "integer"
            assert _allows(properties[field], kind), field
        for source, name in re.findall(r"\b(data|reading)\.(\w+)", expression):
            plugins = [reading] if source == "reading" else answers
            declared = [plugin[name] for plugin in plugins if name in plugin]
            assert declared, f"no plugin declares {name!r} (sent as {field!r})"
            for kind in declared:
                cast = next((t for f, t in _CASTS.items() if expression.startswith(f)), kind)
                assert _allows(properties[field], cast), (field, name, kind)
            checked += 1
    assert checked >= 6  # response (choice and typed), times and timeouts


def test_the_shared_answer_fields_are_read_for_every_timed_answer_plugin():
    for plugin in ("timed-text-response.js", "arithmetic-procedure.js", "boxes-grid.js"):
        declared = _declared_data(plugin)
        assert (declared["response"], declared["rt"], declared["timed_out"]) == (
            "string",
            "number",
            "boolean",
        ), plugin
