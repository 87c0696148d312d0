"""Participant-facing English is in US spelling (issue 31, item 19).

The stories mixed "organizing" and "colorful" with "organised", the consent forms said
"anonymised". A few UK spellings remain in stimulus texts on purpose: changing them would
change the bytes of a paper's protocol (tests/tracktale/test_byte_identity.py) or, for other
seeds and options, the items a seed gives without a new generator revision. They are listed
in :data:`FROZEN`, each where it occurs, so that no new one slips in beside them.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEXTS = (
    *sorted((ROOT / "ethics").glob("*.md")),
    ROOT / "experiment" / "locales" / "en.yaml",
    *sorted((ROOT / "experiment" / "templates").rglob("*.html")),
    *sorted((ROOT / "stimuli" / "lexicons").glob("*.t*")),
    *sorted((ROOT / "stimuli" / "narrative").glob("*.py")),
    ROOT / "stimuli" / "boxes" / "render.py",
    ROOT / "stimuli" / "arithmetic" / "render.py",
)
"""The English a participant reads: consent and debriefing, the study's screens, the stories."""

UK = re.compile(
    r"\b(\w*(?:organis|anonymis|pseudonymis|recognis|realis|minimis|summaris|apologis|"
    r"familiaris|randomis|colour|favour|behaviour|neighbour|honour|centre|theatre|"
    r"practis(?=e\b|ed\b|ing\b))\w*|grey|whilst|amongst|programme|catalogue)\b",
    re.IGNORECASE,
)
"""UK spellings a participant might meet (the US ones: organize, color, neighbor, gray, ...)."""

FROZEN = {
    # Filler stories of the narrative human protocol: its bytes would change.
    ("stimuli/narrative/fillers.py", "organised"),
    ("stimuli/lexicons/filler_slots.tsv", "neighbour"),
    ("stimuli/lexicons/filler_slots.tsv", "grey"),
    # The colour slot's name and its questions, asked only past the tenth filler: other
    # options of the same seed would give other items under the same generator revision.
    ("stimuli/narrative/fillers.py", "colour"),
    ("stimuli/lexicons/filler_slots.tsv", "colour"),
    # Distractor sentences of the boxes distractors protocol: its bytes would change.
    ("stimuli/lexicons/distractors.txt", "practised"),
    ("stimuli/lexicons/distractors.txt", "grey"),
}


def _found() -> set[tuple[str, str]]:
    found = set()
    for path in TEXTS:
        for match in UK.finditer(path.read_text(encoding="utf-8")):
            found.add((str(path.relative_to(ROOT)), match.group(1).lower()))
    return found


def test_participant_facing_english_is_in_us_spelling():
    assert _found() - FROZEN == set()


def test_the_check_finds_uk_spelling():
    assert [m.group(1) for m in UK.finditer("Data are anonymised; a grey, colourful box.")] == [
        "anonymised",
        "grey",
        "colourful",
    ]
    assert not UK.search("Data are anonymized; a gray, colorful box; we practice.")
