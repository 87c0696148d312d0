"""Settings every stage shares: where tracktale keeps its data by default."""

from __future__ import annotations

import os
from pathlib import Path

DATA_ENV = "TRACKTALE_DATA"


def data_dir() -> Path:
    """The folder for generated sets, databases, results and reports.

    ``$TRACKTALE_DATA`` when set, else ``./tracktale-data`` in the working directory. Nothing is
    created here; callers create what they write.
    """
    return Path(os.environ.get(DATA_ENV) or "tracktale-data")
