"""The same seed gives byte-identical report tables, whatever the folders (issue 31, item 3).

Two fresh processes, not one: a second run in the same process would share its hash seed,
its caches and its module state, and hide what differs between two runs a user makes.
"""

import os
import re
import sys
from pathlib import Path

import pytest

from tests.processes import run_checked

pytestmark = pytest.mark.slow

SEED = "3"
PARTICIPANTS = "6"  # few, but enough for every table (exclusions, GLMs, mixed models)


def _run(root: Path) -> Path:
    """``tracktale run --no-model`` in a fresh process with its own data and run folders."""
    env = {**os.environ, "TRACKTALE_DATA": str(root / "data"), "PYTHONHASHSEED": "random"}
    for name in ("DATABASE_URL", "TRACKTALE_EXPORT_SALT"):
        env.pop(name, None)
    out = root / "somewhere" / "run"
    root.mkdir(parents=True)
    run_checked(
        [sys.executable, "-m", "tracktale", "run", "--no-model", "--seed", SEED]
        + ["--participants", PARTICIPANTS, "--out", str(out)],
        cwd=root,
        env=env,
    )
    return out / "report"


def _files(report: Path) -> dict[str, bytes]:
    """Every table the report wrote (its tables folder and the tidy trial table), by path."""
    found = {
        str(path.relative_to(report)): path.read_bytes()
        for path in sorted(report.rglob("*"))
        if path.is_file() and path.suffix in (".csv", ".tex")
    }
    assert any(name.startswith("tables/") for name in found), sorted(found)
    assert "trial_table.csv" in found
    return found


def test_the_same_seed_gives_byte_identical_tables_in_two_processes(tmp_path):
    first = _run(tmp_path / "one")
    second = _run(tmp_path / "two" / "elsewhere")
    tables, again = _files(first), _files(second)
    assert sorted(tables) == sorted(again)
    differ = [name for name in tables if tables[name] != again[name]]
    assert not differ, f"tables that differ between two runs with seed {SEED}: {differ}"
    # The page too, but for the folders it names and the day it was made on.
    pages = [
        re.sub(r"\d{4}-\d{2}-\d{2}", "DAY", (report / "report.html").read_text()).replace(
            str(report.parent), "RUN"
        )
        for report in (first, second)
    ]
    assert pages[0] == pages[1]
