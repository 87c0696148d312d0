"""``tracktale stimuli import``: an item table and its design file -> a stimulus set.

One row is one item in one condition (PCIbex's convention). The importer reads the design
(:mod:`.design`) and the table (:mod:`.reader`), checks every row and then the rows together,
and reports *every* problem, one line each naming the file, the line and the column
(``items.csv:5: column 'answer': 'dog' is not among the options (cat, mouse)``); with any
problem nothing is written. The kinds of problem: a column the design names that the table
lacks, an unknown type or factor level, an empty item label, text or level, a forced choice
whose answer is not among its options, a continuation pair with one half, the same item and
condition twice, an item that lacks a condition of its within-item factors or changes a
between-item factor, a list that shows an item twice, regions that do not spell the text.

The set is content-hashed like a generated one (:mod:`tracktale.stimulus_set`); its manifest
records the design and the sha256 of both files, and the lists (:mod:`.lists`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import tracktale
from tracktale.errors import InputProblems
from tracktale.item import ChoicePair, Item
from tracktale.stimuli.items.design import Design, load_design
from tracktale.stimuli.items.lists import latin_square_list
from tracktale.stimuli.items.payload import ItemsTruth, Response, SegmentSource, design_cell
from tracktale.stimuli.items.reader import Row, Table, read_table
from tracktale.stimuli.items.segment import segment
from tracktale.stimulus_set import StimulusSet, build_stimulus_set

Kind = Literal["test", "filler", "practice"]
ROLES: dict[Kind, str] = {"test": "main", "filler": "filler", "practice": "practice"}
"""The kind of row -> the item's role (``main`` items are the analysed ones)."""
PARADIGM_NAME = "items"
VERSION = "1"
"""The importer's revision: bump it whenever the same files would give other items."""


@dataclass(frozen=True)
class Parsed:
    """One row, checked: everything an item is built from.

    Attributes:
        line: The row's line.
        kind: test, filler or practice.
        item: The item's label.
        levels: Factor -> level (every factor for a test row; those given for others).
        group: The list from the group column (``None``: none given).
        screens: The non-empty text cells, in order.
        segments: The word or region spans of the joined text, and where they came from.
        question: The question, if any.
        response: The human response.
        choice: The continuation pair, if any.
        prompt: The explicit prompt, if any.
    """

    line: int
    kind: Kind
    item: str
    levels: dict[str, str]
    group: str | None
    screens: list[str]
    segments: tuple[list[tuple[int, int]], SegmentSource]
    question: str | None
    response: Response
    choice: ChoicePair | None
    prompt: str | None


def import_table(source: str | Path, design_file: str | Path) -> StimulusSet:
    """Import an item table with its design.

    Raises:
        InputProblems: Every problem of the design, or of the table, one line each.
        TracktaleError: For a file that cannot be read.
    """
    source, design_file = Path(source), Path(design_file)
    design = load_design(design_file)
    table = read_table(source, delimiter=design.format.delimiter, sheet=design.format.sheet)
    problems = _missing_columns(table, design, design_file)
    if problems:
        raise InputProblems(source, problems)
    parsed = []
    found: list[tuple[int, str]] = []
    failed: set[str] = set()  # items with a bad row: their conditions are not all known
    for row in table.rows:
        record, row_problems = RowParser(table, design, row).parse()
        found += [(row.line, problem) for problem in row_problems]
        if record is not None:
            parsed.append(record)
        else:
            failed.add(row.cells.get(design.columns.item, ""))
    if not parsed and not found:
        found.append((2, f"{source}:2: the table has no rows"))
    found += _check_together(table, design, parsed, failed)
    if found:
        raise InputProblems(source, [problem for _, problem in sorted(found, key=lambda p: p[0])])
    lists = _lists(design, parsed)
    items = [_item(design, record, lists.get(index)) for index, record in enumerate(parsed)]
    return _assemble(items, design, table, design_file, sorted(set(lists.values()), key=_list_key))


def _missing_columns(table: Table, design: Design, design_file: Path) -> list[str]:
    named = list(design.columns.named())
    named += [(f"factors.{name}.column", design.factor_column(name)) for name in design.factors]
    header = ", ".join(name for name in table.header if name)
    return [
        f"{table.path}:1: column {column!r}: no such column ({design_file.name} names it as "
        f"{key}; the header has {header})"
        for key, column in named
        if column not in table.header
    ]


class RowParser:
    """Checks one row and collects its problems (each names the line and the column)."""

    def __init__(self, table: Table, design: Design, row: Row) -> None:
        self.table, self.design, self.row = table, design, row
        self.problems: list[str] = []

    def say(self, column: str | None, problem: str) -> None:
        """Record a problem of one cell (or of the whole row)."""
        self.problems.append(f"{self.table.where(self.row.line, column)} {problem}")

    def cell(self, column: str | None) -> str:
        """The cell of ``column`` (``""`` where the design names no such column)."""
        return "" if column is None else self.row.cells.get(column, "")

    def parse(self) -> tuple[Parsed | None, list[str]]:
        """The row's record, or ``None`` with its problems."""
        columns = self.design.columns
        kind = self._kind()
        item = self.cell(columns.item)
        if not item:
            self.say(columns.item, "the item label is empty")
        levels = self._levels(kind)
        group = self.cell(columns.group) or None
        if columns.group and kind == "test" and group is None:
            self.say(columns.group, "a test row needs its list")
        screens = [self.cell(column) for column in columns.text_columns()]
        screens = [screen for screen in screens if screen]
        if not screens:
            self.say(columns.text_columns()[0], "the text is empty")
        context = self.design.format.screen_separator.join(screens)
        segments = self._segments(context)
        response = self._response()
        choice = self._choice(kind, context)
        prompt = self._prompt(kind, context, response)
        if self.problems or kind is None or segments is None:
            return None, self.problems
        return Parsed(
            line=self.row.line,
            kind=kind,
            item=item,
            levels=levels,
            group=group,
            screens=screens,
            segments=segments,
            question=self.cell(columns.question) or None,
            response=response,
            choice=choice,
            prompt=prompt,
        ), []

    def _kind(self) -> Kind | None:
        column = self.design.columns.type
        if column is None:
            return "test"
        value = self.cell(column)
        types = self.design.types
        kinds: dict[str, Kind] = {
            types.test: "test",
            types.filler: "filler",
            types.practice: "practice",
        }
        if value in kinds:
            return kinds[value]
        known = ", ".join(kinds)
        self.say(column, f"{value!r} is not a type ({known}; see types: in the design)")
        return None

    def _levels(self, kind: Kind | None) -> dict[str, str]:
        levels = {}
        for name, factor in self.design.factors.items():
            column = self.design.factor_column(name)
            value = self.cell(column)
            allowed = ", ".join(factor.levels)
            if not value:
                if kind == "test":
                    self.say(column, f"the level of factor {name} is empty (levels: {allowed})")
            elif value not in factor.levels:
                self.say(column, f"{value!r} is not a level of factor {name} (levels: {allowed})")
            else:
                levels[name] = value
        return levels

    def _segments(self, context: str) -> tuple[list[tuple[int, int]], SegmentSource] | None:
        column = self.design.columns.regions
        cell = self.cell(column)
        if not cell:
            return segment(context, self.design.resolved_segmenter), "segmenter"
        regions = [part.strip() for part in cell.split(self.design.format.region_separator)]
        spans, problem = region_spans(context, [region for region in regions if region])
        if problem:
            self.say(column, problem)
            return None
        return spans, "regions"

    def _response(self) -> Response:
        columns, fmt = self.design.columns, self.design.format
        match = self.design.scoring.match
        options = [self.cell(column) for column in columns.options]
        options = [option for option in options if option]
        answer = self.cell(columns.answer)
        if not options:
            accepted = [part.strip() for part in answer.split(fmt.answer_separator)]
            accepted = [part for part in accepted if part]
            kind: Literal["typed", "none"] = "typed" if accepted else "none"
            return Response(kind=kind, accepted=accepted, options=[], match=match)
        if len(options) < 2:
            self.say(columns.options[0], "a forced choice needs at least two options")
        repeated = [option for i, option in enumerate(options) if option in options[:i]]
        if repeated:
            self.say(columns.options[0], f"the option {repeated[0]!r} is given twice")
        if not answer:
            self.say(columns.answer, "the right option is empty")
        elif answer not in options:
            self.say(columns.answer, f"{answer!r} is not among the options ({', '.join(options)})")
        return Response(kind="choice", accepted=[answer], options=options, match=match)

    def _choice(self, kind: Kind | None, context: str) -> ChoicePair | None:
        columns = self.design.columns
        if "implicit" not in self.design.model_tasks() or not (columns.good and columns.bad):
            return None
        good, bad = self.cell(columns.good), self.cell(columns.bad)
        if not good and not bad and kind != "test":
            return None
        for column, value in ((columns.good, good), (columns.bad, bad)):
            if not value:
                self.say(column, "the continuation is empty")
        if good and good == bad:
            self.say(columns.bad, "the good and the bad continuation are the same")
        prefix = self.cell(columns.prefix) if columns.prefix else context
        separator = self.design.format.continuation_separator
        if prefix:
            good, bad = (c if c[:1].isspace() else separator + c for c in (good, bad))
        return ChoicePair(prefix, good, bad)

    def _prompt(self, kind: Kind | None, context: str, response: Response) -> str | None:
        design = self.design
        if "explicit" not in design.model_tasks():
            return None
        template = design.tasks.prompt_template
        if template is not None:
            if response["kind"] == "none":
                return None
            fields = {"text": context, "question": self.cell(design.columns.question)}
            return template.format(**fields, options=", ".join(response["options"]))
        prompt = self.cell(design.columns.prompt)
        if not prompt and kind == "test" and response["kind"] != "none":
            self.say(design.columns.prompt, "the prompt is empty")
        if prompt and response["kind"] == "none":
            self.say(design.columns.answer, "the prompt needs an answer to judge the model's by")
        return prompt or None


def region_spans(context: str, regions: Sequence[str]) -> tuple[list[tuple[int, int]], str | None]:
    """The spans of ``regions`` in ``context``: in order, only whitespace between them.

    Returns:
        The spans, and ``None`` or the problem (the regions do not spell the text).
    """
    spans: list[tuple[int, int]] = []
    position = 0
    for number, region in enumerate(regions, start=1):
        start = position
        while start < len(context) and context[start].isspace():
            start += 1
        if not context.startswith(region, start):
            return spans, f"region {number} ({region!r}) is not the text's next part"
        spans.append((start, start + len(region)))
        position = start + len(region)
    if context[position:].strip():
        return spans, "the regions end before the text does"
    return spans, None


def _check_together(
    table: Table, design: Design, parsed: list[Parsed], failed: set[str]
) -> list[tuple[int, str]]:
    """The problems of rows taken together, each with its line."""
    problems = []
    seen: dict[tuple[str, str, tuple[tuple[str, str], ...]], int] = {}
    for record in parsed:
        key = (record.kind, record.item, tuple(sorted(record.levels.items())))
        if key in seen:
            condition = _condition_text(record.levels) or "no condition"
            problems.append(
                (
                    record.line,
                    (
                        f"{table.where(record.line, design.columns.item)} {record.kind} item "
                        f"{record.item!r} in {condition} is also on line {seen[key]}"
                    ),
                )
            )
        seen.setdefault(key, record.line)
    tests = [record for record in parsed if record.kind == "test"]
    problems += _condition_problems(table, design, [r for r in tests if r.item not in failed])
    if design.columns.group:
        problems += _group_problems(table, design, tests)
    return problems


def _condition_problems(table: Table, design: Design, tests: list[Parsed]) -> list[tuple[int, str]]:
    """Each item's missing conditions and changing between-item levels.

    Every item must come in every combination of its within-item factors' levels and keep its
    level of every between-item factor.
    """
    from tracktale.stimuli.items.lists import combinations

    within = [(name, f.levels) for name, f in design.factors.items() if f.within_items]
    between = [name for name, f in design.factors.items() if not f.within_items]
    wanted = combinations(within)
    by_item: dict[str, list[Parsed]] = {}
    for record in tests:
        by_item.setdefault(record.item, []).append(record)
    problems = []
    for label, records in by_item.items():
        first = records[0]
        where = table.where(first.line, design.columns.item)
        for name in between:
            varying = next((r for r in records if r.levels[name] != first.levels[name]), None)
            if varying is not None:
                problems.append(
                    (
                        first.line,
                        (
                            f"{where} item {label!r} has {name}={first.levels[name]} here and "
                            f"{name}={varying.levels[name]} on line {varying.line}, but {name} "
                            "varies between items (within_items: false)"
                        ),
                    )
                )
        have = {tuple(r.levels[name] for name, _ in within) for r in records}
        missing = [combo for combo in wanted if combo not in have]
        if missing:
            names = [name for name, _ in within]
            text = "; ".join(
                _condition_text(dict(zip(names, combo, strict=True))) for combo in missing
            )
            noun = "condition" if len(missing) == 1 else "conditions"
            problems.append((first.line, f"{where} item {label!r} lacks the {noun} {text}"))
    return problems


def _group_problems(table: Table, design: Design, tests: list[Parsed]) -> list[tuple[int, str]]:
    seen: dict[tuple[str | None, str], int] = {}
    problems = []
    for record in tests:
        key = (record.group, record.item)
        if key in seen:
            problems.append(
                (
                    record.line,
                    (
                        f"{table.where(record.line, design.columns.group)} list "
                        f"{record.group!r} shows item {record.item!r} twice (also on line "
                        f"{seen[key]})"
                    ),
                )
            )
        seen.setdefault(key, record.line)
    return problems


def _condition_text(levels: dict[str, str]) -> str:
    return ", ".join(f"{name}={level}" for name, level in levels.items())


def _lists(design: Design, parsed: list[Parsed]) -> dict[int, str]:
    """Row index -> its list (rows without one, as fillers and practice items: every list)."""
    if design.columns.group:
        return {
            index: record.group for index, record in enumerate(parsed) if record.group is not None
        }
    factors = design.factors
    rotating = [
        (n, f.levels) for n, f in factors.items() if f.within_items and f.within_participants
    ]
    splitting = [(n, f.levels) for n, f in factors.items() if not f.within_participants]
    between_items = [n for n, f in factors.items() if not f.within_items]
    positions: dict[str, int] = {}
    counts: dict[tuple[str, ...], int] = {}
    lists = {}
    for index, record in enumerate(parsed):
        if record.kind != "test":
            continue
        if record.item not in positions:
            cell = tuple(record.levels[name] for name in between_items)
            positions[record.item] = counts.get(cell, 0)
            counts[cell] = positions[record.item] + 1
        lists[index] = latin_square_list(
            rotating=rotating,
            splitting=splitting,
            levels=record.levels,
            position=positions[record.item],
        )
    return lists


def _list_key(list_id: str) -> tuple[int, str]:
    digits = list_id[1:] if list_id[:1] == "L" else ""
    return (int(digits), list_id) if digits.isdigit() else (1 << 30, list_id)


def _item(design: Design, record: Parsed, list_id: str | None) -> Item:
    spans, source = record.segments
    truth = ItemsTruth(
        item=record.item,
        list=list_id,
        screens=record.screens,
        response=record.response,
        segments=[[start, end] for start, end in spans],
        segmenter=design.resolved_segmenter,
        segments_from=source,
    )
    meta = {}
    if record.prompt is not None and design.tasks.max_new_tokens is not None:
        meta["max_new_tokens"] = design.tasks.max_new_tokens
    accepted = record.response["accepted"]
    return Item.create(
        paradigm=PARADIGM_NAME,
        role=ROLES[record.kind],
        condition={name: record.levels[name] for name in design.factors if name in record.levels},
        context=design.format.screen_separator.join(record.screens),
        question=record.question,
        answer=accepted[0] if accepted else "",
        choice=record.choice,
        prompt=record.prompt,
        messages=None if record.prompt is None else ({"role": "user", "content": record.prompt},),
        truth=dict(truth),
        meta=meta,
    )


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _assemble(
    items: list[Item], design: Design, table: Table, design_file: Path, lists: list[str]
) -> StimulusSet:
    config = {
        "protocol": "imported",
        "design": design.model_dump(mode="json"),
        # The manifest's JSON sorts keys: the factors' declared order is kept here.
        "factors": list(design.factors),
        "direction": design.resolved_direction,
        "segmenter": design.resolved_segmenter,
        "model_tasks": list(design.model_tasks()),
        "lists": lists,
        "source": {"file": table.path.name, "format": table.kind, "sha256": _sha256(table.path)},
        "design_file": {"file": design_file.name, "sha256": _sha256(design_file)},
    }
    return build_stimulus_set(
        items,
        paradigm=PARADIGM_NAME,
        protocol="imported",
        generator=__name__,
        generator_version=f"tracktale {tracktale.__version__}; {PARADIGM_NAME} {VERSION}",
        seed=0,
        config=config,
        design_cell=design_cell,
    )
