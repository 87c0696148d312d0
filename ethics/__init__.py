"""Ethics documents: consent, information, debrief and data plan (the single source).

The documents are Markdown files in this package, written for the narrative entity-tracking
study (the source paper's procedure). Study-specific details (researcher, contact, payment,
approval number, ...) are ``{placeholders}`` filled from :class:`EthicsDetails`, which a study
file sets in its ``ethics:`` section. The running experiment renders its consent and debrief
screens from here, so what the ethics board approved is what participants read::

    from tracktale.ethics import EthicsDetails, load_document
    consent = load_document("consent", EthicsDetails(researcher="Dr A. Researcher"))
    consent.title, consent.markdown, consent.html()
"""

from __future__ import annotations

import dataclasses
import functools
import html
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tracktale.atomic import atomic_write_text, make_folder
from tracktale.errors import TracktaleError

_FOLDER = Path(__file__).parent
_COMMON = (
    "consent",
    "information",
    "debrief",
    "data_management",
    "checklist",
    "lab_consent",
    "lab_information",
    "lab_debrief",
)
_GENERAL = (
    "general_consent",
    "general_information",
    "general_debrief",
    "general_lab_consent",
    "general_lab_information",
    "general_lab_debrief",
)


def _paradigms_documents() -> tuple[str, ...]:
    """The paradigms' own documents: every other ``.md`` of this package, by name.

    A paradigm's study adds its consent form, information sheet and debrief as
    ``<paradigm>_consent.md`` and so on (its :class:`~tracktale.experiment.paradigms.HumanStudy`
    names them), so that this list names no paradigm.
    """
    listed = {*_COMMON, *_GENERAL}
    kinds = _COMMON[:3]

    def order(name: str) -> tuple[str, int, str]:
        # Each paradigm's in the order of the study's own: consent, information, debrief.
        prefix, _, kind = name.rpartition("_")
        return prefix, kinds.index(kind) if kind in kinds else len(kinds), name

    found = (path.stem for path in _FOLDER.glob("*.md") if path.stem not in listed)
    return tuple(sorted(found, key=order))


DOCUMENTS = (*_COMMON, *_paradigms_documents(), *_GENERAL)
"""The documents, by name: consent form, participant information sheet, debrief,
data-management plan and ethics-board checklist of the online study, then the consent form,
information sheet and debrief of in-lab sessions (``tracktale experiment lab``), which name keys
instead of buttons and the experimenter instead of Prolific, then the consent forms,
information sheets and debriefs of the paradigms' own studies
(:mod:`tracktale.experiment.paradigms`; the package's other ``.md`` files, by paradigm), then
the general ones (online and lab) of a study of the researcher's own texts, which do not say
what the texts vary (a template: replace them with
the texts your ethics board approved).

Each is written in English (``<name>.md``); a language other than English has its own folder
(``nl/<name>.md``, with ``nl/placeholders.yaml``: what stands where a detail is unset).
:data:`TRANSLATED` names the documents each language has."""
TRANSLATED = {
    "nl": (
        "general_consent",
        "general_information",
        "general_debrief",
        "general_lab_consent",
        "general_lab_information",
        "general_lab_debrief",
    )
}
"""Language -> the documents written in it besides English."""
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
TIMING_DEFAULTS = {"reading_seconds": 40, "response_seconds": 15}
"""The source paper's time limits, used where a caller gives no timing of its own."""


@dataclass(frozen=True)
class EthicsDetails:
    """Study-specific details filled into the documents.

    Values in square brackets are placeholders that a real study must replace
    (:meth:`unfilled` lists them; ``tracktale experiment serve`` warns about them).
    """

    researcher: str = "[name of the principal investigator]"
    institution: str = "[institution]"
    contact_email: str = "[contact e-mail address]"
    ethics_board: str = "[ethics review board]"
    ethics_reference: str = "[approval number]"
    payment: str = "[payment, e.g. GBP 3.75]"
    duration_minutes: int = 25
    retention_years: int = 10
    data_repository: str = "[public data repository, e.g. OSF]"
    documents: str | None = None
    """A folder of the study's own documents (``consent.md``, ``information.md``,
    ``debrief.md``, ``lab_consent.md``, ...: the texts its ethics board approved, in its
    language), used instead of the packaged ones it has; relative to the study file."""

    def unfilled(self) -> list[str]:
        """Names of the fields that still hold a ``[placeholder]``."""
        return [
            f.name
            for f in dataclasses.fields(self)
            if isinstance(getattr(self, f.name), str) and getattr(self, f.name).startswith("[")
        ]


@dataclass(frozen=True)
class Document:
    """One filled-in document.

    Attributes:
        name: One of :data:`DOCUMENTS`.
        title: The first heading.
        markdown: The text with every placeholder filled.
    """

    name: str
    title: str
    markdown: str

    def html(self) -> str:
        """The document as an HTML fragment (every value escaped)."""
        return markdown_to_html(self.markdown)


def _language_folder(language: str) -> str | None:
    """The folder of a language's documents (``None``: English, the package's own)."""
    tag = language.lower()
    if tag == "en" or tag.startswith("en-"):
        return None
    for candidate in (tag, tag.split("-")[0]):
        if candidate in TRANSLATED:
            return candidate
    return tag.split("-")[0]


def document_path(name: str, language: str = "en") -> Path:
    """The packaged Markdown file of a document in a language.

    Raises:
        TracktaleError: For an unknown document name, or one not written in ``language``.
    """
    if name not in DOCUMENTS:
        raise TracktaleError(f"unknown ethics document {name!r} (choose from {DOCUMENTS})")
    folder = _language_folder(language)
    if folder is None:
        return _FOLDER / f"{name}.md"
    if name not in TRANSLATED.get(folder, ()):
        raise TracktaleError(
            f"the ethics document {name!r} has no {language!r} version (ethics/{folder}/"
            f"{name}.md): write the text your ethics board approved there, in the study's "
            "language (docs/how-to/translate-a-study.md)"
        )
    return _FOLDER / folder / f"{name}.md"


def _unset_details(language: str) -> dict[str, str]:
    """What a language's documents say where a detail is left at its placeholder."""
    folder = _language_folder(language)
    path = _FOLDER / str(folder) / "placeholders.yaml"
    if folder is None or not path.is_file():
        return {}
    import yaml

    return {str(key): str(value) for key, value in yaml.safe_load(path.read_text()).items()}


def load_document(
    name: str,
    details: EthicsDetails | None = None,
    timing: Mapping[str, float] | None = None,
    *,
    language: str = "en",
) -> Document:
    """Read a document and fill in the study's details.

    Args:
        name: One of :data:`DOCUMENTS`.
        details: The study's details (default: placeholders).
        timing: ``reading_seconds`` and ``response_seconds`` of the study (default: the
            source paper's 40 and 15).
        language: The study's language (a document not written in it is an error).

    Raises:
        TracktaleError: For an unknown document, one not written in the language, or a
            placeholder without a value.
    """
    return fill_document(name, document_path(name, language), details, timing, language=language)


def fill_document(
    name: str,
    path: Path,
    details: EthicsDetails | None = None,
    timing: Mapping[str, float] | None = None,
    *,
    language: str = "en",
) -> Document:
    """Read the Markdown document at ``path`` and fill in the study's details.

    ``path`` is a packaged document (:func:`load_document`) or a study's own text.

    Raises:
        TracktaleError: If the file cannot be read, or for a placeholder without a value.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise TracktaleError(f"cannot read the ethics document {path}: {error}") from None
    details = details or EthicsDetails()
    unset = _unset_details(language)
    given = {
        key: unset.get(key, value) if key in details.unfilled() else value
        for key, value in dataclasses.asdict(details).items()
    }
    values = {
        **TIMING_DEFAULTS,
        **{key: f"{value:g}" for key, value in (timing or {}).items()},
        **given,
    }

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise TracktaleError(f"{path}: unknown placeholder {{{key}}}")
        return str(values[key])

    filled = _PLACEHOLDER.sub(fill, text)
    first = filled.lstrip().splitlines()[0] if filled.strip() else ""
    return Document(name=name, title=first.lstrip("#").strip(), markdown=filled)


def write_documents(
    directory: str | os.PathLike[str],
    details: EthicsDetails | None = None,
    timing: Mapping[str, float] | None = None,
) -> list[Path]:
    """Write every filled document as Markdown and HTML (for an ethics-board application).

    Returns:
        The files written.
    """
    target = make_folder(directory)
    written = []
    for name in DOCUMENTS:
        document = load_document(name, details, timing)
        for suffix, text in ((".md", document.markdown), (".html", _page(document))):
            path = target / f"{name}{suffix}"
            atomic_write_text(path, text)
            written.append(path)
    return written


def _page(document: Document) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(document.title)}</title></head>\n<body>\n"
        f"{document.html()}\n</body></html>\n"
    )


def markdown_to_html(text: str) -> str:
    """Render a document's Markdown (CommonMark, with ``- [ ]`` checklists) as HTML.

    markdown-it-py with raw HTML switched off: every value filled into a document is text,
    escaped, never markup; links to ``javascript:`` and similar are not made.
    """
    return _renderer().render(text).strip()


@functools.cache
def _renderer():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.tasklists import tasklists_plugin

    return MarkdownIt("commonmark", {"html": False}).use(tasklists_plugin)
