"""Convert a local clone of the Natural Stories corpus into tracktale's per-word table.

Usage: ``python scripts/naturalstories.py [--by-word-means] NATURALSTORIES_FOLDER OUT_FOLDER``

Writes ``OUT_FOLDER/reading_times.csv`` (for ``tracktale analysis reading --times``) and
``OUT_FOLDER/stories.csv`` (``item``, ``story``, ``text``: the ten stories, for the models to
score) with ``OUT_FOLDER/design.yaml`` to import it (``tracktale stimuli import``).
``--by-word-means``: one row per word, its geometric mean RT over readers, from
``processed_wordinfo.tsv`` (analyse it with ``--fold-by items``).
The corpus is CC BY-NC-SA 4.0: never commit its files or what this script writes from them.
See :mod:`tracktale.analysis.reading.naturalstories`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tracktale.analysis.reading.naturalstories import convert, design_yaml
from tracktale.atomic import atomic_write_text
from tracktale.errors import TracktaleError


def main(arguments: list[str]) -> int:
    """Convert; print what was written, or one line saying what is wrong."""
    by_word_means = "--by-word-means" in arguments
    arguments = [argument for argument in arguments if argument != "--by-word-means"]
    if len(arguments) != 2 or any(argument.startswith("-") for argument in arguments):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    folder, out = Path(arguments[0]), Path(arguments[1])
    try:
        reading, stories = convert(folder, by_word_means)
    except TracktaleError as error:
        print(f"naturalstories: error: {error}", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "reading_times.csv", reading.to_csv(index=False, lineterminator="\n"))
    table = stories.assign(story=stories["item"])[["item", "story", "text"]]
    atomic_write_text(out / "stories.csv", table.to_csv(index=False, lineterminator="\n"))
    atomic_write_text(out / "design.yaml", design_yaml(stories["item"].tolist()))
    people = reading["participant"].nunique()
    print(f"wrote {len(reading)} reading times of {people} people, {len(stories)} stories: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
