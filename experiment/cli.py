"""``tracktale experiment``: serve the study, simulate participants, export the data."""

from __future__ import annotations

import os
from pathlib import Path

import click

from tracktale.choices import LiveChoice
from tracktale.errors import TracktaleError
from tracktale.experiment.paradigms import human_study_names

STUDY_OPTION = click.option(
    "--study",
    "study_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Study file (YAML), or a study folder (tracktale init) whose items are imported when "
    "they changed [default: the default study on the default stimulus set].",
)
PUBLIC_URL_OPTION = click.option(
    "--public-url",
    default=None,
    help="The address participants reach the study at (https://host/path, behind your proxy), "
    "for the printed links [default: the study file's public_url, else the listening address].",
)
PARADIGM_OPTION = click.option(
    "--paradigm",
    type=LiveChoice(human_study_names),
    default=None,
    help="Which paradigm's human study [default: the study file's, else narrative]; without "
    "--study, that study's defaults (its study_id, stimuli and time limits).",
)


def load_study_or_folder(study: Path | None, paradigm: str | None = None):
    """The study of ``--study``: a study file, or a study folder (its items imported if needed).

    Raises:
        TracktaleError: For a bad file or folder, or a ``--paradigm`` the folder contradicts.
    """
    from tracktale.experiment.study.config import load_study
    from tracktale.experiment.study.folder import load_folder_study
    from tracktale.stimuli.registry import FOLDER_PARADIGM

    if study is None or not study.is_dir():
        return load_study(study, paradigm)
    if paradigm not in (None, FOLDER_PARADIGM):
        raise TracktaleError(
            f"--paradigm {paradigm} contradicts the study folder {study} ({FOLDER_PARADIGM})"
        )
    return load_folder_study(study)


@click.group()
def experiment() -> None:
    """Run the human study: serve it, run it in the lab, simulate participants, export."""


def _warnings(config, online: bool = True) -> list[str]:
    notes = []
    unfilled = config.ethics.unfilled()
    if unfilled:
        notes.append(
            f"the consent and debrief texts still have placeholders: {', '.join(unfilled)}"
        )
    if online and config.prolific.completion_code.startswith("TRACKTALE-"):
        notes.append("the Prolific completion and screen-out codes are the defaults")
    paper = _paper_timing(config)
    if paper is not None:
        notes.append(
            f"time limits are {config.timing.reading_ms} / {config.timing.response_ms} ms, "
            f"not the source paper's {paper['reading_ms']} / {paper['response_ms']}"
        )
    return notes


def _paper_timing(config) -> dict[str, int] | None:
    """The paper's time limits where the study's paradigm has them and the study departs."""
    from tracktale.experiment.paradigms import get_human_study

    paper = get_human_study(config.paradigm).paper_timing
    if not paper or all(getattr(config.timing, key) == ms for key, ms in paper.items()):
        return None
    return dict(paper)


@experiment.command()
@STUDY_OPTION
@PARADIGM_OPTION
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", type=int, default=5000, show_default=True, help="Port to listen on.")
@PUBLIC_URL_OPTION
@click.option(
    "--workers",
    type=click.IntRange(0, 64),
    default=0,
    show_default=True,
    help="Serve with gunicorn and this many worker processes (0: the built-in server).",
)
def serve(
    study_file: Path | None,
    paradigm: str | None,
    host: str,
    port: int,
    public_url: str | None,
    workers: int,
) -> None:
    """Serve the study; print the participant link, the preview link and the admin link."""
    from tracktale.experiment.study.config import ADMIN_SECRET_ENV, Secrets
    from tracktale.experiment.web.app import create_app
    from tracktale.experiment.web.frontend import find_node_modules

    find_node_modules()  # a page without jsPsych is no study: fail before printing links
    config = _with_public_url(load_study_or_folder(study_file, paradigm), public_url)
    secrets = Secrets.from_env()
    if secrets.generated_admin_secret and workers:
        raise TracktaleError(f"set ${ADMIN_SECRET_ENV} to serve with --workers")
    app = create_app(config, secrets=secrets)  # fails early on a bad set-up
    service = app.extensions["tracktale"]
    click.echo(
        f"study {config.study_id}: {len(service.stimuli)} items from {config.stimulus_dir()}"
    )
    click.echo(f"database: {service.storage.engine.url.render_as_string(hide_password=True)}")
    _echo_links(config, service.storage, host, port)
    if secrets.generated_admin_secret:
        click.echo(
            f"admin secret (made up for this run; set ${ADMIN_SECRET_ENV}): {secrets.admin_secret}"
        )
    for note in _warnings(config):
        click.echo(f"warning: {note}", err=True)
    if workers:
        from tracktale.experiment.web.server import run_gunicorn

        service.storage.close()
        run_gunicorn(
            lambda: create_app(
                _with_public_url(load_study_or_folder(study_file, paradigm), public_url)
            ),
            host,
            port,
            workers,
        )
        return
    from tracktale.experiment.web.server import PrivateRequestHandler, log_crashes

    log_crashes()
    app.run(
        host=host,
        port=port,
        threaded=True,
        use_reloader=False,
        request_handler=PrivateRequestHandler,
    )


def _with_public_url(config, public_url: str | None):
    """``config`` with ``--public-url`` in place of the study file's, when given."""
    return config.with_changes(public_url=public_url) if public_url else config


def _echo_links(config, storage, host: str, port: int) -> None:
    """Print the participant link for Prolific, the preview link and the admin link."""
    from tracktale.experiment.study.links import (
        is_local,
        participant_link,
        preview_key,
        preview_link,
        public_base,
    )

    base = public_base(config.public_url, host, port)
    click.echo(f"participant link (for Prolific): {participant_link(base)}")
    key = preview_key(storage, config.study_id)
    click.echo(f"preview (your own test runs):    {preview_link(base, key)}")
    click.echo(f"admin link:                      {base}/admin")
    if is_local(base):
        click.echo(
            f"note: {base} is only reachable from this machine; give the address participants "
            "reach it at with --public-url (or public_url in the study file)",
            err=True,
        )


@experiment.command("preview-link")
@STUDY_OPTION
@PARADIGM_OPTION
@PUBLIC_URL_OPTION
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface it listens on.")
@click.option("--port", type=int, default=5000, show_default=True, help="Port it listens on.")
def preview_link_command(
    study_file: Path | None, paradigm: str | None, public_url: str | None, host: str, port: int
) -> None:
    """Print the study's links: for Prolific, for previews (your own test runs), the admin page.

    Sessions started from the preview link are marked ``preview`` in the database, take no
    counterbalancing list from the participants, and are left out of exports and the
    analysis unless asked for (``--include-preview``).
    """
    from tracktale.experiment.storage.store import Storage

    config = _with_public_url(load_study_or_folder(study_file, paradigm), public_url)
    storage = Storage(config.database_url())  # the key is kept in the study database
    try:
        _echo_links(config, storage, host, port)
    finally:
        storage.close()


@experiment.command()
@STUDY_OPTION
@PARADIGM_OPTION
@click.option(
    "--out",
    "target",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="File to write [default: $TRACKTALE_DATA/backups/STUDY_ID-<UTC time>.sqlite].",
)
def backup(study_file: Path | None, paradigm: str | None, target: Path | None) -> None:
    """Copy the study's SQLite database while it is served, and check the copy.

    Run it on a schedule (cron) during data collection. To restore, stop the servers and put
    the copy in the database's place (removing any -wal and -shm beside it). PostgreSQL
    databases are backed up with pg_dump instead.
    """
    import datetime as dt

    from tracktale.experiment.storage.database import backup_sqlite, sqlite_path
    from tracktale.settings import data_dir

    config = load_study_or_folder(study_file, paradigm)
    database = sqlite_path(config.database_url())
    if database is None:
        raise TracktaleError("the study database is not a SQLite file: back it up with pg_dump")
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    target = target or data_dir() / "backups" / f"{config.study_id}-{stamp}.sqlite"
    target.parent.mkdir(parents=True, exist_ok=True)
    backup_sqlite(database, target)
    click.echo(f"wrote {target}")


@experiment.command()
@STUDY_OPTION
@PARADIGM_OPTION
@click.option(
    "--database",
    default=None,
    help="SQLAlchemy URL or SQLite file to export from [default: the study's database].",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder to write into [default: $TRACKTALE_DATA/exports/STUDY_ID].",
)
@click.option(
    "--format",
    "formats",
    type=click.Choice(["csv", "parquet", "both"]),
    default="both",
    show_default=True,
    help="File format(s).",
)
@click.option(
    "--raw-ids",
    is_flag=True,
    help="Add raw Prolific ids to participants (for payment; never share such files).",
)
@click.option(
    "--include-preview",
    is_flag=True,
    help="Keep the researcher's preview sessions (left out by default).",
)
def export(
    study_file: Path | None,
    paradigm: str | None,
    database: str | None,
    out_dir: Path | None,
    formats: str,
    raw_ids: bool,
    include_preview: bool,
) -> None:
    """Export trials, participants, accuracy and words (Prolific ids as salted hashes).

    Preview sessions (from the preview link) are left out unless --include-preview.
    """
    from tracktale.experiment.export.files import FORMATS, export_study
    from tracktale.experiment.storage.store import Storage
    from tracktale.experiment.study.config import Secrets
    from tracktale.settings import data_dir

    config = load_study_or_folder(study_file, paradigm)
    if database:
        config = config.with_changes(database=database)
    url = config.database_url()
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        raise TracktaleError(f"no study database at {url.removeprefix('sqlite:///')}")
    storage = Storage(url, create=False)
    try:
        written = export_study(
            storage,
            out_dir or data_dir() / "exports" / config.study_id,
            study_id=config.study_id,
            formats=FORMATS if formats == "both" else (formats,),
            raw_ids=raw_ids,
            salt=Secrets.from_env().export_salt,
            personal_codes=config.prolific.completion_codes == "per_participant",
            include_preview=include_preview,
        )
    finally:
        storage.close()
    for path in written:
        click.echo(f"wrote {path}")


@experiment.command()
@STUDY_OPTION
@PARADIGM_OPTION
@click.option(
    "--n",
    "count",
    type=click.IntRange(1, 100_000),
    default=48,
    show_default=True,
    help="Number of participants.",
)
@click.option(
    "--url",
    default=None,
    help="A running study server (needs $TRACKTALE_ADMIN_SECRET) [default: serve the study "
    "in-process for the run].",
)
@click.option(
    "--stimuli",
    "stimuli_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The server's stimulus set [default: the study's].",
)
@click.option(
    "--seed", type=int, default=1, show_default=True, help="Seed of the simulated people."
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 512),
    default=4,
    show_default=True,
    help="Participants at a time.",
)
@click.option(
    "--pace",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="0: as fast as possible; 1: wait the simulated reading and response times.",
)
def simulate(
    study_file: Path | None,
    paradigm: str | None,
    count: int,
    url: str | None,
    stimuli_dir: Path | None,
    seed: int,
    concurrency: int,
    pace: float,
) -> None:
    """Run simulated participants through the real API (marked as simulated)."""
    from tracktale.experiment.study.config import ADMIN_SECRET_ENV
    from tracktale.experiment.study.service import load_stimuli
    from tracktale.stimulus_set import read_stimulus_set

    config = load_study_or_folder(study_file, paradigm)
    stimuli = read_stimulus_set(stimuli_dir) if stimuli_dir else load_stimuli(config)
    if url:
        from tracktale.experiment.simulation.run import simulate_participants

        secret = os.environ.get(ADMIN_SECRET_ENV)
        if not secret:
            raise TracktaleError(f"set ${ADMIN_SECRET_ENV} to the server's admin secret")
        report = simulate_participants(
            url, stimuli, secret, n=count, seed=seed, concurrency=concurrency, pace=pace
        )
    else:
        from tracktale.experiment.simulation.run import simulate_study

        report = simulate_study(
            config,
            n=count,
            seed=seed,
            concurrency=concurrency,
            pace=pace,
            stimulus_set=stimuli,
            announce=lambda where: click.echo(f"serving {config.study_id} at {where}"),
        )
    click.echo(
        f"{report.completed}/{count} simulated participants completed; "
        f"{report.trials_acknowledged}/{report.trials_sent} trials acknowledged; "
        f"{report.retries} retries"
    )
    for error in report.errors:
        click.echo(f"error: {error}", err=True)
    if report.errors:
        raise TracktaleError(f"{len(report.errors)} simulated participant(s) failed")


@experiment.command()
@STUDY_OPTION
@click.option(
    "--participant",
    required=True,
    help="The participant's id, given by the experimenter (letters, digits, _ and -); "
    "the same id resumes an interrupted session.",
)
@click.option("--windowed", is_flag=True, help="Run in a window instead of full screen.")
@click.option(
    "--screen", type=click.IntRange(0, 16), default=0, show_default=True, help="Screen to use."
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder for PsychoPy's data files (CSV and log) [default: beside the study database].",
)
@click.option(
    "--screenshots",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Save the first frame of every kind of screen as PNG into this folder.",
)
@click.option(
    "--frame-cap",
    type=click.FloatRange(0, 1000),
    default=0.0,
    help="Draw at most this many frames per second, for virtual screens that do not wait "
    "for the vertical blank [default: 0, no cap].",
)
@click.option(
    "--keyboard",
    type=click.Choice(["auto", "ptb", "event"]),
    default="auto",
    show_default=True,
    help="Key timing: ptb (Psychtoolbox, the key event's own timestamp), event (PsychoPy's "
    "window events, timed at a frame), or auto (ptb when it loads).",
)
def lab(
    study_file: Path | None,
    participant: str,
    windowed: bool,
    screen: int,
    out_dir: Path | None,
    screenshots: Path | None,
    frame_cap: float,
    keyboard: str,
) -> None:
    """Run the study in a PsychoPy window for an in-lab session (pip install 'tracktale[lab]').

    The same participant path, design, scoring and database as the browser study; trials are
    stored as they end, marked as lab sessions. ESC stops the session (exit status 3); run the
    same command again to resume where it stopped.
    """
    from tracktale.experiment.lab.launch import require_psychopy, run_lab
    from tracktale.experiment.paradigms import get_human_study

    require_psychopy()  # before anything else: one line on how to install it
    config = load_study_or_folder(study_file)
    if not get_human_study(config.paradigm).lab:
        from tracktale.experiment.paradigms import human_study_names

        runs = [name for name in human_study_names() if get_human_study(name).lab]
        raise TracktaleError(
            f"the lab mode runs the {', '.join(runs)} studies, not {config.paradigm}"
        )
    for note in _warnings(config, online=False):
        click.echo(f"warning: {note}", err=True)
    run = run_lab(
        config,
        participant,
        fullscreen=not windowed,
        screen=screen,
        out_dir=out_dir,
        screenshots=screenshots,
        frame_cap=frame_cap,
        keyboard=keyboard,
    )
    result = run.result
    if run.csv_path:
        click.echo(f"PsychoPy data: {run.csv_path}")
    click.echo(f"PsychoPy log:  {run.log_path}")
    stored = f"{result.stored}/{result.total} trials stored"
    if result.outcome == "completed":
        click.echo(f"participant {participant} ({run.participant_id}): completed, {stored}")
    elif result.outcome == "declined":
        click.echo(f"participant {participant}: did not consent; screened out, nothing recorded")
    else:
        where = f" at trial {result.stopped_at + 1}" if result.stopped_at is not None else ""
        click.echo(
            f"participant {participant}: stopped with ESC{where}; {stored}; "
            "run the same command to resume",
            err=True,
        )
        raise click.exceptions.Exit(3)


@experiment.command("install-frontend")
@click.option(
    "--dir",
    "target",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder to install into [default: $TRACKTALE_DATA/frontend].",
)
def install_frontend_command(target: Path | None) -> None:
    """Install jsPsych from npm (pinned by the packaged lock file) for a wheel install."""
    from tracktale.experiment.web.frontend import install_frontend

    modules = install_frontend(target)
    click.echo(f"installed the front end into {modules}")


@experiment.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--overwrite", is_flag=True, help="Replace an existing file.")
def init(path: Path, overwrite: bool) -> None:
    """Write the default study file, with comments, to PATH as a starting point."""
    from tracktale.atomic import atomic_write_text
    from tracktale.experiment.study.config import default_study_yaml

    if path.exists() and not overwrite:
        raise TracktaleError(f"{path} already exists (use --overwrite)")
    atomic_write_text(path, default_study_yaml())
    click.echo(f"wrote {path}; edit it, then: tracktale experiment serve --study {path}")


@experiment.group()
def locale() -> None:
    """Translate the participants' texts: start a catalogue, check one."""


@locale.command("new")
@click.argument("language")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The catalogue file to write (YAML).",
)
def locale_new(language: str, out: Path) -> None:
    """Write a catalogue for LANGUAGE (a tag: pl, pt-BR) to translate, from the English one."""
    from tracktale.atomic import atomic_write_text
    from tracktale.experiment.study.locale import catalogue_template

    if out.exists():
        raise TracktaleError(f"{out} already exists")
    atomic_write_text(out, catalogue_template(language))
    click.echo(f"wrote {out}: translate its values, then: tracktale experiment locale check {out}")


@locale.command("check")
@click.argument("path", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option(
    "--language",
    default=None,
    help="The catalogue's language tag (its plural forms) [default: the file's name].",
)
def locale_check(path: Path, language: str | None) -> None:
    """Check a catalogue against the English one; list every problem, exit 1 if there is one.

    Every key of the English catalogue, no other, no placeholder the English has not, the
    plural forms of the language.
    """
    from tracktale.experiment.study.locale import (
        LOCALES_DIR,
        REFERENCE_LANGUAGE,
        catalogue_problems,
        read_catalogue,
    )

    tag = language or path.stem
    catalogue = read_catalogue(path, tag)
    reference = read_catalogue(LOCALES_DIR / f"{REFERENCE_LANGUAGE}.yaml", REFERENCE_LANGUAGE)
    problems = catalogue_problems(catalogue, reference)
    for problem in problems:
        click.echo(problem, err=True)
    if problems:
        raise TracktaleError(f"{path}: {len(problems)} problem(s)")
    click.echo(
        f"{path}: {len(catalogue.texts)} texts in {catalogue.name} ({tag}, "
        f"{catalogue.direction}), the keys of the English catalogue"
    )
    same = [key for key, text in catalogue.texts.items() if text == reference.texts[key]]
    same = [key for key in same if not key.startswith("meta.")]
    if same:
        shown = ", ".join(same[:5]) + (", ..." if len(same) > 5 else "")
        click.echo(f"note: {len(same)} texts are the English ones ({shown})")
