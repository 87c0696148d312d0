"""Write docs/reference/records.md, every stored and exported record with its columns.

Each record is declared once, as a dataclass in :mod:`tracktale.schema`; this page is generated
from those declarations (the field's type from its annotation, its meaning from the class's
``Attributes:`` docstring), so it cannot drift from the code. Usage: ``python
scripts/records_reference.py`` (rewrite the page) or ``--check`` (exit 1 when it is stale);
tests/docs/test_records_reference.py fails when the page is stale.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "reference" / "records.md"

SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "Human study",
        "What the study server, lab mode and simulated participants store: one row per trial, "
        "per participant and per survey. `tracktale experiment export` writes these columns "
        "(the export adds derived tables; see the human-study guide).",
        (
            "tracktale.schema.records:TrialRecord",
            "tracktale.schema.records:WordRecord",
            "tracktale.schema.records:ParticipantRecord",
            "tracktale.schema.records:SurveyAnswers",
        ),
    ),
    (
        "Model results",
        "What `tracktale models score` stores per item and task: the identity and provenance "
        "columns of every row, then the task's own result record.",
        (
            "tracktale.schema.results:ResultIdentity",
            "tracktale.schema.results:ModelProvenance",
            "tracktale.schema.results:ModelDetails",
            "tracktale.schema.results:ImplicitResult",
            "tracktale.schema.results:ExplicitResult",
            "tracktale.schema.results:SequenceResult",
            "tracktale.schema.results:Judgement",
        ),
    ),
    (
        "Stimulus sets",
        "What a stimulus set's `manifest.json` records.",
        ("tracktale.schema.stimulus:Manifest",),
    ),
)

HEADER = """\
# Records and their columns

Every record tracktale stores or exports, generated from its declaration in
`tracktale.schema` by `python scripts/records_reference.py`; do not edit this page by hand (a
test fails when it is stale). A column marked *optional* may be empty (`None`/`NA`): the value
was not recorded, or the field came after the first release and older rows lack it. Closed
choices list their values.
"""


def load(path: str) -> type:
    """The class named ``module:Name``."""
    module_name, _, name = path.partition(":")
    module = __import__(module_name, fromlist=[name])
    return typing.cast(type, getattr(module, name))


def _bare(hint: Any) -> Any:
    while typing.get_origin(hint) is Annotated:
        hint = typing.get_args(hint)[0]
    return hint


def type_name(hint: Any) -> tuple[str, bool]:
    """A readable type for ``hint`` and whether it admits ``None``."""
    hint = _bare(hint)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        members = [m for m in typing.get_args(hint) if m is not type(None)]
        names = [type_name(m)[0] for m in members]
        return " or ".join(names), len(members) < len(typing.get_args(hint))
    if origin is Literal:
        return "one of " + ", ".join(f"`{v}`" for v in typing.get_args(hint)), False
    if origin is not None:
        args = ", ".join(type_name(a)[0] for a in typing.get_args(hint))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]", False
    return getattr(hint, "__name__", str(hint)), False


def attribute_docs(cls: type) -> dict[str, str]:
    """Field descriptions from the ``Attributes:`` sections of ``cls`` and its bases."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        doc = inspect.cleandoc(klass.__dict__.get("__doc__") or "")
        section = re.split(r"^Attributes:\s*$", doc, maxsplit=1, flags=re.M)
        if len(section) < 2:
            continue
        name = None
        for line in section[1].splitlines():
            match = re.match(r"^    (\w+)(?: \([^)]*\))?: (.*)$", line)
            if match:
                name = match.group(1)
                found[name] = match.group(2).strip()
            elif name and line.startswith("        "):
                found[name] += " " + line.strip()
            elif line.strip() and not line.startswith(" "):
                break
    return found


def _cell(text: str) -> str:
    text = re.sub(r":(?:class|data|func|mod|meth|attr):`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`").replace("|", "\\|")


def record_section(cls: type) -> list[str]:
    """The heading, summary and column table of one record."""
    summary = inspect.cleandoc(cls.__doc__ or "").split("\n\n")[0].replace("\n", " ")
    lines = [f"### `{cls.__name__}`", "", _cell(summary), ""]
    lines += ["| column | type | meaning |", "|---|---|---|"]
    hints = typing.get_type_hints(cls, include_extras=True)
    docs = attribute_docs(cls)
    for field in dataclasses.fields(cls):
        kind, optional = type_name(hints[field.name])
        has_default = (
            field.default is not dataclasses.MISSING
            or field.default_factory is not dataclasses.MISSING
        )
        if optional or has_default:
            kind += " (optional)" if optional else ""
        meaning = docs.get(field.name, "")
        twin = field.name.removesuffix("_bad") + "_good"
        if not meaning and field.name.endswith("_bad") and twin in docs:
            meaning = f"As `{twin}`, for the bad continuation."
        lines.append(f"| `{field.name}` | {_cell(kind)} | {_cell(meaning)} |")
    return [*lines, ""]


def render() -> str:
    """The whole page."""
    lines = [HEADER]
    for title, intro, paths in SECTIONS:
        lines += [f"## {title}", "", intro, ""]
        for path in paths:
            lines += record_section(load(path))
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    """Rewrite the page, or with ``--check`` say whether it is current."""
    text = render()
    if "--check" in argv:
        current = PAGE.exists() and PAGE.read_text(encoding="utf-8") == text
        if not current:
            print("docs/reference/records.md is stale: run python scripts/records_reference.py")
        return 0 if current else 1
    temporary = PAGE.with_suffix(".md.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(PAGE)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
