"""``tracktale stimuli export SET --format pcibex``: an imported set as a PCIbex-ready table.

Writes two files into the output folder:

- ``items.csv`` (UTF-8 without a byte-order mark, which PCIbex would read into the first
  column's name): one row per item x condition with PCIbex's column names. ``Group`` holds the
  test rows' lists (empty on fillers and practice rows; PennController subsets a table by a
  column named ``Group`` or ``List``), ``Item`` the item's label and ``Label`` its type
  (``test``, ``filler``, ``practice``: PennController labels each trial with it, so
  ``Sequence("practice", randomize(anyOf("test", "filler")))`` orders them). Then a column per
  factor (named after it), ``Text`` (or ``Screen1``, ``Screen2``, ...), ``Regions``,
  ``Question``, ``Answer``, ``Option1``, ``Option2``, ..., ``Prefix``, ``Good``, ``Bad`` and
  ``Prompt``, each only where the set uses it.
- ``design.yaml``: the set's design with its columns renamed to those, so that
  ``tracktale stimuli import items.csv --design design.yaml`` gives the same items again
  (same ids, same ``items.jsonl``).

Fillers and practice rows have an empty ``Group``, which is a group of its own to
PennController: give them their own ``Template`` over the table filtered by ``Label``
(``GetTable("items.csv").filter("Label", "filler")``), as ``docs/how-to/import-items.md`` shows.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tracktale.atomic import atomic_write_text, make_folder
from tracktale.errors import TracktaleError
from tracktale.item import Item
from tracktale.stimuli.items.design import Columns, Design, ModelTasks, Types
from tracktale.stimulus_set import StimulusSet

KINDS = {"main": "test", "filler": "filler", "practice": "practice"}
"""An item's role -> the ``Label`` value of its row."""
_TAKEN = frozenset(
    {"group", "list", "item", "label", "text", "regions", "question", "answer"}
    | {"prefix", "good", "bad", "prompt"}
)
"""The exported columns' names (and PennController's ``List``), which no factor column takes."""


def export_pcibex(stimulus_set: StimulusSet, folder: Path) -> list[Path]:
    """Write ``items.csv`` and ``design.yaml`` into ``folder``; return their paths.

    Raises:
        TracktaleError: For a set that was not imported from a table.
    """
    config = stimulus_set.manifest.config
    if "design" not in config:
        raise TracktaleError("only an imported set has a design to export with")
    design = Design.model_validate(config["design"])
    order = config.get("factors", list(design.factors))
    design = design.model_copy(update={"factors": {name: design.factors[name] for name in order}})
    items = list(stimulus_set)
    columns = _columns(design, items, tuple(config.get("model_tasks", ())))
    header = list(columns)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for item in items:
        writer.writerow([columns[name](item) for name in header])
    target = make_folder(folder)
    table, design_path = target / "items.csv", target / "design.yaml"
    atomic_write_text(table, buffer.getvalue())
    exported = _exported_design(design, header, tuple(config.get("model_tasks", ())))
    atomic_write_text(
        design_path,
        yaml.safe_dump(exported, allow_unicode=True, sort_keys=False, default_flow_style=None),
    )
    return [table, design_path]


def _columns(
    design: Design, items: list[Item], tasks: tuple[str, ...]
) -> dict[str, Callable[[Item], str]]:
    """Column name -> what it holds of an item, for the columns the set uses."""
    fmt = design.format
    columns: dict[str, Callable[[Item], str]] = {
        "Group": lambda item: item.truth.get("list") or "",
        "Item": lambda item: item.truth["item"],
        "Label": lambda item: KINDS[item.role],
    }
    for name in design.factors:
        columns[_factor_column(name)] = _level(name)
    screens = max(len(item.truth["screens"]) for item in items)
    if screens == 1:
        columns["Text"] = lambda item: item.truth["screens"][0]
    for number in range(screens if screens > 1 else 0):
        columns[f"Screen{number + 1}"] = _nth("screens", number)
    if any(item.truth["segments_from"] == "regions" for item in items):
        columns["Regions"] = lambda item: _regions(item, f" {fmt.region_separator} ")
    if any(item.question for item in items):
        columns["Question"] = lambda item: item.question or ""
    responses = [item.truth["response"] for item in items]
    if "explicit" in tasks or any(r["kind"] != "none" for r in responses):
        columns["Answer"] = lambda item: fmt.answer_separator.join(
            item.truth["response"]["accepted"]
        )
    for number in range(max(len(r["options"]) for r in responses)):
        columns[f"Option{number + 1}"] = _nth("options", number)
    choices = [item.choice for item in items if item.choice is not None]
    if any(choice.prefix != item.context for item in items if (choice := item.choice)):
        columns["Prefix"] = lambda item: item.choice.prefix if item.choice else ""
    if choices or "implicit" in tasks:
        columns["Good"] = lambda item: item.choice.good.strip() if item.choice else ""
        columns["Bad"] = lambda item: item.choice.bad.strip() if item.choice else ""
    if "explicit" in tasks or any(item.prompt for item in items):
        columns["Prompt"] = lambda item: item.prompt or ""
    return columns


def _factor_column(name: str) -> str:
    # A factor called "group" or "list" would be taken for the list column by PennController.
    taken = name.lower() in _TAKEN or re.fullmatch(r"(screen|option)\d+", name.lower())
    return f"{name}_factor" if taken else name


def _level(factor: str) -> Callable[[Item], str]:
    """An item's level of ``factor`` (``""`` where it has none)."""
    return lambda item: str(item.condition.get(factor, ""))


def _nth(what: str, index: int) -> Callable[[Item], str]:
    """An item's ``index``-th screen or option (``""`` where it has fewer)."""

    def cell(item: Item) -> str:
        values = item.truth["screens"] if what == "screens" else item.truth["response"]["options"]
        return str(values[index]) if index < len(values) else ""

    return cell


def _regions(item: Item, separator: str) -> str:
    if item.truth["segments_from"] != "regions":
        return ""
    return separator.join(item.context[start:end] for start, end in item.truth["segments"])


def _exported_design(design: Design, header: list[str], tasks: tuple[str, ...]) -> dict[str, Any]:
    """The design with its columns renamed to the exported table's."""
    has = set(header)
    screens = [name for name in header if name.startswith("Screen")]
    columns = Columns(
        item="Item",
        type="Label",
        group="Group" if "Group" in has else None,
        text=screens or "Text",
        regions="Regions" if "Regions" in has else None,
        question="Question" if "Question" in has else None,
        answer="Answer" if "Answer" in has else None,
        options=[name for name in header if name.startswith("Option")],
        prefix="Prefix" if "Prefix" in has else None,
        good="Good" if "Good" in has else None,
        bad="Bad" if "Bad" in has else None,
        prompt="Prompt" if "Prompt" in has else None,
    )
    factors = {
        name: factor.model_copy(update={"column": _factor_column(name)})
        for name, factor in design.factors.items()
    }
    exported = design.model_copy(
        update={
            "columns": columns,
            "types": Types(),
            "factors": factors,
            "format": design.format.model_copy(update={"delimiter": ",", "sheet": None}),
            "tasks": ModelTasks.model_validate(
                {"models": list(tasks), "max_new_tokens": design.tasks.max_new_tokens}
            ),
        }
    )
    return exported.model_dump(mode="json", exclude_defaults=True)
