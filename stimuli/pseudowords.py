"""The pseudoword template: Wuggy nonwords matched to the standard object nouns.

Provenance. ``lexicons/objects_pseudoword.tsv`` holds one pronounceable nonword per standard
object noun (``lexicons/objects_standard.tsv``), chosen by :func:`regenerate_pseudowords` and
written by :func:`write_pseudoword_lexicon`. The nonwords come from Wuggy 1.1.2 (Keuleers &
Brysbaert, 2010; ``pip install wuggy``) run offline with our own English-orthography plugin
(:mod:`tracktale.stimuli.lexicons.wuggy_plugin`) on Wuggy's English orthographic lexicon, which is
test and regeneration data only and never enters the repository. The committed file is what the
generator chose: a test regenerates it from the shared lexicon and compares bytes, so the file
can only change by rerunning the generator.

Generation follows Wuggy's classic algorithm with its default settings: candidates keep the
source's number of syllables and the length of every onset, nucleus and coda (hence its number of
letters), share exactly two thirds of its subsyllabic segments, are built from letter-segment
transitions attested in the lexicon, are searched concentrically (transition frequencies closest to
the source's first) and are not words of the lexicon. Wuggy's own loop stops on a wall-clock
time-out, which would make the result depend on the machine's speed; the search here is the same
loop, but it stops after :data:`MAX_CANDIDATES` candidates or when the search space is exhausted.
From Wuggy's candidates, in Wuggy's order, each noun gets the first one that

* is lowercase ASCII letters only and not a word of the lexicon;
* is made only of letter-segment transitions that at least :data:`MIN_TRANSITION_FREQUENCY`
  lexicon words share, which drops strings such as "qen" or "ptota" that only a loanword or two
  license;
* does not look inflected (final "-s" or "-ed"), since it stands in for a singular noun;
* is not in :data:`EXCLUDED_WORDS`, the few candidates rejected on inspection because they are,
  or sound like, English words the lexicon cannot flag;
* was not given to an earlier noun.

Wuggy draws from Python's :mod:`random`; it is reseeded from the seed and the noun before each
noun, so every choice is reproducible and independent of how long the earlier searches ran.
"""

from __future__ import annotations

import importlib.metadata
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from tracktale.atomic import atomic_write_text
from tracktale.errors import TracktaleError
from tracktale.stimuli.lexicons import objects

DEFAULT_SEED = 1
"""The seed the committed ``objects_pseudoword.tsv`` was generated with."""

PSEUDOWORD_LEXICON_PATH = Path(__file__).parent / "lexicons" / "objects_pseudoword.tsv"
"""Where the committed pseudoword list lives in a source checkout."""

OVERLAP_RATIO = Fraction(2, 3)
"""Share of subsyllabic segments a candidate keeps from its source (Wuggy's classic default)."""

MAX_CANDIDATES = 100
"""Wuggy candidates examined per noun before giving up (replaces Wuggy's wall-clock time-out)."""

MIN_TRANSITION_FREQUENCY = 3
"""Lexicon words that must share each of a candidate's letter-segment transitions."""

EXCLUDED_WORDS = {
    "coan": "sounds like 'cone'",
    "rine": "sounds like 'Rhine'",
    "wollit": "sounds like its source, 'wallet'",
}
"""Candidates rejected on inspection, with why: they are, or sound like, English words."""

_LETTERS = re.compile(r"[a-z]+")


@dataclass(frozen=True, slots=True)
class PseudowordRow:
    """One row of ``objects_pseudoword.tsv``.

    Attributes:
        pseudoword: The nonword.
        article: Its indefinite article, ``"a"`` or ``"an"``.
        source: The standard object noun it was generated from.
    """

    pseudoword: str
    article: str
    source: str


def regenerate_pseudowords(lexicon_path: Path, seed: int = DEFAULT_SEED) -> list[PseudowordRow]:
    """Choose one Wuggy pseudoword for each standard object noun, reproducibly.

    Python's global :mod:`random` state is restored afterwards.

    Args:
        lexicon_path: Wuggy's English orthographic lexicon (``word<TAB>syl-la-bi-fied<TAB>
            frequency per million``).
        seed: Seeds Wuggy's search; the same seed and lexicon give the same rows.

    Returns:
        One row per standard noun, in the order of ``objects_standard.tsv``.

    Raises:
        TracktaleError: If Wuggy is not installed, the lexicon is missing or malformed or lacks
            a standard noun, or no acceptable candidate is found for a noun.
    """
    lexicon_words = _read_lexicon_words(Path(lexicon_path))
    nouns = [noun.word for noun in objects("standard")]
    if missing := [noun for noun in nouns if noun not in lexicon_words]:
        raise TracktaleError(f"Wuggy lexicon {lexicon_path} lacks the noun(s) {', '.join(missing)}")
    wuggy_plugin = _import_wuggy_plugin()
    state = random.getstate()
    try:
        random.seed(seed)
        generator = wuggy_plugin.load_generator(lexicon_path)
        rows: list[PseudowordRow] = []
        for noun in nouns:
            # A per-noun seed keeps each choice independent of how far the search for the
            # previous nouns ran.
            random.seed(f"{seed}:{noun}")
            taken = {row.pseudoword for row in rows}
            pseudoword = _choose(generator, noun, lexicon_words, taken)
            rows.append(PseudowordRow(pseudoword, _article(pseudoword), noun))
    finally:
        random.setstate(state)
    return rows


def render_pseudoword_lexicon(rows: Sequence[PseudowordRow], *, seed: int) -> str:
    """The text of ``objects_pseudoword.tsv``: a provenance header, then one row per line.

    Args:
        rows: The rows from :func:`regenerate_pseudowords`.
        seed: The seed the rows were generated with (recorded in the header).
    """
    excluded = ", ".join(sorted(EXCLUDED_WORDS))
    header = [
        "pseudoword\tarticle\tsource_noun: the pseudoword template, one nonword per standard noun",
        f"Generated by tracktale.stimuli.pseudowords.regenerate_pseudowords, seed {seed};",
        "  do not edit by hand.",
        f"Wuggy {_wuggy_version()} with plugin tracktale.stimuli.lexicons.wuggy_plugin (English",
        "  orthography, onset/nucleus/coda) on Wuggy's orthographic_english.txt (not distributed).",
        f"Wuggy classic settings: subsyllabic segment overlap {OVERLAP_RATIO}, segment lengths",
        "  matched, concentric search, lexicon words rejected; the search ends after",
        f"  {MAX_CANDIDATES} candidates or when exhausted (no wall-clock time-out).",
        "Pick: the first candidate in Wuggy's order that is a-z only, has every transition",
        f"  in >= {MIN_TRANSITION_FREQUENCY} lexicon words, does not end in -s or -ed, is not",
        f"  excluded on inspection ({excluded}) and differs from the earlier picks.",
    ]
    lines = [f"# {line}" for line in header]
    lines += [f"{row.pseudoword}\t{row.article}\t{row.source}" for row in rows]
    return "\n".join(lines) + "\n"


def write_pseudoword_lexicon(
    rows: Sequence[PseudowordRow], path: Path = PSEUDOWORD_LEXICON_PATH, *, seed: int
) -> None:
    """Write ``objects_pseudoword.tsv`` atomically (see :func:`render_pseudoword_lexicon`).

    Args:
        rows: The rows from :func:`regenerate_pseudowords`.
        path: The file to write; by default the committed list in the source tree.
        seed: The seed the rows were generated with (recorded in the header).
    """
    atomic_write_text(path, render_pseudoword_lexicon(rows, seed=seed))


def _choose(generator: Any, noun: str, lexicon_words: frozenset[str], taken: set[str]) -> str:
    # Wuggy's lexicality check already rejects lexicon words (checked again here, ignoring case);
    # the rest adds what Wuggy cannot know: orthotactic typicality, how the word reads after
    # "a", words its lexicon lacks, and the other nouns' picks.
    for examined, (candidate, weakest) in enumerate(_classic_candidates(generator, noun)):
        if examined == MAX_CANDIDATES:
            break
        if (
            _LETTERS.fullmatch(candidate)
            and candidate not in lexicon_words
            and candidate not in EXCLUDED_WORDS
            and not _looks_inflected(candidate)
            and candidate not in taken
            and weakest >= MIN_TRANSITION_FREQUENCY
        ):
            return candidate
    raise TracktaleError(
        f"no acceptable Wuggy pseudoword for {noun!r} among its first {MAX_CANDIDATES} candidates"
    )


def _classic_candidates(generator: Any, word: str) -> Iterator[tuple[str, int]]:
    """Wuggy's classic candidates for ``word`` in its order, ending when the space is exhausted.

    The loop of ``WuggyGenerator.generate_classic`` with its defaults, minus its wall-clock
    time-out: a round admits transitions whose frequency is within ``2**k`` of the source's, and
    once that window covers the largest frequency every later round would repeat this one.

    Yields:
        The candidate and the frequency of its rarest letter-segment transition.
    """
    plugin = generator.language_plugin
    generator.set_reference_sequence(generator.lookup_reference_segments(word))
    reference = generator.reference_sequence
    chain = generator.bigramchain.attribute_filter(reference, "segment_length")
    ceiling = max((f for links in chain.values() for f in links.values()), default=0)
    seen: set[str] = set()
    exponent = 1
    while True:
        window = 2**exponent
        subchain = chain.frequency_filter(reference, window, window)
        subchain.set_startkeys(reference)
        for sequence in subchain.generate() if subchain else ():
            candidate = plugin.output_plain(sequence)
            if candidate in seen:
                continue
            seen.add(candidate)
            if plugin.statistic_overlap_ratio(generator, sequence) != OVERLAP_RATIO:
                continue
            if plugin.statistic_lexicality(generator, sequence) == "W":
                continue
            yield candidate, min(chain.get_frequencies(sequence).values())
        if window >= ceiling:
            return
        exponent += 1


def _read_lexicon_words(path: Path) -> frozenset[str]:
    """The words of a Wuggy orthographic lexicon, after checking every line's format.

    Raises:
        TracktaleError: If the file is missing, unreadable or has a malformed line.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TracktaleError(f"Wuggy lexicon {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TracktaleError(f"cannot read Wuggy lexicon {path}: {error}") from None
    words = set()
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split("\t")
        if len(fields) != 3 or not fields[0] or fields[1].replace("-", "") != fields[0]:
            raise TracktaleError(
                f"{path}:{number}: expected word<TAB>syl-la-bi-fied word<TAB>frequency, "
                f"got {line[:60]!r}"
            )
        try:
            float(fields[2])
        except ValueError:
            raise TracktaleError(
                f"{path}:{number}: frequency {fields[2]!r} is not a number"
            ) from None
        words.add(fields[0].lower())
    if not words:
        raise TracktaleError(f"Wuggy lexicon {path} is empty")
    return frozenset(words)


def _import_wuggy_plugin() -> Any:
    try:
        from tracktale.stimuli.lexicons import wuggy_plugin
    except ImportError as error:
        raise TracktaleError(
            f"regenerating pseudowords needs Wuggy ({error}); pip install 'tracktale[wuggy]'"
        ) from None
    return wuggy_plugin


def _wuggy_version() -> str:
    try:
        return importlib.metadata.version("wuggy")
    except importlib.metadata.PackageNotFoundError:
        raise TracktaleError("Wuggy is not installed; pip install 'tracktale[wuggy]'") from None


def _looks_inflected(word: str) -> bool:
    # The pseudoword replaces a singular noun after "a"/"an"; "a wamps" or "a wawed" would read
    # as a plural or a participle rather than as a new object.
    return word.endswith("ed") or (word.endswith("s") and not word.endswith("ss"))


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"
