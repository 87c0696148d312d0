"""The study configuration: a YAML file whose every key has a default.

Secrets never live in the file; they come from the environment (see :class:`Secrets`). A study
file only names what differs from the defaults, e.g.::

    study_id: entity-tracking-pilot
    prolific: {completion_code: C1A2B3C4, screenout_code: S9X8Y7Z6}
    ethics: {researcher: Dr A. Researcher, contact_email: a.researcher@example.org}
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, is_dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import Field

from tracktale.errors import TracktaleError
from tracktale.ethics import Document, EthicsDetails, fill_document, load_document
from tracktale.experiment.paradigms import (
    DEFAULT_PARADIGM,
    HumanStudy,
    get_human_study,
    human_study_names,
)
from tracktale.experiment.study.config_schema import (
    Comment,
    commented_yaml,
    matches,
    rule,
    validated,
)
from tracktale.experiment.study.design import DesignConfig
from tracktale.experiment.study.locale import Catalogue, load_catalogue
from tracktale.schema.derive import base_type, hints
from tracktale.settings import data_dir
from tracktale.stimuli.registry import get_plugin

PAPER_READING_MS = 40_000
PAPER_RESPONSE_MS = 15_000
PROLIFIC_COMPLETION_URL = "https://app.prolific.com/submissions/complete?cc={code}"
ADMIN_SECRET_ENV = "TRACKTALE_ADMIN_SECRET"
SECRET_KEY_ENV = "TRACKTALE_SECRET_KEY"
EXPORT_SALT_ENV = "TRACKTALE_EXPORT_SALT"
DATABASE_URL_ENV = "DATABASE_URL"
STUDY_ENV = "TRACKTALE_STUDY"

CODE = matches(r"[A-Za-z0-9_-]{1,64}", "may use letters, digits, _ and -")
STUDY_ID = matches(
    r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", "may use letters, digits, ._-", show_value=True
)
LANGUAGE = matches(
    r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*", "must be a language tag (en, nl, pt-BR)", show_value=True
)
LANGUAGE_COMMENT = Comment(
    "The participants' language: the texts of experiment/locales/<language>.yaml (en, nl).\n"
    "A study of an imported item set takes the set's language when this is left out.",
    above=True,
)
LOCALE_COMMENT = Comment(
    "A locale catalogue of your own (YAML, the keys of experiment/locales/en.yaml), relative\n"
    "to this file; null: the shipped catalogue of the language. See\n"
    "docs/how-to/translate-a-study.md.",
    above=True,
)
PARADIGM_COMMENT = Comment(
    "Which paradigm's human study runs: {paradigms} (tracktale experiment serve --paradigm).\n"
    "A file naming another paradigm gets that study's study_id, title and timing as defaults.",
    above=True,
)
STIMULI_COMMENT = Comment(
    "The human-protocol stimulus set (tracktale stimuli generate --protocol human --out DIR).\n"
    "null: $TRACKTALE_DATA/stimuli/<paradigm>-human-s<stimulus_seed>, generated when missing.",
    above=True,
)
DATABASE_COMMENT = Comment(
    "SQLite file or SQLAlchemy URL; $DATABASE_URL wins.\n"
    "null: $TRACKTALE_DATA/study/<study_id>.sqlite",
    above=True,
)
ETHICS_COMMENT = Comment(
    "Filled into ethics/ (consent, information sheet, debrief, data plan, checklist).", above=True
)
DEFAULT_FILE_HEADER = """\
A tracktale study file. Every key is optional: what is left out keeps the value shown here.
Secrets never go into this file: set TRACKTALE_ADMIN_SECRET (and optionally
TRACKTALE_SECRET_KEY, TRACKTALE_EXPORT_SALT, DATABASE_URL) in the environment."""
PUBLIC_URL = (
    rule(lambda url: url.startswith(("https://", "http://")), "must be an http(s) URL"),
    rule(lambda url: "?" not in url and "#" not in url, "must have no query or fragment"),
)
REDIRECT_URL = (
    rule(lambda url: "{code}" in url, "must contain {code}"),
    rule(lambda url: url.startswith(("https://", "http://")), "must be an http(s) URL"),
)


def _default_study() -> HumanStudy:
    """The default paradigm's human study, whose ``study_id`` and title are the defaults.

    Asked of the paradigm's plug-in when a config is built, so that shared code names no
    paradigm's study (issue 28).
    """
    return get_human_study(DEFAULT_PARADIGM)


@dataclass(frozen=True)
class Timing:
    """Time limits of a trial (the source paper: 40 s reading, 15 s response)."""

    reading_ms: Annotated[
        int, Field(ge=500, le=600_000), Comment("the source paper: 40 s to read a story")
    ] = PAPER_READING_MS
    response_ms: Annotated[
        int,
        Field(ge=500, le=600_000),
        Comment("and 15 s to answer, reading the question included"),
    ] = PAPER_RESPONSE_MS
    feedback_ms: Annotated[int, Field(ge=500, le=600_000), Comment("practice feedback")] = 2500
    """How long practice feedback stays up (it can be dismissed earlier)."""


@dataclass(frozen=True)
class Prolific:
    """Prolific's codes and redirect."""

    completion_code: Annotated[
        str, CODE, Comment("set these to the codes of your Prolific study")
    ] = "TRACKTALE-COMPLETE"
    screenout_code: Annotated[str, CODE] = "TRACKTALE-SCREENOUT"
    completion_codes: Annotated[
        Literal["static", "per_participant"],
        Comment("per_participant: each participant their own code (checked by hand on Prolific)"),
    ] = "static"
    """``static``: everyone gets ``completion_code`` (Prolific completes the submission by
    itself); ``per_participant``: each participant gets a code of their own, listed in the
    raw-ids participants export, which a code shared on a forum cannot match (Prolific
    marks such submissions for review: compare the codes there)."""
    completion_url: Annotated[str, *REDIRECT_URL] = PROLIFIC_COMPLETION_URL
    """Redirect target; ``{code}`` is replaced by the completion or screen-out code."""
    study_id: Annotated[
        Annotated[str, CODE] | None,
        Comment("Prolific's study id: set it to refuse links of other studies"),
    ] = None
    """Prolific's id of the study; when set, a session must come with this ``STUDY_ID``."""

    def redirect(self, code: str) -> str:
        """The URL that hands the participant back to Prolific with ``code``."""
        return self.completion_url.replace("{code}", code)


@dataclass(frozen=True)
class RateLimits:
    """Request limits (Flask-Limiter, fixed one-minute windows, shared by every worker).

    Attributes:
        sessions_per_ip_per_minute: Session starts per address.
        writes_per_participant_per_minute: Serves and writes per session token (or address
            without one).
        storage_uri: Where the counts are kept: ``None`` is a small SQLite file beside the
            study database, shared by the server processes of one machine; any storage URI
            of the ``limits`` library works too (``memcached://host:11211``,
            ``redis://host:6379``) for servers on several machines.
    """

    sessions_per_ip_per_minute: Annotated[int, Field(ge=1)] = 30
    writes_per_participant_per_minute: Annotated[int, Field(ge=1)] = 240
    storage_uri: Annotated[
        str | None,
        Comment("null: a SQLite file beside the database; or memcached://host:11211"),
    ] = None


@dataclass(frozen=True)
class StudyConfig:
    """Everything a study needs except its secrets.

    Attributes:
        study_id: Name of the study (stored with every row).
        title: Shown in the browser tab and on the first screen.
        stimuli: Folder of the human-protocol stimulus set; ``None``: the default set under
            ``$TRACKTALE_DATA/stimuli`` (generated when missing).
        stimulus_seed: Seed of the default set.
        database: SQLAlchemy URL or SQLite file; ``$DATABASE_URL`` wins; ``None``:
            ``$TRACKTALE_DATA/study/<study_id>.sqlite``.
        timing: Time limits.
        prolific: Codes and redirect.
        design: List design settings.
        ethics: Details filled into the consent, information and debrief texts.
        rate_limits: Write limits.
        allow_missing_pid: Let people without a ``PROLIFIC_PID`` in (a random id is made up);
            for previews only.
        trusted_proxies: Reverse proxies in front of the server (their ``X-Forwarded-*``
            headers give the client address and scheme); 0 when serving directly.
        progress_indicator: Show "Story 12 of 50" and a bar above the trials (ours; the paper
            does not say whether participants saw their progress).
        timeout_notice_ms: How long a short "Time is up" notice follows a main trial whose
            answer time ran out (ours; 0: none, the next story follows at once).
        typed_answer_rule: How typed answers are scored (``one-answer``: our default, a
            response naming several candidate answers is incorrect; ``contains``: the
            paradigm's rule alone, for narrative items the paper's model rule).
        secure_cookies: Mark the admin cookie ``Secure`` (set when served over HTTPS).
        public_url: The address participants reach the study at (``https://study.example.org``),
            for the printed participant and preview links (``serve --public-url`` wins);
            ``None``: the address the server listens on.
        probe_values: The arithmetic study: intermediate values each main trial asks for
            before the result, at evenly spaced steps (ours: the paper probes none; 0: none).
            Stored in the trial's ``intermediates``.
        paradigm: Which paradigm's human study runs (:mod:`tracktale.experiment.paradigms`);
            a study file that names it gets that study's ``study_id``, title and time limits
            as its defaults, and those its stimulus set declares
            (:meth:`~tracktale.experiment.paradigms.HumanStudy.stimulus_defaults`).
        language: The participants' language, whose locale catalogue
            (:mod:`.locale`) gives every participant-facing text around the paradigm's own.
        direction: The pages' writing direction (``auto``: the catalogue's).
        locale: A catalogue file of the study's own instead of the shipped one.
        reading_mode: How texts are read (ours; the papers show whole stories): ``whole``,
            one screen a story; ``self_paced``, a moving window, the space bar showing the
            next word; ``maze``, each word against a distractor (every item needs
            ``meta.distractors``, one per word). Word-by-word modes store a record per word
            (:class:`~tracktale.schema.WordRecord`); only paradigms whose plug-in declares
            them (``ParadigmPlugin.reading_modes``) serve them.
        maze_redo: In the Maze, a wrong choice shows a message and waits for the right one
            (Boyce et al. 2020's "redo"; the words' ``errors`` count them) instead of ending
            the story's reading.
        source_file: The YAML file it was read from (``None`` for the defaults).
    """

    paradigm: Annotated[str, PARADIGM_COMMENT] = DEFAULT_PARADIGM
    study_id: Annotated[str, STUDY_ID, Comment("stored with every row; letters, digits, . _ -")] = (
        field(default_factory=lambda: _default_study().study_id)
    )
    title: Annotated[str, Comment("the browser tab's title")] = field(
        default_factory=lambda: _default_study().title
    )
    language: Annotated[str, LANGUAGE, LANGUAGE_COMMENT] = "en"
    direction: Annotated[
        Literal["auto", "ltr", "rtl"],
        Comment("auto: the catalogue's (right to left for Hebrew, Arabic, ...)"),
    ] = "auto"
    locale: Annotated[str | None, LOCALE_COMMENT] = None
    stimuli: Annotated[str | None, STIMULI_COMMENT] = None
    stimulus_seed: int = 1
    database: Annotated[str | None, DATABASE_COMMENT] = None
    timing: Timing = field(default_factory=Timing)
    prolific: Prolific = field(default_factory=Prolific)
    design: DesignConfig = field(default_factory=DesignConfig)
    ethics: Annotated[EthicsDetails, ETHICS_COMMENT] = field(default_factory=EthicsDetails)
    rate_limits: Annotated[
        RateLimits, Comment("shared by every server process (Flask-Limiter)")
    ] = field(default_factory=RateLimits)
    allow_missing_pid: Annotated[
        bool, Comment("true lets people in without a PROLIFIC_PID (previews only)")
    ] = False
    trusted_proxies: Annotated[
        int,
        Field(ge=0, le=5),
        Comment("1 behind one reverse proxy (nginx, Caddy) that sets X-Forwarded-*"),
    ] = 0
    secure_cookies: Annotated[bool, Comment("true when served over HTTPS")] = False
    public_url: Annotated[
        Annotated[str, *PUBLIC_URL] | None,
        Comment("where participants reach the study, https://host/path (for the links)"),
    ] = None
    progress_indicator: Annotated[
        bool, Comment('"Story 12 of 50" above the trials (ours, not the paper\'s)')
    ] = True
    timeout_notice_ms: Annotated[
        int,
        Field(ge=0, le=10_000),
        Comment('a "Time is up" notice after a main trial runs out; 0: none'),
    ] = 1500
    typed_answer_rule: Annotated[
        Literal["one-answer", "contains"],
        Comment("or contains: the paper's model rule (see the README)"),
    ] = "one-answer"
    probe_values: Annotated[
        int,
        Field(ge=0, le=5),
        Comment("arithmetic: intermediate values asked per trial (ours; 0-5)"),
    ] = 0
    reading_mode: Annotated[
        Literal["whole", "self_paced", "maze"],
        Comment("whole: the story on one screen; or self_paced, maze: word by word (ours)"),
    ] = "whole"
    maze_redo: Annotated[
        bool, Comment("maze: after a wrong choice, wait for the right one (Boyce et al. 2020)")
    ] = False
    source_file: str | None = None

    @property
    def paper_timing(self) -> bool:
        """Whether the time limits are the source paper's (40 s / 15 s)."""
        return (self.timing.reading_ms, self.timing.response_ms) == (
            PAPER_READING_MS,
            PAPER_RESPONSE_MS,
        )

    def database_url(self) -> str:
        """The SQLAlchemy URL: ``$DATABASE_URL``, else ``database``, else the default file."""
        url = os.environ.get(DATABASE_URL_ENV) or self.database
        if not url:
            return f"sqlite:///{data_dir() / 'study' / (self.study_id + '.sqlite')}"
        if "://" not in url:
            return f"sqlite:///{Path(url)}"
        if url.startswith("postgres://"):  # Heroku-style URLs name the dialect differently
            url = "postgresql://" + url.removeprefix("postgres://")
        if url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
        return url

    def stimulus_dir(self) -> Path:
        """The stimulus set's folder (relative paths are relative to the study file)."""
        if self.stimuli is None:
            name = get_human_study(self.paradigm).stimulus_dir_name(self.stimulus_seed)
            return data_dir() / "stimuli" / name
        return self._relative(self.stimuli)

    def _relative(self, name: str) -> Path:
        path = Path(name)
        if not path.is_absolute() and self.source_file:
            path = Path(self.source_file).parent / path
        return path

    def catalogue(self) -> Catalogue:
        """The participants' texts: the study's ``locale`` file, else the language's.

        Raises:
            TracktaleError: If there is no catalogue for the language, or it has problems.
        """
        file = self._relative(self.locale) if self.locale else None
        return load_catalogue(self.language, file)

    def document(self, role: str, packaged: str, timing: Mapping[str, float]) -> Document:
        """An ethics document the participant reads, filled in with the study's details.

        Args:
            role: ``consent``, ``information``, ``debrief``, or ``lab_`` and one of them.
            packaged: The packaged document (:data:`tracktale.ethics.DOCUMENTS`) to show when
                the study has no ``<role>.md`` of its own in ``ethics.documents``.
            timing: ``reading_seconds`` and ``response_seconds``.

        Raises:
            TracktaleError: If the document is not written in the study's language.
        """
        if self.ethics.documents:
            own = self._relative(self.ethics.documents) / f"{role}.md"
            if own.is_file():
                return fill_document(role, own, self.ethics, timing, language=self.language)
        return load_document(packaged, self.ethics, timing, language=self.language)

    @property
    def text_direction(self) -> Literal["ltr", "rtl"]:
        """``direction``, with ``auto`` decided by the catalogue."""
        return self.catalogue().direction if self.direction == "auto" else self.direction

    def with_changes(self, **changes: Any) -> StudyConfig:
        """A copy with top-level fields replaced (nested sections as dataclasses or dicts)."""
        # Sections given as dataclasses are checked like the file's mappings.
        plain = {
            name: _plain_section(value) if is_dataclass(value) else value
            for name, value in changes.items()
        }
        return _built(self, plain, where="with_changes", source_file=self.source_file)


@dataclass(frozen=True)
class Secrets:
    """Secrets from the environment, never from the study file.

    Attributes:
        admin_secret: Opens the admin pages and authorises simulated participants.
        secret_key: Signs the admin's session cookie.
        export_salt: Salt for the Prolific-id hashes in exports (``None``: a salt kept in the
            database, made on first use).
        generated_admin_secret: The admin secret was made up because none was set.
    """

    admin_secret: str
    secret_key: str
    export_salt: str | None
    generated_admin_secret: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Secrets:
        """Read the secrets; make up a random admin secret when none is set."""
        env = os.environ if environ is None else environ
        admin = env.get(ADMIN_SECRET_ENV, "")
        generated = not admin
        if generated:
            admin = secrets.token_urlsafe(18)
        elif len(admin) < 12:
            raise TracktaleError(f"${ADMIN_SECRET_ENV} is too short (use at least 12 characters)")
        key = env.get(SECRET_KEY_ENV) or _derive(admin, "flask-session-key")
        return cls(admin, key, env.get(EXPORT_SALT_ENV) or None, generated)


def _derive(secret: str, purpose: str) -> str:
    # Every gunicorn worker must sign cookies with the same key; derive it from the shared secret.
    return hashlib.sha256(f"{purpose}|{secret}".encode()).hexdigest()


def load_study(
    path: str | os.PathLike[str] | None = None, paradigm: str | None = None
) -> StudyConfig:
    """Read a study file (or the defaults when ``path`` is ``None``) and check it.

    Args:
        path: The study file.
        paradigm: ``--paradigm``: without a file, the defaults of that paradigm's study; with
            one, it must agree with the file's ``paradigm:``.

    Raises:
        TracktaleError: Naming the file and the offending key.
    """
    if path is None:
        if paradigm is None:
            return check_study(StudyConfig())
        return check_study(study_from_dict({"paradigm": paradigm}, where="--paradigm"))
    source = Path(path)
    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
    except OSError as error:
        raise TracktaleError(f"cannot read study file {source}: {error.strerror}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise TracktaleError(f"{source}{where}: not valid YAML") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise TracktaleError(f"{source}: a study file must be a mapping of keys to values")
    config = check_study(study_from_dict(data, where=str(source), source_file=str(source)))
    if paradigm is not None and paradigm != config.paradigm:
        raise TracktaleError(
            f"--paradigm {paradigm} contradicts {source}, whose paradigm is {config.paradigm}"
        )
    return config


def study_from_dict(
    data: Mapping[str, Any], *, where: str = "study", source_file: str | None = None
) -> StudyConfig:
    """Build a config from plain data over the paradigm's defaults.

    The defaults are the paradigm study's, then what its stimulus set declares (an imported
    set's language, title and time limits), then the data. Unknown keys and wrong values are
    refused by the rules declared on the dataclasses above.
    """
    defaults = paradigm_defaults(data.get("paradigm", DEFAULT_PARADIGM), where)
    config = _built(defaults, data, where=where, source_file=source_file)
    folder = config.stimulus_dir()
    from_set = get_human_study(config.paradigm).stimulus_defaults(folder)
    if not from_set:
        return config
    defaults = _built(defaults, from_set, where=str(folder), source_file=source_file)
    return _built(defaults, data, where=where, source_file=source_file)


def _sections() -> dict[str, type]:
    """The study file's nested mappings (``timing:``, ``prolific:``, ...) and their classes."""
    types = {f.name: base_type(hints(StudyConfig)[f.name]) for f in dataclasses.fields(StudyConfig)}
    return {name: cls for name, cls in types.items() if is_dataclass(cls)}


def _plain_section(section: Any) -> Any:
    return section if isinstance(section, type) else dataclasses.asdict(section)


def _built(
    base: StudyConfig, data: Mapping[str, Any], *, where: str, source_file: str | None
) -> StudyConfig:
    """``base`` with the keys of ``data`` (a section's keys over ``base``'s section) checked."""
    if "source_file" in data:  # set from where the file was read, never by the file
        raise TracktaleError(f"{where}: unknown key 'source_file'")
    values = {f.name: getattr(base, f.name) for f in dataclasses.fields(StudyConfig)}
    values.update(data, source_file=source_file)
    for name, cls in _sections().items():
        given = data.get(name)
        if name not in data or isinstance(given, cls):
            continue
        if not isinstance(given, Mapping):
            raise TracktaleError(f"{where}: {name!r} must be a mapping")
        merged = {**dataclasses.asdict(getattr(base, name)), **given}
        values[name] = validated(cls, merged, where=where, prefix=f"{name}.")
    config: StudyConfig = validated(StudyConfig, values, where=where)
    return config


def paradigm_defaults(paradigm: Any, where: str = "study") -> StudyConfig:
    """The default config of a paradigm's study (its ``study_id``, title and time limits).

    Raises:
        TracktaleError: If the paradigm has no human study.
    """
    if paradigm == DEFAULT_PARADIGM:
        return StudyConfig()
    if not isinstance(paradigm, str) or paradigm not in human_study_names():
        raise TracktaleError(
            f"{where}: paradigm {paradigm!r} has no human study "
            f"(choose from {', '.join(human_study_names())})"
        )
    study = get_human_study(paradigm)
    return StudyConfig(
        paradigm=paradigm,
        study_id=study.study_id,
        title=study.title,
        timing=Timing(**study.timing),
        ethics=EthicsDetails(duration_minutes=study.duration_minutes),
    )


def check_study(config: StudyConfig) -> StudyConfig:
    """Every declared rule and the checks across keys; returns the config unchanged.

    Raises:
        TracktaleError: Naming the offending setting.
    """
    where = config.source_file or "study"
    sections = {
        name: validated(
            cls, dataclasses.asdict(getattr(config, name)), where=where, prefix=name + "."
        )
        for name, cls in _sections().items()
    }
    fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(StudyConfig)}
    validated(StudyConfig, {**fields, **sections}, where=where)
    if config.paradigm not in human_study_names():
        raise TracktaleError(
            f"{where}: paradigm {config.paradigm!r} has no human study "
            f"(choose from {', '.join(human_study_names())})"
        )
    if config.probe_values and not get_human_study(config.paradigm).asks_probe_values:
        askers = [n for n in human_study_names() if get_human_study(n).asks_probe_values]
        studies = " or ".join(askers)
        raise TracktaleError(f"{where}: probe_values applies to the {studies} study only")
    _check_reading_mode(config, where)
    if config.maze_redo and config.reading_mode != "maze":
        raise TracktaleError(f"{where}: maze_redo applies to reading_mode maze only")
    try:
        config.catalogue()
    except TracktaleError as error:
        raise TracktaleError(f"{where}: {error}") from None
    return config


def _check_reading_mode(config: StudyConfig, where: str) -> None:
    """Refuse a word-by-word ``reading_mode`` the paradigm's plug-in does not declare."""
    if config.reading_mode == "whole":
        return
    offered = get_plugin(config.paradigm).reading_modes
    if config.reading_mode not in offered:
        readers = [name for name in human_study_names() if get_plugin(name).reading_modes]
        raise TracktaleError(
            f"{where}: reading_mode {config.reading_mode} is not served by the "
            f"{config.paradigm} study (word by word: {', '.join(readers) or 'none'})"
        )


def default_study_yaml() -> str:
    """The commented default study file (a starting point for a real study).

    Written from the declaration above: every key with its default and its comment. The
    packaged ``default_study.yaml`` is a copy (a test keeps it current).
    """
    text = commented_yaml(StudyConfig, DEFAULT_FILE_HEADER, skip=("source_file",))
    return text.replace("{paradigms}", ", ".join(human_study_names()))
