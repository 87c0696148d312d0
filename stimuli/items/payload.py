"""What an imported item keeps in its ``truth``, declared once.

Like the generated paradigms' payloads (:mod:`tracktale.schema.payloads`), the payload is only
checked (by :meth:`ItemsParadigm.verify <tracktale.stimuli.items.ItemsParadigm.verify>`), never
converted: the item's canonical JSON, and so its content id, is what the importer wrote. It
holds the item's content only, never where it came from (file, line), so that the same row
imported from another file (an export, a spreadsheet) is the same item.
"""

from __future__ import annotations

from typing import Literal

from pydantic import with_config
from typing_extensions import TypedDict

from tracktale.item import Item
from tracktale.schema.stimulus import STRICT_DATA

ResponseKind = Literal["typed", "choice", "none"]
"""What the participant does after reading: type an answer, pick an option, or nothing."""
MatchRule = Literal["exact", "contains"]
"""How a response is compared with an answer (see :mod:`tracktale.stimuli.items.answers`)."""
SegmentSource = Literal["segmenter", "regions"]
"""Where an item's word spans come from: the language's segmenter or the region column."""


@with_config(STRICT_DATA)
class Response(TypedDict):
    """The human response and how it is judged.

    ``accepted``: typed, every accepted answer (the first is the item's ``answer``); choice,
    the right option alone; none, empty. ``options``: the forced-choice options in table order
    (empty unless ``kind`` is ``choice``).
    """

    kind: ResponseKind
    accepted: list[str]
    options: list[str]
    match: MatchRule


@with_config(STRICT_DATA)
class ItemsTruth(TypedDict):
    """The truth of an imported item.

    ``item``: the item's label in the table (its rows share it across conditions). ``list``:
    the counterbalancing list it belongs to (``None``: every list, as fillers and practice
    items). ``screens``: the texts read one after the other (``context`` is them joined).
    ``segments``: ``[start, end]`` character spans of the words or regions of ``context``;
    ``segmenter``: the word segmenter of the item's language (answers are split by it too).
    """

    item: str
    list: str | None
    screens: list[str]
    response: Response
    segments: list[list[int]]
    segmenter: str
    segments_from: SegmentSource


def design_cell(item: Item) -> str:
    """An imported item's design cell: ``main/attractor=pl,number=sg``, ``filler/-``, ...

    Here, not on the paradigm, so that the importer needs nothing of the paradigm's module.
    """
    cell = ",".join(f"{key}={item.condition[key]}" for key in sorted(item.condition))
    return f"{item.role}/{cell or '-'}"
