"""The design file's reference page (``docs/reference/design-yaml.md``), made from its models.

Every key of :class:`~tracktale.stimuli.items.design.Design` and its sections is listed with
its type, default and description as declared, then the shipped example. The page is written
by ``python scripts/design_reference.py``; a test fails when it is stale.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from tracktale.stimuli.items import EXAMPLE_DIR
from tracktale.stimuli.items.design import Design, Factor

HEADER = """\
# The design file (`DESIGN.yaml`)

`tracktale stimuli import ITEMS --design DESIGN.yaml --out SET` reads an item table (CSV, TSV
or XLSX; one row per item x condition, as PCIbex's `Template` tables) and a design file that
says what its columns mean. This page lists every key of the design file, generated from its
declaration (`tracktale.stimuli.items.design`) by `python scripts/design_reference.py`; do not
edit it by hand (a test fails when it is stale). How to write a table and import it:
[docs/how-to/import-items.md](../how-to/import-items.md).

Only `factors` is required; every other key has the default shown. Unknown keys, values of the
wrong type and keys that disagree with each other are reported one a line, as
`design.yaml:LINE:COLUMN: problem`, and nothing is imported.
"""


def type_text(annotation: Any) -> str:
    """A type as the page words it (``text``, ``list of text``, `` `a` or `b` ``, ...)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_text(args[0])
    if origin in (typing.Union, types.UnionType):
        named = [type_text(arg) for arg in args if arg is not type(None)]
        return " or ".join(named) + (" or null" if type(None) in args else "")
    if origin is typing.Literal:
        return " or ".join(
            f"`{json.dumps(arg)[1:-1] if isinstance(arg, str) else arg}`" for arg in args
        )
    if origin is list:
        return f"list of {type_text(args[0])}"
    if origin is dict:
        return f"mapping of name to {type_text(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "section"
    plain = {str: "text", int: "integer", float: "number", bool: "true or false"}
    return plain.get(annotation, str(annotation))


def default_text(value: Any) -> str:
    """A default as YAML would spell it."""
    if value is PydanticUndefined:
        return "required"
    if isinstance(value, BaseModel):
        return "(section)"
    return f"`{json.dumps(value, ensure_ascii=False).replace('|', chr(92) + '|')}`"


def _rows(model: type[BaseModel], prefix: str) -> list[str]:
    rows = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        description = (field.description or "").replace("|", "\\|")
        kind = type_text(field.annotation).replace("|", "\\|")
        rows.append(
            f"| `{prefix}{name}` | {kind} | {default_text(field.default)} | {description} |"
        )
    return rows


def _doc(model: type[BaseModel]) -> str:
    return " ".join((model.__doc__ or "").split())


def reference_markdown() -> str:
    """The whole page."""
    lines = [HEADER, "## Top-level keys", "", *_rows(Design, "")]
    for name, field in Design.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            lines += ["", f"## `{name}`", "", _doc(annotation), "", *_rows(annotation, f"{name}.")]
        elif name == "factors":
            lines += [
                "",
                "## `factors`",
                "",
                "Each factor is a key, its name (letters, digits, `_`, `.`, `-`), holding these "
                "keys. The Latin-square lists follow from `within_items` and "
                "`within_participants` (the rule: `tracktale.stimuli.items.lists`, and "
                "[the how-to](../how-to/import-items.md)).",
                "",
                *_rows(Factor, "factors.NAME."),
            ]
    example = (EXAMPLE_DIR / "design.yaml").read_text(encoding="utf-8")
    lines += [
        "",
        "## Example",
        "",
        "The shipped example (`stimuli/items/example/design.yaml`, beside its `items.csv`):",
        "",
        "```yaml",
        example.rstrip(),
        "```",
    ]
    return "\n".join(lines) + "\n"
