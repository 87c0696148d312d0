"""Imported item sets for the study tests: the Dutch test table, and tables written on the fly."""

from __future__ import annotations

import csv
from pathlib import Path

import yaml

from tests.conftest import REPO_ROOT
from tracktale.stimuli.items.importer import import_table
from tracktale.stimulus_set import StimulusSet, write_stimulus_set

DUTCH = REPO_ROOT / "tests" / "experiment" / "data" / "items_nl"
"""A Dutch 2 x 2 set: test texts on two screens with a choice of two places, typed fillers."""
ETHICS_NL = {
    "researcher": "dr. Ada de Vries",
    "institution": "Radboud Universiteit",
    "contact_email": "ada.devries@example.org",
    "ethics_board": "de Ethische Commissie Geesteswetenschappen",
    "ethics_reference": "EC-2026-17",
    "payment": "EUR 4,50",
    "data_repository": "OSF",
}
"""Every ethics detail filled in, as a Dutch study would."""


def dutch_set() -> StimulusSet:
    """The Dutch test set, imported."""
    return import_table(DUTCH / "items.csv", DUTCH / "design.yaml")


def table_set(folder: Path, rows: list[dict[str, str]], design: dict) -> StimulusSet:
    """Import ``rows`` (a table) with ``design`` written into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "items.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (folder / "design.yaml").write_text(yaml.safe_dump(design), encoding="utf-8")
    return import_table(folder / "items.csv", folder / "design.yaml")


def study_folder(folder: Path, stimuli: StimulusSet, **study) -> Path:
    """Write the set into ``folder/set`` and a study file naming it; return the study file."""
    write_stimulus_set(stimuli, folder / "set")
    path = folder / "study.yaml"
    data = {
        "paradigm": "items",
        "stimuli": "set",
        "database": str(folder / "study.sqlite"),
        **study,
    }
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path
