"""docs/reference/records.md is generated from the record declarations and kept current."""

from __future__ import annotations

import importlib.util
import sys

from tests.conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "records_reference.py"


def _reference_module():
    spec = importlib.util.spec_from_file_location("records_reference", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["records_reference"] = module
    spec.loader.exec_module(module)
    return module


def test_records_page_is_current():
    reference = _reference_module()
    written = (REPO_ROOT / "docs" / "reference" / "records.md").read_text(encoding="utf-8")
    assert written == reference.render(), (
        "docs/reference/records.md is stale: run python scripts/records_reference.py"
    )


def test_every_trial_column_is_on_the_page_with_a_meaning():
    from tracktale.schema.derive import columns
    from tracktale.schema.records import TrialRecord

    reference = _reference_module()
    page = reference.render()
    docs = reference.attribute_docs(TrialRecord)
    for column in columns(TrialRecord):
        assert f"| `{column.name}` |" in page
        assert docs.get(column.name), f"TrialRecord.{column.name} has no description"


def test_types_are_read_from_the_annotations():
    from typing import Annotated, Literal

    reference = _reference_module()
    assert reference.type_name(Annotated[int | None, "x"]) == ("int", True)
    assert reference.type_name(Literal["a", "b"]) == ("one of `a`, `b`", False)
    assert reference.type_name(list[float]) == ("list[float]", False)
