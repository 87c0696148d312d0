"""A-maze distractors from a language model: choose, write for review, read back, check.

The Maze task (Forster et al. 2009) shows each word of a text beside a distractor that does
not continue the sentence; A-maze (Boyce, Futrell & Levy 2020, "Maze Made Easy", JML 111)
chooses the distractors automatically with a language model. Their procedure (the code they
published with the paper, ``vboyce/Maze``, ``maze_automate/sentence_set.py`` and
``wordfreq_distractor.py``): for each word, candidates from ``wordfreq``'s English list
(lowercase letters only) matched to the word's length and frequency, the frequency window
widened when too few match; each candidate's surprisal in the sentence's context; the first
candidate whose surprisal reaches ``max(min_abs, word's surprisal + min_delta)`` is taken
(``min_delta`` 10 bits and ``min_abs`` 25 bits in their parameter file), and when none does,
the candidate of highest surprisal; the first word of a sentence gets ``x-x-x``; the
distractor takes the real word's punctuation; no distractor repeats within an item.

What we do the same: the candidate list, the rule and its defaults (in bits), ``x-x-x`` first,
the punctuation, no repeat within an item. Where we differ (listed in
``docs/explanation/departures.md``): the candidates in the frequency window are tried in a
random order fixed by a hash of the word and the candidate instead of a fresh shuffle, so the
choice is reproducible; a fixed number of candidates per
word (20 by default, against their 100), to keep a story's scoring tractable on a transformer;
a candidate takes the real word's capitalisation; a set in another language than English (an
imported table's ``language``) draws its candidates from ``wordfreq``'s list of that language
(lowercase letters of any script; a language without a list is refused, and its distractors
are the researcher's CSV); and the surprisal is the sum of the word's
token surprisals after the text before it (the scorer's ``conditional_score``), without the
end-of-word factor of the corrected word surprisal (:mod:`tracktale.models.surprisal`), since
the scorer contract gives no next-token distribution for continuations.

A text is cut into words as the Maze shows them: at white space, punctuation staying with its
word (:func:`maze_words`, the same as ``tracktale.experiment.study.words.story_words``; a
test checks that they agree). Surprisal is in bits throughout this module, as the A-maze
literature states its thresholds.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tracktale.atomic import atomic_write_text
from tracktale.errors import TracktaleError
from tracktale.item import Item, content_id, item_from_dict
from tracktale.scorer import ChoiceRequest, Scorer, TokenScores
from tracktale.stimulus_set import StimulusSet, items_jsonl

FIRST_DISTRACTOR = "x-x-x"
"""The first word's distractor: nothing can be wrong before the text has begun."""

COLUMNS = (
    "item_id",
    "word_index",
    "word",
    "distractor",
    "word_surprisal",
    "distractor_surprisal",
    "met_threshold",
    "model",
)
"""The columns of the distractors CSV, in order."""

_REQUIRED = ("item_id", "word_index", "word", "distractor")
"""The columns read back (the others are for the researcher's review)."""

_LETTERS = re.compile(r"^[a-z]+$")
_LN2 = math.log(2)


@dataclass(frozen=True)
class MazeSettings:
    """How distractors are chosen.

    Attributes:
        length_tolerance: A candidate's length may differ from the word's by this many letters.
        zipf_tolerance: A candidate's Zipf frequency may differ from the word's by this much
            (wider only when fewer than ``n_candidates`` match).
        n_candidates: Candidates scored per word.
        min_delta: Bits by which a distractor's surprisal must exceed the word's (Boyce et al.
            2020: 10).
        min_abs: Bits a distractor's surprisal must reach at least (Boyce et al. 2020: 25).
        vocabulary: How many of ``wordfreq``'s most frequent words are candidates.
        exclude: Words never used as distractors (lowercase; abbreviations, names, slurs, ...).
        language: Whose ``wordfreq`` list the candidates and frequencies come from (the
            set's language: :func:`maze_language`).
    """

    length_tolerance: int = 1
    zipf_tolerance: float = 0.5
    n_candidates: int = 20
    min_delta: float = 10.0
    min_abs: float = 25.0
    vocabulary: int = 50_000
    exclude: frozenset[str] = frozenset()
    language: str = "en"

    def target(self, word_surprisal: float) -> float:
        """The surprisal a distractor must reach against a word of ``word_surprisal`` bits."""
        return max(self.min_abs, word_surprisal + self.min_delta)


@dataclass(frozen=True)
class DistractorRow:
    """One row of the distractors CSV: a word of an item and the distractor shown against it.

    Attributes:
        item_id: The item.
        word_index: The word's position in the item's text, from 0.
        word: The word as shown (punctuation included).
        distractor: The distractor as shown (the word's punctuation copied onto it).
        word_surprisal: The word's surprisal in bits (``None`` for the first word).
        distractor_surprisal: The distractor's surprisal in bits (``None`` for the first word).
        met_threshold: Whether the distractor reached the settings' target (``None`` for the
            first word).
        model: The scoring model (``id`` or ``id@revision``).
    """

    item_id: str
    word_index: int
    word: str
    distractor: str
    word_surprisal: float | None
    distractor_surprisal: float | None
    met_threshold: bool | None
    model: str


def maze_words(item: Item) -> list[str]:
    """The words of ``item``'s text as the Maze shows them (split on white space)."""
    return item.context.split()


def split_word(word: str) -> tuple[str, str, str]:
    """A word's leading punctuation, its core and its trailing punctuation.

    The core runs from the first letter or digit to the last: ``'"Box,'`` -> ``('"', 'Box',
    ',')``, ``"don't"`` -> ``('', "don't", '')``.
    """
    start = next((i for i, char in enumerate(word) if char.isalnum()), len(word))
    end = next((i for i in range(len(word), start, -1) if word[i - 1].isalnum()), start)
    return word[:start], word[start:end], word[end:]


def _wordfreq() -> Any:
    try:
        import wordfreq
    except ImportError:
        raise TracktaleError(
            "A-maze distractors need wordfreq: pip install 'tracktale[analysis]'"
        ) from None
    return wordfreq


def maze_language(stimulus_set: StimulusSet) -> str:
    """The ``wordfreq`` language of ``stimulus_set``'s texts (its paradigm says which).

    Raises:
        TracktaleError: If ``wordfreq`` has no word list for it (then the distractors are the
            researcher's: a CSV of the columns ``item_id,word_index,word,distractor`` for
            ``maze-apply``).
    """
    from tracktale.stimuli.registry import get_paradigm

    tag = get_paradigm(stimulus_set.manifest.paradigm).language(stimulus_set)
    language = tag.split("-")[0].lower()
    if language not in _wordfreq().available_languages():
        raise TracktaleError(
            f"maze-distractors has no candidate words for language {tag!r} (wordfreq has no "
            "list for it): write the distractors yourself as a CSV with the columns "
            "item_id,word_index,word,distractor and give it to maze-apply"
        )
    return language


def _candidate_word(word: str, language: str) -> bool:
    """A candidate: English, lowercase ASCII letters (as Boyce et al.); else lowercase letters."""
    if language == "en":
        return bool(_LETTERS.match(word))
    return word.isalpha() and word == word.lower()


@functools.cache
def _pool(vocabulary: int, language: str = "en") -> dict[int, tuple[tuple[str, float], ...]]:
    """``wordfreq``'s most frequent words of lowercase letters and their Zipf, by length."""
    wordfreq = _wordfreq()
    by_length: dict[int, list[tuple[str, float]]] = {}
    for word in wordfreq.top_n_list(language, vocabulary):
        if _candidate_word(word, language):
            frequency = wordfreq.zipf_frequency(word, language)
            by_length.setdefault(len(word), []).append((word, frequency))
    return {length: tuple(words) for length, words in by_length.items()}


def _zipf(word: str, language: str = "en") -> float:
    return float(_wordfreq().zipf_frequency(word, language))


def _shuffled(core: str, word: str) -> bytes:
    """A candidate's place in a word's reproducible random order (a hash of the two)."""
    return hashlib.sha256(f"{core.lower()} {word}".encode()).digest()


def candidates(core: str, avoid: set[str], settings: MazeSettings) -> list[str]:
    """The candidates for a word's core, in the order they are tried.

    Words of the pool within ``length_tolerance`` letters of the core's length, not in
    ``avoid`` (lowercase), not excluded and not the word itself. Those within
    ``zipf_tolerance`` of its Zipf frequency come first, in a random order that a hash of the
    word and the candidate fixes (Boyce et al. shuffle them); when fewer than
    ``n_candidates`` are, the window widens: the closest in frequency follow. A candidate
    takes the word's capital first letter.
    """
    length, zipf, own = len(core), _zipf(core, settings.language), core.lower()
    pool = _pool(settings.vocabulary, settings.language)
    matched = [
        (abs(frequency - zipf), word)
        for size in range(
            length - settings.length_tolerance, length + settings.length_tolerance + 1
        )
        for word, frequency in pool.get(size, ())
        if word not in avoid and word not in settings.exclude and word != own
    ]
    inside = sorted(
        (word for gap, word in matched if gap <= settings.zipf_tolerance),
        key=lambda word: _shuffled(core, word),
    )
    widened = [word for gap, word in sorted(matched) if gap > settings.zipf_tolerance]
    chosen = (inside + widened)[: settings.n_candidates]
    if core[:1].isupper():
        chosen = [word.capitalize() for word in chosen]
    return chosen


def _bits(scores: TokenScores) -> float:
    return -scores.reduce("sum") / _LN2


def choose(word_bits: float, scored: Sequence[tuple[str, float]], settings: MazeSettings) -> int:
    """The index of the chosen candidate among ``scored`` (candidate, surprisal in bits).

    The first, in order, that reaches :meth:`MazeSettings.target`; when none does, the one of
    highest surprisal (the first of equals).

    Raises:
        TracktaleError: If there is no candidate.
    """
    if not scored:
        raise TracktaleError("no distractor candidates (widen the tolerances or the vocabulary)")
    target = settings.target(word_bits)
    for index, (_, bits) in enumerate(scored):
        if bits >= target:
            return index
    return max(range(len(scored)), key=lambda index: (scored[index][1], -index))


def model_name(scorer: Scorer) -> str:
    """``model_id`` or ``model_id@revision``: how a scorer is named in the CSV and the check."""
    info = scorer.info
    return info.model_id if info.revision is None else f"{info.model_id}@{info.revision}"


def item_distractors(item: Item, scorer: Scorer, settings: MazeSettings) -> list[DistractorRow]:
    """Choose a distractor for every word of ``item`` (one scorer call for the whole item)."""
    words = maze_words(item)
    if not words:
        return []
    avoid = {split_word(word)[1].lower() for word in words}
    model = model_name(scorer)
    rows = [DistractorRow(item.item_id, 0, words[0], FIRST_DISTRACTOR, None, None, None, model)]
    requests, pools, used = [], [], set()
    for index in range(1, len(words)):
        lead, core, _ = split_word(words[index])
        pool = candidates(core, avoid, settings) if core else []
        pools.append(pool)
        continuations = (f" {lead}{core}", *(f" {lead}{word}" for word in pool))
        requests.append(ChoiceRequest(" ".join(words[:index]), continuations))
    answers = scorer.conditional_score(requests) if requests else []
    for index, pool, scores in zip(range(1, len(words)), pools, answers, strict=True):
        lead, core, trail = split_word(words[index])
        if not core:  # punctuation alone: nothing to match, nothing to score
            rows.append(
                DistractorRow(
                    item.item_id, index, words[index], FIRST_DISTRACTOR, None, None, None, model
                )
            )
            continue
        word_bits = _bits(scores[0])
        # A distractor already used in the item is not used again (Boyce et al. 2020).
        scored = [
            (word, _bits(score))
            for word, score in zip(pool, scores[1:], strict=True)
            if word.lower() not in used
        ]
        best = choose(word_bits, scored, settings)
        word, bits = scored[best]
        used.add(word.lower())
        rows.append(
            DistractorRow(
                item.item_id,
                index,
                words[index],
                f"{lead}{word}{trail}",
                round(word_bits, 4),
                round(bits, 4),
                bits >= settings.target(word_bits),
                model,
            )
        )
    return rows


def make_distractors(
    stimulus_set: StimulusSet, scorer: Scorer, settings: MazeSettings | None = None
) -> list[DistractorRow]:
    """Distractors for every word of every item of ``stimulus_set``, in set and text order.

    The candidates are words of the set's language (:func:`maze_language`), whatever
    ``settings.language`` says.
    """
    settings = replace(settings or MazeSettings(), language=maze_language(stimulus_set))
    return [row for item in stimulus_set for row in item_distractors(item, scorer, settings)]


def _cell(value: object) -> str:
    return "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def write_distractors_csv(rows: Iterable[DistractorRow], path: str | Path) -> int:
    """Write the rows for review, atomically (a temporary file renamed over ``path``).

    Returns:
        The number of rows written.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    count = 0
    for row in rows:
        writer.writerow([_cell(getattr(row, column)) for column in COLUMNS])
        count += 1
    try:
        atomic_write_text(path, buffer.getvalue())
    except OSError as error:
        raise TracktaleError(f"cannot write {path}: {error.strerror}") from None
    return count


def _line_error(path: Path, line: int, problem: str) -> TracktaleError:
    return TracktaleError(f"{path} line {line}: {problem}")


def read_distractors_csv(path: str | Path, stimulus_set: StimulusSet) -> dict[str, list[str]]:
    """Read a (reviewed, perhaps edited) distractors CSV against the set it was made for.

    Returns:
        Item id -> one distractor per word of the item's text.

    Raises:
        TracktaleError: One line naming the first problem: a missing column, an unknown item,
            a word index that is not a position of the item's text, a word that is not the
            item's word at that index, an empty distractor, a word given twice, or a word of
            the set without a row.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise TracktaleError(f"cannot read {source}: {getattr(error, 'strerror', error)}") from None
    reader = csv.DictReader(io.StringIO(text))
    missing = [column for column in _REQUIRED if column not in (reader.fieldnames or ())]
    if missing:
        raise TracktaleError(f"{source}: missing column(s) {', '.join(missing)}")
    given: dict[str, dict[int, str]] = {}
    for row in reader:
        item_id, index, distractor = _check_row(source, reader.line_num, row, stimulus_set)
        if index in given.setdefault(item_id, {}):
            raise _line_error(source, reader.line_num, f"item {item_id} word {index} given twice")
        given[item_id][index] = distractor
    result = {}
    for item in stimulus_set:
        words, found = maze_words(item), given.get(item.item_id, {})
        absent = next((index for index in range(len(words)) if index not in found), None)
        if absent is not None:
            raise TracktaleError(
                f"{source}: no row for item {item.item_id} word {absent} ({words[absent]!r})"
            )
        result[item.item_id] = [found[index] for index in range(len(words))]
    return result


def _check_row(
    source: Path, line: int, row: Mapping[str, str | None], stimulus_set: StimulusSet
) -> tuple[str, int, str]:
    item_id = (row.get("item_id") or "").strip()
    try:
        words = maze_words(stimulus_set.get(item_id))
    except TracktaleError:
        raise _line_error(source, line, f"no item {item_id!r} in the stimulus set") from None
    raw_index = (row.get("word_index") or "").strip()
    if not raw_index.isdigit() or int(raw_index) >= len(words):
        raise _line_error(
            source,
            line,
            f"word_index {raw_index!r} is not a word of item {item_id} (0-{len(words) - 1})",
        )
    index = int(raw_index)
    word = row.get("word") or ""
    if word != words[index]:
        raise _line_error(
            source, line, f"item {item_id} word {index} is {words[index]!r}, not {word!r}"
        )
    distractor = (row.get("distractor") or "").strip()
    if not distractor:
        raise _line_error(
            source, line, f"empty distractor for item {item_id} word {index} ({word!r})"
        )
    if len(distractor.split()) != 1:
        raise _line_error(
            source,
            line,
            f"distractor {distractor!r} for item {item_id} word {index} is not one word",
        )
    return item_id, index, distractor


def apply_distractors(
    stimulus_set: StimulusSet, distractors: Mapping[str, Sequence[str]], csv_sha256: str
) -> StimulusSet:
    """A new stimulus set: ``stimulus_set``'s items with their ``meta.distractors``.

    The items get new content ids (their meta changed); the manifest keeps the source's
    paradigm, generator, seed and counts, and its config records where the distractors came
    from (``maze_distractors``: the source set's sha256 and the CSV's).
    """
    items = []
    for item in stimulus_set:
        data = item.to_dict()
        data["meta"] = {**data["meta"], "distractors": list(distractors[item.item_id])}
        data["item_id"] = content_id(data)
        items.append(item_from_dict(data))
    config = {
        **stimulus_set.manifest.config,
        "maze_distractors": {
            "source_items_sha256": stimulus_set.sha256,
            "csv_sha256": csv_sha256,
        },
    }
    manifest = replace(
        stimulus_set.manifest,
        config=config,
        items_sha256=hashlib.sha256(items_jsonl(items)).hexdigest(),
    )
    return StimulusSet(manifest=manifest, items=tuple(items))


def as_generated(item: Item) -> Item:
    """``item`` without its ``meta.distractors`` (what its generator made), for re-checking it."""
    if "distractors" not in item.meta:
        return item
    data = item.to_dict()
    data["meta"] = {key: value for key, value in data["meta"].items() if key != "distractors"}
    data["item_id"] = content_id(data)
    return item_from_dict(data)


def distractor_problems(item: Item) -> list[str]:
    """What is wrong with ``item``'s ``meta.distractors``: not one word per word of its text."""
    given = item.meta.get("distractors")
    if given is None:
        return []
    words = maze_words(item)
    if not isinstance(given, list) or len(given) != len(words):
        return [f"meta.distractors is not a list of {len(words)} words (one per word)"]
    bad = next(
        (i for i, word in enumerate(given) if not isinstance(word, str) or len(word.split()) != 1),
        None,
    )
    return [] if bad is None else [f"meta.distractors[{bad}] is not one word"]


@dataclass(frozen=True)
class CheckRow:
    """How one model sees a set's distractors.

    Attributes:
        model: The model (``id`` or ``id@revision``).
        n_words: Words with a distractor to check (every word but each text's first).
        n_not_worse: Distractors whose surprisal exceeds the word's by less than ``min_delta``.
        median_delta: The median of distractor minus word surprisal, in bits.
    """

    model: str
    n_words: int
    n_not_worse: int
    median_delta: float | None


def check_distractors(stimulus_set: StimulusSet, scorer: Scorer, min_delta: float) -> CheckRow:
    """Count the distractors that ``scorer`` does not find clearly worse than their words.

    A distractor is clearly worse when its surprisal after the text before it exceeds the
    word's by at least ``min_delta`` bits (both scored without their trailing punctuation, as
    when they were chosen).

    Raises:
        TracktaleError: If an item has no ``meta.distractors`` with one per word.
    """
    deltas = []
    for item in stimulus_set:
        words = maze_words(item)
        given = item.meta.get("distractors")
        if not isinstance(given, list) or len(given) != len(words):
            raise TracktaleError(
                f"item {item.item_id} has no meta.distractors with one word for each of its "
                f"{len(words)} words (make them with maze-distractors and maze-apply)"
            )
        requests = []
        for index in range(1, len(words)):
            lead, core, _ = split_word(words[index])
            d_lead, d_core, _ = split_word(given[index])
            if core and d_core:
                prefix = " ".join(words[:index])
                requests.append(ChoiceRequest(prefix, (f" {lead}{core}", f" {d_lead}{d_core}")))
        for word, distractor in scorer.conditional_score(requests):
            deltas.append(_bits(distractor) - _bits(word))
    deltas.sort()
    median = None if not deltas else (deltas[(len(deltas) - 1) // 2] + deltas[len(deltas) // 2]) / 2
    return CheckRow(
        model_name(scorer),
        len(deltas),
        sum(delta < min_delta for delta in deltas),
        None if median is None else round(median, 2),
    )


def read_word_list(path: str | Path) -> frozenset[str]:
    """Words one a line, lowercased (blank lines and ``#`` comments ignored).

    Raises:
        TracktaleError: If the file cannot be read.
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise TracktaleError(f"cannot read {path}: {getattr(error, 'strerror', error)}") from None
    return frozenset(
        line.split("#", 1)[0].strip().lower() for line in lines if line.split("#", 1)[0].strip()
    )
