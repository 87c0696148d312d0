"""The locale catalogue: every participant-facing string of a study, one YAML file per language.

The catalogues ship in ``experiment/locales/`` (``en.yaml``, the reference, and ``nl.yaml``); a
study picks one with ``language:`` (``nl``, ``nl-BE``: the file of the tag or of its first
subtag) or brings its own file with ``locale:``. A value is a text, a list of paragraphs, or a
plural (a mapping from CLDR plural categories to texts, chosen by a number with Babel here and
``Intl.PluralRules`` in the page). ``{name}`` placeholders are filled where a text is used.

:func:`catalogue_problems` is the check every catalogue passes before it is used (and the one
the tests run on the shipped files): the same keys as the reference, no placeholder the
reference does not have, the right kind of value, the plural categories of the language.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from tracktale.errors import TracktaleError

LOCALES_DIR = Path(__file__).parent.parent / "locales"
"""The shipped catalogues, ``<language>.yaml``."""
REFERENCE_LANGUAGE = "en"
PLURAL_CATEGORIES = ("zero", "one", "two", "few", "many", "other")
"""CLDR's plural categories; a mapping with only these keys (``other`` among them) is a plural."""
Direction = Literal["ltr", "rtl"]
Value = str | list[str] | dict[str, str]
_PLACEHOLDER = re.compile(r"\{([A-Za-z_]+)\}")
_BRACES = re.compile(r"[{}]")


@dataclass(frozen=True)
class Catalogue:
    """One language's texts.

    Attributes:
        language: The language tag the texts are in (the file's name: ``en``, ``nl``).
        texts: Dotted key (``buttons.continue``) -> text, paragraphs or plural forms.
        source: The file read.
    """

    language: str
    texts: Mapping[str, Value]
    source: Path

    @property
    def name(self) -> str:
        """The language's own name (``Nederlands``)."""
        return self.text("meta.name")

    @property
    def direction(self) -> Direction:
        """``ltr`` or ``rtl``."""
        return "rtl" if self.text("meta.direction") == "rtl" else "ltr"

    def _get(self, key: str) -> Value:
        try:
            return self.texts[key]
        except KeyError:
            raise TracktaleError(f"{self.source}: no text {key!r}") from None

    def text(self, key: str, /, **values: Any) -> str:
        """A text with its placeholders filled.

        Raises:
            TracktaleError: If the key is missing or holds no single text.
        """
        value = self._get(key)
        if not isinstance(value, str):
            raise TracktaleError(f"{self.source}: {key!r} is not a single text")
        return fill(value, values)

    def paragraphs(self, key: str, /, **values: Any) -> list[str]:
        """A list of paragraphs (a single text is one paragraph), placeholders filled."""
        value = self._get(key)
        if isinstance(value, dict):
            raise TracktaleError(f"{self.source}: {key!r} is a plural, not paragraphs")
        items = [value] if isinstance(value, str) else value
        return [fill(item, values) for item in items]

    def plural(self, key: str, n: float, /, **values: Any) -> str:
        """The plural form of ``key`` for the number ``n`` (also filled in as ``{n}``)."""
        value = self._get(key)
        if not isinstance(value, dict):
            raise TracktaleError(f"{self.source}: {key!r} is not a plural")
        form = value.get(plural_category(self.language, n), value["other"])
        return fill(form, {"n": number_text(self.language, n), **values})

    def seconds(self, milliseconds: float) -> str:
        """A time limit as the instructions say it ("40 seconds", "40 seconden")."""
        return self.plural("time.seconds", milliseconds / 1000)

    def section(self, prefix: str) -> dict[str, Value]:
        """Every text under ``prefix.`` (the page's share of the catalogue)."""
        start = prefix + "."
        return {key: value for key, value in self.texts.items() if key.startswith(start)}


def fill(text: str, values: Mapping[str, Any]) -> str:
    """``text`` with each ``{name}`` whose value is given replaced (others left as they are)."""
    return _PLACEHOLDER.sub(
        lambda match: str(values[match.group(1)]) if match.group(1) in values else match.group(0),
        text,
    )


def plural_category(language: str, n: float) -> str:
    """The CLDR plural category of ``n`` in ``language``.

    Babel's rules; ``one`` for 1 and ``other`` else for a language Babel does not know.
    """
    rule = _plural_rule(language)
    if rule is None:
        return "one" if n == 1 else "other"
    return str(rule(n))


def plural_categories(language: str) -> frozenset[str]:
    """The plural categories ``language`` uses (always with ``other``)."""
    rule = _plural_rule(language)
    tags = frozenset({"one"}) if rule is None else frozenset(rule.tags)
    return tags | {"other"}


@functools.cache
def _plural_rule(language: str) -> Any:
    from babel import Locale, UnknownLocaleError

    try:
        return Locale.parse(language.replace("-", "_")).plural_form
    except (UnknownLocaleError, ValueError):
        return None


def number_text(language: str, n: float) -> str:
    """``n`` written as the language writes numbers (``1.5``, ``1,5``), without grouping."""
    from babel import UnknownLocaleError
    from babel.numbers import format_decimal

    try:
        return format_decimal(n, format="0.###", locale=language.replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        return f"{n:g}"


def shipped_languages() -> tuple[str, ...]:
    """The languages with a catalogue in :data:`LOCALES_DIR`."""
    return tuple(sorted(path.stem for path in LOCALES_DIR.glob("*.yaml")))


def catalogue_file(language: str) -> Path:
    """The shipped file for a language tag: ``nl-BE`` is ``nl-be.yaml``, else ``nl.yaml``.

    Raises:
        TracktaleError: If no catalogue of the language ships.
    """
    tag = language.lower()
    for candidate in (tag, tag.split("-")[0]):
        path = LOCALES_DIR / f"{candidate}.yaml"
        if path.is_file():
            return path
    raise TracktaleError(
        f"no locale catalogue for language {language!r} (shipped: "
        f"{', '.join(shipped_languages())}); write one and name it in the study file's "
        "locale: (docs/how-to/translate-a-study.md)"
    )


def load_catalogue(language: str = REFERENCE_LANGUAGE, file: str | Path | None = None) -> Catalogue:
    """The checked catalogue of ``language`` (or the study's own ``file``).

    Raises:
        TracktaleError: If there is none, or it fails :func:`catalogue_problems` (every
            problem on a line of its own).
    """
    path = Path(file) if file is not None else catalogue_file(language)
    return _load_checked(str(path.resolve()), language if file is not None else path.stem)


@functools.cache
def _load_checked(path: str, language: str) -> Catalogue:
    catalogue = read_catalogue(Path(path), language)
    if language == REFERENCE_LANGUAGE and Path(path) == LOCALES_DIR / "en.yaml":
        reference = catalogue
    else:
        reference = read_catalogue(LOCALES_DIR / f"{REFERENCE_LANGUAGE}.yaml", REFERENCE_LANGUAGE)
    problems = catalogue_problems(catalogue, reference)
    if problems:
        raise TracktaleError("\n".join(problems))
    return catalogue


def read_catalogue(path: Path, language: str) -> Catalogue:
    """Read a catalogue file as it is (unchecked; see :func:`catalogue_problems`).

    Raises:
        TracktaleError: If the file cannot be read or is not a mapping of texts.
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise TracktaleError(f"cannot read locale catalogue {path}: {error.strerror}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise TracktaleError(f"{path}{where}: not a valid YAML file") from None
    if not isinstance(data, dict):
        raise TracktaleError(f"{path}: a locale catalogue is a mapping of keys to texts")
    texts: dict[str, Value] = {}
    for key, value in _flatten(data, ""):
        if not _is_value(value):
            raise TracktaleError(f"{path}: {key!r} must be a text, a list of texts or plural forms")
        texts[key] = value
    return Catalogue(language=language, texts=texts, source=path)


def _flatten(data: Mapping[Any, Any], prefix: str) -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and not _is_plural(value):
            yield from _flatten(value, name + ".")
        else:
            yield name, value


def _is_plural(value: Mapping[Any, Any]) -> bool:
    return "other" in value and all(key in PLURAL_CATEGORIES for key in value)


def _is_value(value: Any) -> bool:
    if isinstance(value, str):
        return True
    if isinstance(value, list):
        return bool(value) and all(isinstance(item, str) for item in value)
    return isinstance(value, dict) and all(isinstance(item, str) for item in value.values())


def _kind(value: Value) -> str:
    return "plural" if isinstance(value, dict) else "list" if isinstance(value, list) else "text"


def _strings(value: Value) -> Sequence[str]:
    if isinstance(value, dict):
        return list(value.values())
    return [value] if isinstance(value, str) else value


def placeholders(value: Value) -> set[str]:
    """The ``{name}`` placeholders a value uses."""
    return {name for text in _strings(value) for name in _PLACEHOLDER.findall(text)}


TEMPLATE_HEADER = """\
# The participant-facing texts of a tracktale study in {name} ({language}). Translate every
# value and keep every key; a text may leave out a {{placeholder}}, never add one the English
# text lacks. A plural text has one entry per plural form of the language (CLDR: {forms}).
# Check it: tracktale experiment locale check FILE --language {language}
# Use it: language: {language} and locale: FILE in the study file.
"""


def catalogue_template(language: str) -> str:
    """A catalogue to translate: the English texts under the language's name and direction.

    Each plural text has the language's plural forms, a new one starting as English ``other``.

    Raises:
        TracktaleError: If ``language`` is not a language tag Babel knows.
    """
    from babel import Locale, UnknownLocaleError

    try:
        known = Locale.parse(language.replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        raise TracktaleError(
            f"{language!r} is not a language Babel knows (en, nl, pl-PL, ...)"
        ) from None
    data = yaml.safe_load((LOCALES_DIR / f"{REFERENCE_LANGUAGE}.yaml").read_text("utf-8"))
    forms = sorted(plural_categories(language), key=PLURAL_CATEGORIES.index)

    def adapt(node: Any) -> Any:
        if isinstance(node, dict) and _is_plural(node):
            return {form: node.get(form, node["other"]) for form in forms}
        if isinstance(node, dict):
            return {key: adapt(value) for key, value in node.items()}
        return node

    data = adapt(data)
    data["meta"] = {"name": known.display_name, "direction": known.text_direction}
    header = TEMPLATE_HEADER.format(
        name=known.display_name, language=language, forms=", ".join(forms)
    )
    body = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=96)
    return header + body


def catalogue_problems(catalogue: Catalogue, reference: Catalogue) -> list[str]:
    """What keeps a catalogue from serving a study, one line each (empty: none).

    A key of the reference missing, a key the reference does not have, a value of another
    kind (text, paragraphs, plural), a placeholder the reference's text does not have, a brace
    that is no placeholder, plural forms other than the language's categories, an empty text,
    a direction other than ``ltr``/``rtl``.
    """
    where = str(catalogue.source)
    problems = [
        f"{where}: missing key {key!r}" for key in reference.texts if key not in catalogue.texts
    ]
    problems += [
        f"{where}: unknown key {key!r}" for key in catalogue.texts if key not in reference.texts
    ]
    for key, value in catalogue.texts.items():
        expected = reference.texts.get(key)
        if expected is None:
            continue
        problems += [
            f"{where}: {key!r}: {problem}"
            for problem in _value_problems(catalogue.language, value, expected)
        ]
    if catalogue.texts.get("meta.direction") not in ("ltr", "rtl"):
        problems.append(f"{where}: 'meta.direction' must be ltr or rtl")
    return problems


def _value_problems(language: str, value: Value, expected: Value) -> list[str]:
    if _kind(value) != _kind(expected):
        return [f"is a {_kind(value)}, the reference has a {_kind(expected)}"]
    problems = []
    unknown = placeholders(value) - placeholders(expected)
    if unknown:
        allowed = ", ".join(sorted(placeholders(expected))) or "none"
        problems.append(
            f"unknown placeholder {{{sorted(unknown)[0]}}} (the reference has: {allowed})"
        )
    for text in _strings(value):
        if not text.strip():
            problems.append("an empty text")
        elif _BRACES.search(_PLACEHOLDER.sub("", text)):
            problems.append("a brace that is not part of a {placeholder}")
    if isinstance(value, dict):
        wanted = plural_categories(language)
        if set(value) != wanted:
            problems.append(
                f"plural forms {', '.join(sorted(value))}; {language} needs "
                f"{', '.join(sorted(wanted))}"
            )
    return problems
