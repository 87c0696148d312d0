"""Join the models' per-word surprisal (the sequence task's word lists) with reading times.

The sequence task stores, per model, revision and item, one list entry per word: ``words``,
``word_surprisals`` (corrected by default) and ``word_spillover_1``/``_2``
(:class:`tracktale.schema.results.SequenceResult`). Here each list is unrolled into one row
per word and joined on ``item`` = ``item_id`` and ``word_index`` = the position in the list.
Each (model, revision) becomes one column ``surprisal_<n>``, described by a
:class:`SurprisalColumn`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class SurprisalColumn:
    """One model's surprisal column in the joined table.

    Attributes:
        column: Its name in the table (``surprisal_0``, ...).
        model_id: The model.
        revision: Its revision (``""`` for the default branch).
    """

    column: str
    model_id: str
    revision: str

    @property
    def label(self) -> str:
        """``model@revision`` (the model alone for its default branch)."""
        return f"{self.model_id}@{self.revision}" if self.revision else self.model_id


def item_names(stimuli: Path) -> dict[str, str]:
    """Item id -> the item's name in the imported table (``truth["item"]``), where it has one.

    Imported items' ids are hashes of their content; a reading-time table names them as the
    item table did.
    """
    from tracktale.stimulus_set import read_stimulus_set

    return {
        item.item_id: str(item.truth["item"])
        for item in read_stimulus_set(stimuli).items
        if isinstance(item.truth, dict) and "item" in item.truth
    }


def model_words(
    store: Path, names: dict[str, str] | None = None
) -> tuple[pd.DataFrame, list[SurprisalColumn]]:
    """The store's word surprisals: one row per item and word, one column per model.

    Args:
        store: The results store.
        names: Item id -> the name the reading times use (:func:`item_names`).

    Returns:
        A frame with ``item``, ``word_index``, ``model_word`` and the surprisal columns, and
        the columns' descriptions in store order.

    Raises:
        TracktaleError: When the store has no sequence rows with word surprisal.
    """
    import pandas as pd

    from tracktale.models.store import read_results

    rows = read_results(store, ["words", "word_surprisals"])
    rows = rows[(rows["task"] == "sequence") & rows["words"].notna()].copy()
    if names:
        rows["item_id"] = rows["item_id"].map(lambda item: names.get(item, item))
    if rows.empty:
        raise TracktaleError(
            f"{store}: no sequence rows with word surprisal (score with --task sequence "
            "--word-surprisal)"
        )
    pieces, columns = [], []
    keys = rows[["model_id", "revision"]].drop_duplicates().itertuples(index=False)
    for number, (model_id, revision) in enumerate(keys):
        column = SurprisalColumn(f"surprisal_{number}", str(model_id), str(revision or ""))
        columns.append(column)
        mine = rows[(rows["model_id"] == model_id) & (rows["revision"] == revision)]
        long = pd.DataFrame(
            {
                "item": mine["item_id"].astype(str).repeat(mine["words"].map(len)).to_numpy(),
                "word_index": [i for words in mine["words"] for i in range(len(words))],
                "model_word": [w for words in mine["words"] for w in words],
                column.column: [s for values in mine["word_surprisals"] for s in values],
            }
        )
        pieces.append(long.set_index(["item", "word_index"]))
    words = pieces[0]
    for piece in pieces[1:]:
        words = words.join(piece.drop(columns="model_word"), how="outer")
    return words.reset_index(), columns


def join_surprisal(
    reading: pd.DataFrame, words: pd.DataFrame, columns: list[SurprisalColumn]
) -> pd.DataFrame:
    """Add each model's surprisal to every reading-time row (``item`` + ``word_index``).

    Raises:
        TracktaleError: When a read word has no model word, or the two words differ.
    """
    joined = reading.merge(words, on=["item", "word_index"], how="left", validate="m:1")
    absent = joined["model_word"].isna()
    if absent.any():
        row = joined[absent].iloc[0]
        raise TracktaleError(
            f"item {row['item']} word {row['word_index']} ({row['word']!r}): the models "
            f"scored no such word ({int(absent.sum())} read words without one)"
        )
    differ = joined["word"].str.strip() != joined["model_word"].astype(str).str.strip()
    if differ.any():
        row = joined[differ].iloc[0]
        raise TracktaleError(
            f"item {row['item']} word {row['word_index']}: read {row['word']!r} but the "
            f"models scored {row['model_word']!r} ({int(differ.sum())} words do not align)"
        )
    for column in columns:
        joined[column.column] = joined[column.column].astype(float)
    return joined.drop(columns="model_word")
