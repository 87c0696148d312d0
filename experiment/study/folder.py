"""A study folder: the researcher's item table, its design, ethics texts and a README.

``tracktale init STUDY_DIR`` writes an example one (:func:`init_study`); ``tracktale run --study``
and ``tracktale experiment serve --study`` take it. The folder holds::

    items.csv        the item table (one row per item x condition, the PCIbex convention)
    design.yaml      what each column means, the factors, the tasks, timing and texts
    ethics/          consent, information and debrief texts, online and lab (templates)
    README.md        the next commands
    study.yaml       optional: study-file keys (ethics details, Prolific codes, database)
    output/          written by tracktale: the imported sets, simulated runs, the report

Everything tracktale derives from the folder is rebuilt from ``items.csv`` and ``design.yaml``:
the imported set is content-hashed (:func:`import_study` writes it under
``output/sets/<sha256 prefix>``), so editing the table or the design gives a new set and an
unchanged folder reuses the old one.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from tracktale.atomic import atomic_write_text
from tracktale.errors import TracktaleError
from tracktale.stimuli.registry import FOLDER_PARADIGM, get_paradigm

if TYPE_CHECKING:
    from tracktale.experiment.study.config import StudyConfig
    from tracktale.stimuli.paradigm import Paradigm

ITEMS = "items.csv"
DESIGN = "design.yaml"
STUDY_FILE = "study.yaml"
ETHICS = "ethics"
README = "README.md"
OUTPUT = "output"
ETHICS_TEMPLATES = {
    "consent": "general_consent",
    "information": "general_information",
    "debrief": "general_debrief",
    "lab_consent": "general_lab_consent",
    "lab_information": "general_lab_information",
    "lab_debrief": "general_lab_debrief",
}
"""A study folder's ethics document (``ethics/<role>.md``) -> the packaged template it starts as."""
FOLDER_KEYS = ("paradigm", "stimuli")
"""Study-file keys the folder decides (a ``study.yaml`` may not set them)."""

README_TEXT = """\
# {name}

A tracktale study: your items, their design, and the texts participants read.

- `items.csv`: one row per item x condition (8 items in a 2 x 2 design, 4 fillers, 2 practice
  items). Replace them with yours; keep the column names or rename them in `design.yaml`.
- `design.yaml`: what each column means, the factors (and whether each varies within
  participants and within items), the model tasks, the time limits and your own texts.
  Every key: https://tracktale.github.io/tracktale/reference/design-yaml/
- `ethics/`: consent, information sheet and debrief (online and lab). Templates: replace
  them with the texts your ethics board approved. `{{researcher}}` and the other
  placeholders are filled from the `ethics:` keys of an optional `study.yaml`.

Next:

```bash
# simulated people through the real study server, then the report (a minute)
tracktale run --study {name} --no-model
# the same with the default language model (SmolLM2) beside the people
tracktale run --study {name}
# the real study: prints the participant link and the admin link
tracktale experiment serve --study {name}
```

Each command re-imports the items when `items.csv` or `design.yaml` changed; a mistake in
them is reported as `items.csv:LINE: column 'NAME': problem`. The report is
`{name}/output/run-s1/report/report.html`.
"""


def init_study(folder: Path) -> list[Path]:
    """Write the example study into ``folder`` (new, or an empty folder), all at once.

    The files are written into a temporary folder beside ``folder``, which then takes its
    place: an interrupted ``init`` leaves nothing half-written.

    Returns:
        The files written.

    Raises:
        TracktaleError: If ``folder`` exists and is not an empty folder.
    """
    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise TracktaleError(_not_empty(folder))
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        for name, text in example_files(folder.resolve().name).items():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(staging / name, text)
        for made in (staging, *(p for p in staging.rglob("*") if p.is_dir())):
            made.chmod(0o777 & ~_umask())  # mkdtemp's folder is private; a study folder is not
        try:
            os.replace(staging, folder)  # replaces an empty folder; refuses one that filled up
        except OSError as error:
            raise TracktaleError(_not_empty(folder)) from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return sorted(path for path in folder.rglob("*") if path.is_file())


def _not_empty(folder: Path) -> str:
    return f"{folder} is not empty: tracktale init writes a new study folder"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _paradigm() -> Paradigm:
    """The paradigm a study folder is imported with (:data:`FOLDER_PARADIGM`)."""
    return get_paradigm(FOLDER_PARADIGM)


def example_files(name: str) -> dict[str, str]:
    """The example study's files (relative path -> text) for a folder called ``name``."""
    from tracktale.ethics import document_path

    example = _paradigm().example
    if example is None:
        raise TracktaleError(f"the {_paradigm().name} paradigm ships no example study")
    files = {
        ITEMS: example.joinpath("items.csv").read_text(encoding="utf-8"),
        DESIGN: example.joinpath("design.yaml").read_text(encoding="utf-8"),
        README: README_TEXT.format(name=name),
    }
    for role, template in ETHICS_TEMPLATES.items():
        files[f"{ETHICS}/{role}.md"] = document_path(template).read_text(encoding="utf-8")
    return files


def is_study_folder(path: Path) -> bool:
    """Whether ``path`` is a folder with an item table and a design."""
    path = Path(path)
    return path.is_dir() and (path / ITEMS).is_file() and (path / DESIGN).is_file()


def check_study_folder(folder: Path) -> Path:
    """``folder``, checked to be a study folder.

    Raises:
        TracktaleError: Naming what is missing.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise TracktaleError(f"{folder}: no such study folder (tracktale init {folder} writes one)")
    for name in (ITEMS, DESIGN):
        if not (folder / name).is_file():
            raise TracktaleError(f"{folder}: a study folder needs {name} (see tracktale init)")
    return folder


def import_study(folder: Path, out: Path | None = None) -> Path:
    """Import the folder's items with its design; the set's folder (reused when unchanged).

    Args:
        folder: The study folder.
        out: Where sets go (default: ``<folder>/output/sets``); each set in a folder named by
            the first 12 hex digits of its sha256.

    Raises:
        InputProblems: Every problem of the table or the design, one line each.
    """
    from tracktale.stimulus_set import is_stimulus_set, read_manifest, write_stimulus_set

    folder = check_study_folder(folder)
    stimulus_set = _paradigm().import_set(folder / ITEMS, folder / DESIGN)
    target = (out or folder / OUTPUT / "sets") / stimulus_set.sha256[:12]
    # The set's sha256 covers its items; the manifest also records the design, so a design
    # change that leaves the items alone (a title, a time limit) must still be written.
    if not (is_stimulus_set(target) and read_manifest(target) == stimulus_set.manifest):
        write_stimulus_set(stimulus_set, target, overwrite=True)
    return target


def study_config(folder: Path, set_dir: Path, database: str | None = None) -> StudyConfig:
    """The study of a folder: its set, its ethics texts, and its ``study.yaml`` if any.

    Args:
        folder: The study folder.
        set_dir: The imported set (:func:`import_study`).
        database: The study database (SQLAlchemy URL or file); ``None``: the study file's,
            else ``$TRACKTALE_DATA/study/<study_id>.sqlite``.

    Raises:
        TracktaleError: For a bad ``study.yaml``.
    """
    from tracktale.experiment.study.config import check_study, study_from_dict

    folder = Path(folder)
    source = folder / STUDY_FILE
    data = _study_file(source)
    ethics = dict(data.get("ethics") or {})
    if (folder / ETHICS).is_dir():
        ethics.setdefault("documents", str((folder / ETHICS).resolve()))
    data = {
        "study_id": folder_study_id(folder),
        **data,
        "paradigm": FOLDER_PARADIGM,
        "stimuli": str(Path(set_dir).resolve()),
        "ethics": ethics,
    }
    if database is not None:
        data["database"] = database
    return check_study(study_from_dict(data, where=str(source), source_file=str(source)))


def _study_file(source: Path) -> dict[str, Any]:
    if not source.is_file():
        return {}
    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError:
        raise TracktaleError(f"{source}: not valid YAML") from None
    if not isinstance(data, dict):
        raise TracktaleError(f"{source}: a study file must be a mapping of keys to values")
    for key in FOLDER_KEYS:
        if key in data:
            raise TracktaleError(f"{source}: {key!r} is set by the study folder; leave it out")
    if not isinstance(data.get("ethics") or {}, dict):
        raise TracktaleError(f"{source}: 'ethics' must be a mapping")
    return data


def folder_study_id(folder: Path) -> str:
    """A study id from the folder's name (letters, digits, ``.``, ``_``, ``-``)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(folder).resolve().name).strip("-._")
    return name[:64] or "own-study"


def load_folder_study(folder: Path, database: str | None = None) -> StudyConfig:
    """Import the folder's items if needed, then its study (what ``serve --study`` runs)."""
    return study_config(folder, import_study(folder), database)
