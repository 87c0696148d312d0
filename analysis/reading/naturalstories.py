"""Convert a local copy of the Natural Stories SPR corpus into the per-word table.

The corpus (Futrell et al. 2021, github.com/languageMIT/naturalstories, CC BY-NC-SA 4.0) is
never shipped with tracktale: the user clones it and points :func:`convert` at the clone.
Read are ``naturalstories_RTS/processed_RTs.tsv`` (one row per worker and word after the
corpus's own processing: 100 < RT < 3000 ms, more than 4 of 6 comprehension questions right,
story 3's blank token removed; columns ``WorkerId``, ``item`` (the story, 1-10), ``zone`` (the
word's 1-based position), ``RT``, ``word``) and ``naturalstories_RTS/all_stories.tok`` (``word``,
``zone``, ``item``: each story one word a row), from which the stories' texts are rebuilt.

``by_word_means=True`` reads ``naturalstories_RTS/processed_wordinfo.tsv`` instead (the same
processing's per-word summary: ``nItem`` readers, ``meanItemRT``, ``gmeanItemRT`` and the sds):
one row per word whose ``rt_ms`` is the geometric mean over readers (exp of the mean log RT, the
scale the regressions model) and whose participant is :data:`MEAN_READER`: a by-word
analysis, for a copy without the per-reader file (a snapshot that leaves out large files) or
for a quick check. Hold out items (``--fold-by items``), since there is one "participant".
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

RTS = Path("naturalstories_RTS")
RT_COLUMNS = ("WorkerId", "item", "zone", "RT", "word")
WORDINFO_COLUMNS = ("word", "zone", "item", "nItem", "gmeanItemRT")
MEAN_READER = "mean-reader"
"""The one participant of the by-word table."""


def _read(path: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    import pandas as pd

    if not path.is_file():
        raise TracktaleError(f"not a Natural Stories folder: {path} is missing")
    if path.stat().st_size == 0:
        # A repository snapshot that leaves out large files keeps them as empty files.
        raise TracktaleError(f"{path} is empty (a partial copy of the corpus?)")
    table = pd.read_csv(path, sep="\t", dtype={"word": str}, keep_default_na=False)
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise TracktaleError(f"{path}: missing column(s) {', '.join(missing)}")
    return table


def story_id(item: int) -> str:
    """The item id a story gets in the per-word table (``story01`` ... ``story10``)."""
    return f"story{int(item):02d}"


def design_yaml(items: list[str]) -> str:
    """A design file importing ``stories.csv`` for the sequence task.

    The importer needs a factor: ``story``, one level per story, between items (the column the
    script writes beside ``item`` and ``text``).
    """
    return (
        "language: en\nfactors:\n  story:\n"
        f"    levels: [{', '.join(items)}]\n    within_items: false\n"
        "columns:\n  item: item\n  text: text\ntasks:\n  models: [sequence]\n"
    )


def convert(folder: Path, by_word_means: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-word reading times and the stories' texts.

    Args:
        folder: The corpus's folder (a clone of languageMIT/naturalstories).
        by_word_means: Read the per-word geometric means over readers (one row per word)
            instead of every reader's reading times.

    Returns:
        ``(reading, stories)``: the :class:`ReadingTimeRow` table (``word_index`` = zone - 1,
        ``region`` = the story) and ``item``, ``text`` (the story's words joined by spaces, so
        whitespace words are the corpus's words, as the sequence task's word lists count them).

    Raises:
        TracktaleError: When a file or column is missing or a read word is not the story's.
    """
    import pandas as pd

    tokens = _read(folder / RTS / "all_stories.tok", ("word", "zone", "item"))
    tokens = tokens.sort_values(["item", "zone"])
    source = "processed_wordinfo.tsv" if by_word_means else "processed_RTs.tsv"
    if by_word_means:
        rts = _read(folder / RTS / source, WORDINFO_COLUMNS)
        rts = rts.assign(WorkerId=MEAN_READER, RT=rts["gmeanItemRT"])
    else:
        rts = _read(folder / RTS / source, RT_COLUMNS)
    stories = pd.DataFrame(
        {
            "item": [story_id(item) for item in tokens["item"].unique()],
            "text": [" ".join(group["word"]) for _, group in tokens.groupby("item", sort=True)],
        }
    )
    reading = pd.DataFrame(
        {
            "participant": rts["WorkerId"].astype(str),
            "item": rts["item"].map(story_id),
            "word_index": rts["zone"].astype(int) - 1,
            "region": rts["item"].map(story_id),
            "word": rts["word"].astype(str),
            "rt_ms": rts["RT"].astype(float),
        }
    )
    expected = tokens.assign(item=tokens["item"].map(story_id), word_index=tokens["zone"] - 1)
    check = reading.merge(expected, on=["item", "word_index"], how="left", suffixes=("", "_tok"))
    differ = check["word"] != check["word_tok"]
    if differ.any():
        row = check[differ].iloc[0]
        raise TracktaleError(
            f"{row['item']} word {row['word_index']}: {source} has {row['word']!r}, "
            f"all_stories.tok {row['word_tok']!r}"
        )
    return reading.sort_values(["participant", "item", "word_index"]), stories
