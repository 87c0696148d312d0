r"""Validation of request bodies, in one place: JSON, types, sizes, allowed values, text.

Every API endpoint (and the lab mode, which writes through the same rules) declares its body
as one of the schemas below and calls :func:`validate` on what :func:`parse_json` decoded;
anything else is refused with :class:`ApiError` (HTTP 4xx and a one-line message naming the
field). The trial and survey bodies are derived from the records in :mod:`tracktale.schema`
(the fields marked ``Sent``, with their limits); the session, consent and serve bodies are
declared here the same way. Nothing else in the study checks a body's shape.

Text rules, for every string of every body: it must be valid Unicode (a lone surrogate such
as ``"\udfff"`` cannot be stored or exported: 422), and a field that holds an answer may not
be blank (only whitespace: 422). Other characters (NUL, bidirectional overrides, CR/LF) are
stored as given; exports make them safe (:mod:`.export`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pydantic

from tracktale.schema import SurveyAnswers, TrialRecord, WordRecord, first_problem, request_model
from tracktale.schema.derive import Problem, base_type, choices, hints, unknown_fields
from tracktale.schema.fields import IDENTIFIER, MAX_MS, Sent, number, text

__all__ = [
    "CONSENT_FIELDS",
    "IDENTIFIER",
    "MAX_MS",
    "SERVE_FIELDS",
    "SESSION_FIELDS",
    "SURVEY_FIELDS",
    "TRIAL_FIELDS",
    "WORD_FIELDS",
    "ApiError",
    "Body",
    "is_valid_unicode",
    "parse_json",
    "validate",
    "validate_words",
]


class ApiError(Exception):
    """A request the server refuses, with the HTTP status and a message for the client."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


class Body(Mapping[str, Any]):
    """A request body's schema: the fields of a record the browser sends, by name."""

    def __init__(self, record: type) -> None:
        self.record = record
        self.model = request_model(record)

    def __getitem__(self, name: str) -> Any:
        return self.model.model_fields[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.model.model_fields)

    def __len__(self) -> int:
        return len(self.model.model_fields)


@dataclass(frozen=True)
class SessionRequest:
    """``POST /api/session``: who is starting (or resuming) a session."""

    prolific_pid: Annotated[str, Sent(*text(pattern=IDENTIFIER))]
    study_id: Annotated[str | None, Sent(*text(pattern=IDENTIFIER))] = None
    session_id: Annotated[str | None, Sent(*text(pattern=IDENTIFIER))] = None
    source: Annotated[Literal["online", "simulated"], Sent()] = "online"
    preview: Annotated[str | None, Sent(*text(pattern=IDENTIFIER))] = None
    """The study's preview key, from the preview link (:mod:`.links`)."""


@dataclass(frozen=True)
class ConsentRequest:
    """``POST /api/consent``: the answer to the consent form."""

    consent: Annotated[bool, Sent()]


@dataclass(frozen=True)
class ServeRequest:
    """``POST /api/serve``: the trial whose content to hand out."""

    trial_index: Annotated[int, Sent(*number(minimum=0, maximum=10_000))]


SESSION_FIELDS = Body(SessionRequest)
CONSENT_FIELDS = Body(ConsentRequest)
SERVE_FIELDS = Body(ServeRequest)
TRIAL_FIELDS = Body(TrialRecord)
SURVEY_FIELDS = Body(SurveyAnswers)
WORD_FIELDS = Body(WordRecord)
MAX_WORDS = 2000
"""Most words one trial's answer may carry (``words``: a story read word by word)."""


def parse_json(raw: bytes) -> Any:
    """Decode a JSON body.

    Raises:
        ApiError: 400 for anything that is not JSON, including bodies nested too deeply
            to decode (Python's decoder would raise ``RecursionError``).
    """
    try:
        return json.loads(raw)
    except RecursionError:
        raise ApiError(400, "the body is nested too deeply") from None
    except (ValueError, TypeError):  # includes undecodable bytes
        raise ApiError(400, "the body is not valid JSON") from None


def validate(body: Any, schema: Body) -> dict[str, Any]:
    """Check a decoded JSON body against a schema.

    Returns:
        The known fields that are present (absent optional fields are left out), in the
        schema's order; numbers declared ``float`` are floats.

    Raises:
        ApiError: 400 naming the first problem (not an object, unknown, missing or invalid);
            422 for text that is not valid Unicode or an answer that is blank.
    """
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    unknown = unknown_fields(schema.model, body)
    if unknown:
        raise ApiError(400, f"unknown field {_printable(unknown[0])[:40]!r}")
    try:
        checked = schema.model.model_validate(body)
    except pydantic.ValidationError as error:
        problem = first_problem(error)
        status, phrase = _describe(schema, problem)
        raise ApiError(status, f"field {problem.field!r} {phrase}") from None
    return {name: getattr(checked, name) for name in schema if name in body}


def validate_words(body: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Split a trial's body into the trial and its ``words`` (a story read word by word).

    Returns:
        The body without ``words``, and each word as :data:`WORD_FIELDS` validates it (an
        empty list when the body has none).

    Raises:
        ApiError: 400 naming the first problem: ``words`` is not a list of 1 to
            :data:`MAX_WORDS` objects, or a word is invalid (``words[3]: field ...``) or
            repeats the position of another.
    """
    if not isinstance(body, dict) or "words" not in body:
        return body, []
    rest = {name: value for name, value in body.items() if name != "words"}
    given = body["words"]
    if not isinstance(given, list) or not 1 <= len(given) <= MAX_WORDS:
        raise ApiError(400, f"field 'words' must be a list of 1 to {MAX_WORDS} words")
    checked, positions = [], set()
    for index, word in enumerate(given):
        try:
            checked.append(validate(word, WORD_FIELDS))
        except ApiError as error:
            raise ApiError(error.status, f"words[{index}]: {error.message}") from None
        if checked[-1]["word_index"] in positions:
            raise ApiError(400, f"words[{index}]: field 'word_index' repeats another word's")
        positions.add(checked[-1]["word_index"])
    return rest, checked


def is_valid_unicode(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (no lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


_KIND_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
_UNPROCESSABLE = {"string_unicode": "is not valid Unicode (a lone surrogate)", "blank": "is blank"}


def _describe(schema: Body, problem: Problem) -> tuple[int, str]:
    """The status and the message's predicate for the first problem of a body."""
    if problem.kind in _UNPROCESSABLE:
        return 422, _UNPROCESSABLE[problem.kind]
    hint = hints(schema.record)[problem.field]
    kind, context = base_type(hint), problem.context
    if problem.kind == "missing":
        return 400, "is missing"
    if problem.kind == "null":
        return 400, "must not be null"
    if problem.kind == "literal_error" and type(problem.value) is kind:
        allowed = ", ".join(str(choice) for choice in choices(hint) or ())
        return 400, f"must be one of: {allowed}"
    if problem.kind.endswith("_type") or problem.kind in ("int_from_float", "literal_error"):
        return 400, f"must be {_KIND_NAMES.get(kind, 'a string')}"
    phrases = {
        "finite_number": "must be a finite number",
        "greater_than_equal": f"must be at least {context.get('ge', 0):g}",
        "less_than_equal": f"must be at most {context.get('le', 0):g}",
        "string_too_long": f"is longer than {context.get('max_length')} characters",
        "too_long": f"is longer than {context.get('max_length')} characters",
        "text_format": "has an invalid format",
        "probed_values": "is not a JSON list of 1 to "
        f"{context.get('most')} distinct {{variable, value}} objects",
    }
    return 400, phrases.get(problem.kind, "is invalid")
