"""The design file of an imported item table (``DESIGN.yaml``), declared once as pydantic models.

The design says what each column of the table means (:class:`Columns`), which values of the
type column mark test, filler and practice rows (:class:`Types`), the factors with their levels
and whether each varies within participants and within items (:class:`Factor`), details of the
table's format (:class:`TableFormat`), how answers are judged (:class:`Scoring`), the model tasks
(:class:`ModelTasks`), the timing (:class:`Timing`), the participant-facing texts
(:class:`Texts`) and how accurate simulated participants are (:class:`Simulation`).
``docs/reference/design-yaml.md`` is generated from these declarations
(:mod:`tracktale.stimuli.items.reference`); a test keeps it current.

:func:`load_design` reads the file and reports every problem on a line of its own naming the
file, the line and the column of the offending key (``design.yaml:7:3: unknown key
'columns.answr' (did you mean 'answer'?)``).
"""

from __future__ import annotations

import difflib
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic
import yaml
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from tracktale.errors import InputProblems, TracktaleError
from tracktale.scorer import TASKS
from tracktale.stimuli.items.payload import MatchRule
from tracktale.stimuli.items.segment import default_segmenter, segmenter_names

ColumnName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Level = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
FactorName = Annotated[str, StringConstraints(pattern=r"^\w[\w.-]*$")]
LanguageTag = Annotated[str, StringConstraints(pattern=r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")]
ModelTask = Literal["implicit", "explicit", "sequence"]
Milliseconds = Annotated[int, Field(ge=500, le=600_000)]
PROMPT_FIELDS = ("text", "question", "options")
"""The placeholders a prompt template may use: ``{text}``, ``{question}``, ``{options}``."""
RTL_LANGUAGES = frozenset(
    {"ar", "arc", "ckb", "dv", "fa", "he", "iw", "ps", "sd", "ug", "ur", "yi"}
)
"""Primary language subtags written right to left (``direction: auto`` reads them so)."""
RTL_SCRIPTS = frozenset({"arab", "hebr", "syrc", "thaa", "nkoo", "adlm", "rohg"})


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)


class Columns(_Section):
    """Which column of the table holds what (the names of the table's header)."""

    item: ColumnName = Field(
        default="item",
        description="The item's label; the rows of one item (its conditions) share it.",
    )
    type: ColumnName | None = Field(
        default=None,
        description="Marks each row as a test, filler or practice item (the values `types` "
        "names). null: every row is a test item.",
    )
    group: ColumnName | None = Field(
        default=None,
        description="The counterbalancing list of each row (PCIbex's `Group` or `List`); a "
        "filler or practice row with an empty cell is in every list. null: Latin-square lists "
        "are built from item x condition.",
    )
    text: ColumnName | list[ColumnName] = Field(
        default="text",
        description="The text the participant reads: one column, or a list of columns read "
        "one screen after another (empty screens are left out).",
    )
    regions: ColumnName | None = Field(
        default=None,
        description="The text cut into regions with `format.region_separator` "
        "(`The dog | that barked | ran`), for region-by-region reading and per-region "
        "surprisal. null (or an empty cell): words from the language's segmenter.",
    )
    question: ColumnName | None = Field(
        default=None, description="A question shown after the text (comprehension, completion)."
    )
    answer: ColumnName | None = Field(
        default=None,
        description="The answers accepted for a typed response, separated by "
        "`format.answer_separator` (`cat|kitten`); with `options`, the right option.",
    )
    options: list[ColumnName] = Field(
        default=[],
        description="Columns holding the forced-choice options, in order (empty cells are "
        "left out); a row with options is a forced-choice trial, one without a typed one.",
    )
    prefix: ColumnName | None = Field(
        default=None,
        description="For the models' implicit task: the text both continuations follow. "
        "null: the text the participant reads.",
    )
    good: ColumnName | None = Field(
        default=None, description="The continuation that should be more probable (implicit task)."
    )
    bad: ColumnName | None = Field(
        default=None, description="The continuation that should be less probable (implicit task)."
    )
    prompt: ColumnName | None = Field(
        default=None,
        description="The models' explicit prompt, judged against `answer` like a typed "
        "response. Or use `tasks.prompt_template`.",
    )

    def text_columns(self) -> list[str]:
        """The text's columns, one per screen."""
        return [self.text] if isinstance(self.text, str) else list(self.text)

    def named(self) -> Iterator[tuple[str, str]]:
        """``(design key, column)`` for every column the section names."""
        for key in type(self).model_fields:
            value = getattr(self, key)
            if isinstance(value, str):
                yield f"columns.{key}", value
            elif isinstance(value, list):
                yield from ((f"columns.{key}.{i}", column) for i, column in enumerate(value))


class Types(_Section):
    """The values of the type column that mark each kind of row."""

    test: Level = Field(default="test", description="A test (experimental) item: analysed.")
    filler: Level = Field(
        default="filler", description="A filler: shown to people, never analysed."
    )
    practice: Level = Field(
        default="practice", description="A practice item, before the test items."
    )


class Factor(_Section):
    """One factor of the design."""

    column: ColumnName | None = Field(
        default=None, description="Its column. null: the factor's name."
    )
    levels: Annotated[list[Level], Field(min_length=2)] = Field(
        description="Its levels, in order (the first is the reference level)."
    )
    within_participants: bool = Field(
        default=True,
        description="Every participant sees every level. False: each list (so each "
        "participant) sees one level only.",
    )
    within_items: bool = Field(
        default=True,
        description="Every item comes in every level (one row per level). False: each item "
        "has one level.",
    )

    @field_validator("levels")
    @classmethod
    def _distinct(cls, levels: list[str]) -> list[str]:
        repeated = [level for index, level in enumerate(levels) if level in levels[:index]]
        if repeated:
            raise ValueError(f"the level {repeated[0]!r} is listed twice")
        return levels


class TableFormat(_Section):
    """How the table is written."""

    delimiter: Literal[",", ";", "\t", "|"] | None = Field(
        default=None,
        description="The field delimiter of a CSV/TSV file. null: tab for .tsv/.tab, else "
        "whichever of `,` `;` tab the header line holds most of.",
    )
    sheet: str | None = Field(
        default=None, description="The sheet of an XLSX file. null: the first."
    )
    answer_separator: Annotated[str, Field(min_length=1)] = Field(
        default="|", description="Separates the answers accepted in one answer cell."
    )
    region_separator: Annotated[str, Field(min_length=1)] = Field(
        default="|", description="Separates the regions in a region cell."
    )
    screen_separator: str = Field(
        default=" ", description="Joins the screens into the one text models read."
    )
    continuation_separator: str = Field(
        default=" ",
        description="Put between the prefix and a continuation that does not start with "
        'whitespace (`""` for languages written without spaces).',
    )


class Scoring(_Section):
    """How a response is judged (people's typed answers and options, models' generations)."""

    match: MatchRule = Field(
        default="exact",
        description="`exact`: the response's first non-blank line, normalised (NFC, case, "
        "whitespace, punctuation at the ends), equals an accepted answer; `contains`: the "
        "answer's words occur in the response.",
    )


class ModelTasks(_Section):
    """What language models do with the items."""

    models: list[ModelTask] | None = Field(
        default=None,
        description="The model tasks: `implicit` (the good vs the bad continuation), "
        "`explicit` (generate an answer to the prompt) and `sequence` (the text's "
        "log-probability and per-word surprisal). null: every task the columns allow.",
    )
    prompt_template: str | None = Field(
        default=None,
        description="The explicit prompt built from each row: `{text}`, `{question}` and "
        "`{options}` (comma-separated) are filled in. Instead of `columns.prompt`.",
    )
    max_new_tokens: Annotated[int, Field(ge=1, le=4096)] | None = Field(
        default=None, description="The generation budget of the explicit task. null: 16 tokens."
    )


class Timing(_Section):
    """The human study's time limits (null: the study server's defaults)."""

    reading_ms: Milliseconds | None = Field(default=None, description="Time to read the text.")
    response_ms: Milliseconds | None = Field(default=None, description="Time to respond.")
    feedback_ms: Milliseconds | None = Field(default=None, description="Practice feedback.")


class Texts(_Section):
    """The study's own participant-facing words, in the study's language.

    The hook for localisation: the buttons, timer, consent and error-page texts come from the
    locale catalogue of ``language``; these are the texts only the researcher can write.
    """

    title: str | None = Field(default=None, description="The study's title (the browser tab).")
    instructions: str | None = Field(
        default=None, description="Shown before the first trial (Markdown)."
    )
    question: str | None = Field(
        default=None, description="The question of a trial whose row has none (`Type the answer.`)."
    )


Probability = Annotated[float, Field(gt=0.0, lt=1.0)]
DEFAULT_LEVEL_EFFECT = -0.5
"""Simulated people: log-odds each further level of a factor adds when no effects are given."""


class Simulation(_Section):
    """Simulated participants (`tracktale experiment simulate`): how accurate they are.

    Made-up people for trying the study and the analysis out before anyone takes part; their
    accuracy follows these numbers, not anything real.
    """

    accuracy: Probability = Field(
        default=0.85,
        description="P(correct) of an average attentive participant on a test item whose "
        "factors are all at their first level.",
    )
    effects: dict[FactorName, dict[Level, float]] | None = Field(
        default=None,
        description="Log-odds a factor's level adds to that accuracy (`{movement: {moved: "
        "-0.8}}`; levels not named add 0). null: each level after a factor's first adds "
        f"{DEFAULT_LEVEL_EFFECT} more than the one before (a made-up effect for the report to "
        "find); `{}`: no effects.",
    )
    filler_accuracy: Probability = Field(
        default=0.92, description="P(correct) of an attentive participant on a filler."
    )

    def level_effects(self, factors: dict[str, Factor]) -> dict[str, dict[str, float]]:
        """Factor -> level -> log-odds, with the null default spelled out."""
        if self.effects is not None:
            return {name: dict(levels) for name, levels in self.effects.items()}
        return {
            name: {level: DEFAULT_LEVEL_EFFECT * index for index, level in enumerate(f.levels)}
            for name, f in factors.items()
        }


class Design(_Section):
    """The whole design file."""

    language: LanguageTag = Field(
        default="en",
        description="The items' language, a BCP 47 tag (`en`, `nl`, `pl`, `he`, `ar`).",
    )
    direction: Literal["auto", "ltr", "rtl"] = Field(
        default="auto",
        description="The text's direction. `auto`: right to left for Arabic, Hebrew, "
        "Persian, Urdu (...) and for Arabic or Hebrew script tags, else left to right.",
    )
    segmenter: str | None = Field(
        default=None,
        description="The word segmenter (`whitespace`, `characters` or one registered by a "
        "plug-in). null: the language's default (`characters` for zh and ja, else "
        "`whitespace`).",
    )
    columns: Columns = Field(default=Columns(), description="Which column holds what.")
    types: Types = Field(default=Types(), description="The values of the type column.")
    factors: Annotated[dict[FactorName, Factor], Field(min_length=1)] = Field(
        description="The factors by name, each with its column and levels."
    )
    format: TableFormat = Field(default=TableFormat(), description="How the table is written.")
    scoring: Scoring = Field(default=Scoring(), description="How responses are judged.")
    tasks: ModelTasks = Field(default=ModelTasks(), description="What the models do.")
    timing: Timing = Field(default=Timing(), description="The human study's time limits.")
    texts: Texts = Field(default=Texts(), description="The participant-facing texts.")
    simulation: Simulation = Field(
        default=Simulation(), description="How accurate simulated participants are."
    )

    @property
    def resolved_direction(self) -> Literal["ltr", "rtl"]:
        """The direction, with ``auto`` decided by the language tag."""
        if self.direction != "auto":
            return self.direction
        parts = self.language.lower().split("-")
        rtl = parts[0] in RTL_LANGUAGES or any(part in RTL_SCRIPTS for part in parts[1:])
        return "rtl" if rtl else "ltr"

    @property
    def resolved_segmenter(self) -> str:
        """The segmenter named, else the language's default."""
        return self.segmenter or default_segmenter(self.language)

    def factor_column(self, name: str) -> str:
        """The column of the factor ``name``."""
        return self.factors[name].column or name

    def model_tasks(self) -> tuple[str, ...]:
        """The model tasks: those declared, else every one the columns allow."""
        if self.tasks.models is not None:
            return tuple(task for task in TASKS if task in self.tasks.models)
        allowed = {"sequence"}
        if self.columns.good and self.columns.bad:
            allowed.add("implicit")
        if (self.columns.prompt or self.tasks.prompt_template) and self.columns.answer:
            allowed.add("explicit")
        return tuple(task for task in TASKS if task in allowed)


def design_problems(design: Design) -> list[tuple[tuple[str, ...], str]]:
    """What the types cannot check: the keys' agreement with each other.

    Returns:
        ``(key path, problem)`` pairs, in key order.
    """
    problems: list[tuple[tuple[str, ...], str]] = []
    columns = design.columns
    if isinstance(columns.text, list) and not columns.text:
        problems.append((("columns", "text"), "needs at least one column"))
    if bool(columns.good) != bool(columns.bad):
        given = "good" if columns.good else "bad"
        problems.append((("columns", given), "the implicit task needs both good and bad"))
    if columns.options and not columns.answer:
        problems.append(
            (("columns", "options"), "forced choice needs columns.answer (the right option)")
        )
    if len(columns.options) == 1:
        problems.append((("columns", "options"), "forced choice needs at least two option columns"))
    if columns.prompt and design.tasks.prompt_template:
        problems.append((("tasks", "prompt_template"), "give columns.prompt or this, not both"))
    problems += _template_problems(design)
    problems += _task_problems(design)
    problems += _column_clashes(design)
    problems += _simulation_problems(design)
    if design.segmenter is not None and design.segmenter not in segmenter_names():
        known = ", ".join(segmenter_names())
        problems.append(
            (("segmenter",), f"no segmenter {design.segmenter!r} (registered: {known})")
        )
    return problems


def _template_problems(design: Design) -> list[tuple[tuple[str, ...], str]]:
    template = design.tasks.prompt_template
    if template is None:
        return []
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as error:
        return [(("tasks", "prompt_template"), f"is not a template ({error})")]
    unknown = [name for name in fields if name not in PROMPT_FIELDS]
    if unknown:
        allowed = ", ".join(f"{{{name}}}" for name in PROMPT_FIELDS)
        return [(("tasks", "prompt_template"), f"has {{{unknown[0]}}}; it may use {allowed}")]
    return []


def _task_problems(design: Design) -> list[tuple[tuple[str, ...], str]]:
    tasks = design.tasks.models or []
    columns = design.columns
    problems: list[tuple[tuple[str, ...], str]] = []
    if "implicit" in tasks and not (columns.good and columns.bad):
        problems.append((("tasks", "models"), "implicit needs columns.good and columns.bad"))
    if "explicit" in tasks and not (columns.prompt or design.tasks.prompt_template):
        problems.append(
            (("tasks", "models"), "explicit needs columns.prompt or tasks.prompt_template")
        )
    if "explicit" in tasks and not columns.answer:
        problems.append((("tasks", "models"), "explicit needs columns.answer to judge the answer"))
    return problems


def _simulation_problems(design: Design) -> list[tuple[tuple[str, ...], str]]:
    problems: list[tuple[tuple[str, ...], str]] = []
    for name, levels in (design.simulation.effects or {}).items():
        if name not in design.factors:
            problems.append((("simulation", "effects", name), "is not a factor of the design"))
            continue
        for level in levels:
            if level not in design.factors[name].levels:
                known = ", ".join(design.factors[name].levels)
                problems.append(
                    (("simulation", "effects", name, level), f"is not a level ({known})")
                )
    return problems


def _column_clashes(design: Design) -> list[tuple[tuple[str, ...], str]]:
    used: dict[str, str] = {}
    problems = []
    named = list(design.columns.named())
    named += [(f"factors.{name}.column", design.factor_column(name)) for name in design.factors]
    for key, column in named:
        first = used.setdefault(column, key)
        if first != key:
            path = tuple(key.split("."))
            problems.append((path, f"column {column!r} is already {first}"))
    return problems


def load_design(path: str | Path) -> Design:
    """Read and check a design file.

    Raises:
        InputProblems: One line per problem, each naming the file, line and column.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise TracktaleError(f"cannot read {path}: {error.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise InputProblems(path, [f"{path}:{line}: not UTF-8 (save the file as UTF-8)"]) from None
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(error, "problem", None) or str(error)
        raise InputProblems(path, [f"{where}: not valid YAML ({problem})"]) from None
    if not isinstance(data, dict):
        raise InputProblems(path, [f"{path}:1:1: a design file is a mapping of keys"])
    problems = _duplicate_keys(path, root)
    if problems:
        raise InputProblems(path, problems)
    try:
        design = Design.model_validate(data)
    except pydantic.ValidationError as error:
        raise InputProblems(path, _validation_lines(path, root, error)) from None
    lines = [
        f"{_where(path, root, key)}: {'.'.join(key)} {problem}"
        for key, problem in design_problems(design)
    ]
    if lines:
        raise InputProblems(path, lines)
    return design


def _duplicate_keys(path: Path, node: yaml.Node | None, prefix: str = "") -> list[str]:
    found: list[str] = []
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value)
            if name in seen:
                mark = key.start_mark
                found.append(
                    f"{path}:{mark.line + 1}:{mark.column + 1}: {prefix}{name} is given twice"
                )
            seen.add(name)
            found += _duplicate_keys(path, value, f"{prefix}{name}.")
    elif isinstance(node, yaml.SequenceNode):
        for value in node.value:
            found += _duplicate_keys(path, value, prefix)
    return found


def _node_at(root: yaml.Node | None, key: tuple[Any, ...], *, at_key: bool) -> yaml.Node | None:
    """The node ``key`` leads to (its key's node with ``at_key``), or the deepest one found."""
    node = root
    for position, part in enumerate(key):
        last = position == len(key) - 1
        if isinstance(node, yaml.MappingNode):
            pair = next((pair for pair in node.value if str(pair[0].value) == str(part)), None)
            if pair is None:
                return node
            node = pair[0] if last and at_key else pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return node
            node = node.value[part]
        else:
            return node
    return node


def _where(
    path: Path, root: yaml.Node | None, key: tuple[Any, ...], *, at_key: bool = False
) -> str:
    node = _node_at(root, key, at_key=at_key)
    if node is None:
        return f"{path}:1:1"
    return f"{path}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"


def _validation_lines(
    path: Path, root: yaml.Node | None, error: pydantic.ValidationError
) -> list[str]:
    lines: list[str] = []
    seen: set[tuple[Any, ...]] = set()
    for detail in error.errors(include_url=False):
        key = tuple(part for part in detail["loc"] if not _is_type_tag(part))
        if key in seen:  # a value outside a union is one problem, not one per member
            continue
        seen.add(key)
        dotted = ".".join(str(part) for part in key)
        if detail["type"] == "extra_forbidden":
            message = f"unknown key {dotted!r}{_suggestion(key)}"
        elif detail["type"] == "missing":
            message = f"{dotted} is missing"
        else:
            message = f"{dotted}: {_phrase(detail)}"
        at_key = detail["type"] == "extra_forbidden"
        lines.append(f"{_where(path, root, key, at_key=at_key)}: {message}")
    return lines


def _is_type_tag(part: Any) -> bool:
    # pydantic names a union member in the location (`str`, `list[str]`, `literal[...]`).
    return isinstance(part, str) and (
        part in ("str", "int", "bool", "none") or "[" in part or part.startswith("constrained-")
    )


def _phrase(detail: Any) -> str:
    message = str(detail["msg"])
    message = message.removeprefix("Value error, ")
    return message[:1].lower() + message[1:]


def _suggestion(key: tuple[Any, ...]) -> str:
    section: type[BaseModel] = Design
    parts = [str(part) for part in key[:-1]]
    while parts:
        part = parts.pop(0)
        if section is Design and part == "factors":
            if not parts:
                return ""
            parts.pop(0)  # the factor's name
            section = Factor
            continue
        field = section.model_fields.get(part)
        annotation = None if field is None else field.annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return ""
        section = annotation
    close = difflib.get_close_matches(str(key[-1]), list(section.model_fields), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
