"""CSV export of a stimulus set for experimenters to review, and its exact inverse.

One row per item. Condition factors get a column each (``condition.complexity``, ...); nested
ground truth, chat messages and metadata are JSON in their cells. Empty optional cells mean
"none". :func:`read_items_csv` rebuilds the very same items (their ids are re-checked), which
the tests use to prove nothing is lost.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable
from typing import Any

from tracktale.atomic import atomic_write
from tracktale.errors import TracktaleError
from tracktale.item import Item, item_from_dict

_TEXT_COLUMNS = ("context", "question", "answer")
_CHOICE_COLUMNS = ("prefix", "good", "bad", "neutral_prefix", "question")
_JSON_COLUMNS = ("messages", "truth", "meta")


def _condition_cell(name: str, value: Any) -> str:
    if isinstance(value, str):
        try:
            misread = not isinstance(json.loads(value), str)
        except json.JSONDecodeError:
            misread = False
        if misread:
            raise TracktaleError(f"condition {name}={value!r} would read back as a number")
        return value
    return json.dumps(value)


def _parse_condition_cell(text: str) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    return value if isinstance(value, int | float | bool) else text


def write_items_csv(items: Iterable[Item], path: str | os.PathLike[str]) -> int:
    """Write items as CSV (UTF-8 with a byte-order mark, so spreadsheets read it right).

    Returns:
        The number of rows written.
    """
    items = list(items)
    factors = sorted({name for item in items for name in item.condition})
    header = [
        "item_id",
        "paradigm",
        "role",
        *(f"condition.{f}" for f in factors),
        *_TEXT_COLUMNS,
        *(f"choice.{c}" for c in _CHOICE_COLUMNS),
        "prompt",
        *_JSON_COLUMNS,
    ]
    with atomic_write(path, "w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for item in items:
            data = item.to_dict()
            choice = data["choice"] or {}
            writer.writerow(
                [
                    item.item_id,
                    item.paradigm,
                    item.role,
                    *(
                        _condition_cell(f, item.condition[f]) if f in item.condition else ""
                        for f in factors
                    ),
                    *(data[c] or "" for c in _TEXT_COLUMNS),
                    *(choice.get(c) or "" for c in _CHOICE_COLUMNS),
                    data["prompt"] or "",
                    *(
                        "" if data[c] is None else json.dumps(data[c], ensure_ascii=False)
                        for c in _JSON_COLUMNS
                    ),
                ]
            )
    return len(items)


def read_items_csv(path: str | os.PathLike[str]) -> list[Item]:
    """Read items back from :func:`write_items_csv` output.

    Raises:
        TracktaleError: Naming the row of the first cell that cannot be read.
    """
    with open(path, encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    items = []
    for number, row in enumerate(rows, start=2):
        try:
            items.append(item_from_dict(_row_to_dict(row)))
        except (TracktaleError, json.JSONDecodeError, KeyError) as error:
            raise TracktaleError(f"{path} row {number}: {error}") from None
    return items


def _row_to_dict(row: dict[str, str]) -> dict[str, Any]:
    choice = {c: row[f"choice.{c}"] or None for c in _CHOICE_COLUMNS}
    return {
        "item_id": row["item_id"],
        "paradigm": row["paradigm"],
        "role": row["role"],
        "condition": {
            key.removeprefix("condition."): _parse_condition_cell(value)
            for key, value in row.items()
            if key.startswith("condition.") and value != ""
        },
        "context": row["context"],
        "question": row["question"] or None,
        "answer": row["answer"],
        "choice": choice if choice["prefix"] is not None else None,
        "prompt": row["prompt"] or None,
        **{c: json.loads(row[c]) if row[c] else None for c in _JSON_COLUMNS},
    }
