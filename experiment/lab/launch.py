"""Run a lab session from a study config and a participant id: everything wired together."""

from __future__ import annotations

import importlib.util
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.errors import TracktaleError
from tracktale.experiment.study.config import StudyConfig
from tracktale.settings import data_dir
from tracktale.stimulus_set import StimulusSet

if TYPE_CHECKING:
    from tracktale.experiment.lab.runner import RunResult
    from tracktale.experiment.lab.session import LabSession

INSTALL_HINT = "PsychoPy is not installed; install the lab extra: pip install 'tracktale[lab]'"


def psychopy_available() -> bool:
    """Whether PsychoPy can be imported here."""
    return importlib.util.find_spec("psychopy") is not None


def require_psychopy() -> None:
    """Raise a one-line error saying how to install PsychoPy when it is missing.

    Raises:
        TracktaleError: Without PsychoPy.
    """
    if not psychopy_available():
        raise TracktaleError(INSTALL_HINT)


def lab_folder(config: StudyConfig) -> Path:
    """Where PsychoPy's data files go: beside a SQLite database, else under the data folder."""
    url = config.database_url()
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        database = Path(url.removeprefix("sqlite:///"))
        return database.parent / f"{database.stem}-lab"
    return data_dir() / "study" / f"{config.study_id}-lab"


@dataclass(frozen=True)
class LabRun:
    """A finished run: how it ended and where PsychoPy's files are."""

    result: RunResult
    participant_id: str
    csv_path: Path | None
    log_path: Path | None


def run_lab(
    config: StudyConfig,
    participant: str,
    *,
    fullscreen: bool = True,
    screen: int = 0,
    out_dir: Path | None = None,
    screenshots: Path | None = None,
    frame_cap: float = 0.0,
    keyboard: str = "auto",
    stimulus_set: StimulusSet | None = None,
) -> LabRun:
    """Run (or resume) one participant's lab session in a PsychoPy window.

    Args:
        config: The study.
        participant: The experimenter's id for the participant; the same id resumes.
        fullscreen: Full screen (default) or a window.
        screen: Which physical screen.
        out_dir: Folder for PsychoPy's CSV and log [default: :func:`lab_folder`].
        screenshots: Folder for a PNG of the first frame of every kind of screen.
        frame_cap: Draw at most this many frames per second (virtual screens); 0: no cap.
        keyboard: ``auto`` (Psychtoolbox when it loads, else ``psychopy.event``), ``ptb`` or
            ``event``.
        stimulus_set: The study's set [default: the config's, generated when missing].

    Returns:
        How the run ended and where its files are.

    Raises:
        TracktaleError: Without PsychoPy, for a study read word by word (``reading_mode``),
            or when the participant may not (re)start, before any window opens.
    """
    if config.reading_mode != "whole":
        # The lab window shows whole stories; a word-by-word study would lose its words.
        raise TracktaleError(
            f"the lab mode shows whole stories: reading_mode {config.reading_mode} runs in "
            "the browser only"
        )
    require_psychopy()
    from tracktale.experiment.lab.session import LabSession, check_participant_key
    from tracktale.experiment.storage.store import Storage
    from tracktale.experiment.study.service import StudyService, load_stimuli

    check_participant_key(participant)
    stimuli = stimulus_set or load_stimuli(config)
    storage = Storage(config.database_url())
    try:
        service = StudyService(config, storage, stimuli)
        import psychopy

        user_agent = f"PsychoPy {psychopy.__version__}; {platform.platform()}"
        session = LabSession(service, participant, user_agent=user_agent)
        return _run_window(
            session,
            texts=service.texts,
            direction=config.text_direction,
            folder=out_dir or lab_folder(config),
            fullscreen=fullscreen,
            screen=screen,
            screenshots=screenshots,
            frame_cap=frame_cap,
            keyboard=keyboard,
        )
    finally:
        storage.close()


def _run_window(
    session: LabSession,
    *,
    folder: Path,
    fullscreen: bool,
    screen: int,
    screenshots: Path | None,
    frame_cap: float,
    keyboard: str,
    texts: Any = None,
    direction: str = "ltr",
) -> LabRun:
    import psychopy
    from psychopy import logging

    import tracktale
    from tracktale.experiment.lab.datafile import LabDataFile
    from tracktale.experiment.lab.runner import run_session
    from tracktale.experiment.lab.screens import PsychoPyDisplay

    logging.console.setLevel(logging.ERROR)  # warnings go to the run's log file
    display = PsychoPyDisplay(
        fullscreen=fullscreen,
        screen=screen,
        screenshots=screenshots,
        frame_cap=frame_cap,
        keyboard=keyboard,
        texts=texts,
        direction=direction,
    )
    datafile = None
    try:
        datafile = LabDataFile(
            folder,
            session,
            {
                "psychopy_version": psychopy.__version__,
                "tracktale_version": tracktale.__version__,
                "frame_rate": round(display.frame_rate, 3),
                "keyboard": display.keys.backend,
                "screen_width": display.size[0],
                "screen_height": display.size[1],
                "fullscreen": fullscreen,
            },
        )
        result = run_session(session, display, recorder=datafile)
    finally:
        if datafile is not None:
            datafile.close()
        display.close()
    return LabRun(
        result=result,
        participant_id=session.participant.participant_id,
        csv_path=datafile.path if datafile.rows else None,
        log_path=datafile.log_path,
    )
