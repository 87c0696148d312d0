"""The per-word reading-time table: one row per participant, item and word.

Declared once here (:class:`ReadingTimeRow`); everything else reads its column names from it.
A table is a CSV or Parquet file with at least the required columns; ``region``, ``trial``
and the Maze columns ``correct`` and ``choice`` are optional, and a ``log_frequency`` column,
when present, is used instead of computing word frequencies.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd


class ReadingTimeRow(BaseModel):
    """One word read by one participant.

    Attributes:
        participant: Who read it.
        item: The item (story, sentence) it belongs to; joins with the models' ``item_id``.
        trial: The trial's position in the participant's session (optional).
        word_index: The word's 0-based position in the item; joins with the models' word lists.
        region: The region (screen or display unit) it was shown in (optional).
        word: The word as displayed (punctuation attached).
        rt_ms: Its reading time in milliseconds (SPR: key to key; Maze: choice latency).
        correct: Maze: whether the right word was chosen (``None`` for SPR).
        choice: Maze: the word chosen (``None`` for SPR).
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    participant: str
    item: str
    trial: int | None = None
    word_index: int
    region: str | None = None
    word: str
    rt_ms: float
    correct: bool | None = None
    choice: str | None = None


REQUIRED = tuple(name for name, field in ReadingTimeRow.model_fields.items() if field.is_required())
"""The columns a table must have."""
OPTIONAL = tuple(name for name in ReadingTimeRow.model_fields if name not in REQUIRED)


STUDY_EXPORT_NAMES = {"participant_id": "participant", "item_id": "item", "trial_index": "trial"}
"""The study export's ``words`` columns (``WordRecord``) -> this table's names: the export is
read as it is written, and its items are the stimulus set's ids, as the models' rows name them."""


def read_reading_times(path: Path) -> pd.DataFrame:
    """Read a per-word reading-time table (``.csv`` or ``.parquet``) and check its columns.

    The study's own export (``words.csv``/``.parquet``) is read as it is: its
    :data:`STUDY_EXPORT_NAMES` columns are renamed.

    Returns:
        The table with the declared columns typed (``participant``, ``item``, ``word`` as
        strings, ``word_index`` as int, ``rt_ms`` as float); other columns kept as they are.

    Raises:
        TracktaleError: A missing file or column, or a value of the wrong type (one line).
    """
    import pandas as pd

    if not path.exists():
        raise TracktaleError(f"no reading-time table at {path}")
    if path.suffix == ".parquet":
        table = pd.read_parquet(path)
    else:
        text = {name: str for name in ("participant", "item", "word", *STUDY_EXPORT_NAMES)}
        table = pd.read_csv(path, dtype=text)
    if "participant" not in table.columns and "participant_id" in table.columns:
        table = table.rename(columns=STUDY_EXPORT_NAMES)
    return check_reading_times(table, str(path))


def check_reading_times(table: pd.DataFrame, source: str = "reading times") -> pd.DataFrame:
    """Check and type a per-word table's declared columns (see :func:`read_reading_times`)."""
    import pandas as pd

    missing = [name for name in REQUIRED if name not in table.columns]
    if missing:
        raise TracktaleError(f"{source}: missing column(s) {', '.join(missing)}")
    table = table.copy()
    for name in ("participant", "item", "word"):
        table[name] = table[name].astype(str)
    if "region" in table.columns:
        table["region"] = table["region"].astype(str)
    for name in ("word_index", "rt_ms"):
        values = pd.to_numeric(table[name], errors="coerce")
        bad = values.isna()
        if bad.any():
            row = int(bad.to_numpy().nonzero()[0][0])
            raise TracktaleError(
                f"{source}: row {row + 1}: {name} is not a number ({table[name].iloc[row]!r})"
            )
        table[name] = values
    table["word_index"] = table["word_index"].astype(int)
    table["rt_ms"] = table["rt_ms"].astype(float)
    duplicated = table.duplicated(["participant", "item", "word_index"])
    if duplicated.any():
        row = table[duplicated].iloc[0]
        raise TracktaleError(
            f"{source}: participant {row['participant']} item {row['item']} word "
            f"{row['word_index']} appears more than once"
        )
    return table
