"""A-maze distractors: candidates, the choice rule, the CSV round trip, bad CSVs, the check."""

from __future__ import annotations

import csv
import dataclasses
import math

import pytest

from tests.conftest import _generated
from tracktale.errors import TracktaleError
from tracktale.experiment.study.words import check_reading_mode, story_words
from tracktale.scorer import ModelInfo, Scorer, TokenScores
from tracktale.stimuli import maze
from tracktale.stimuli.maze import (
    FIRST_DISTRACTOR,
    MazeSettings,
    apply_distractors,
    candidates,
    check_distractors,
    choose,
    item_distractors,
    make_distractors,
    read_distractors_csv,
    split_word,
    write_distractors_csv,
)
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import build_stimulus_set, read_stimulus_set, write_stimulus_set

pytest.importorskip("wordfreq")

SETTINGS = MazeSettings(n_candidates=6, vocabulary=5000)


def bits_of(word: str) -> float:
    """A made-up surprisal in bits for a continuation: fixed by its letters, so checkable."""
    core = split_word(word.strip())[1].lower()
    return float(sum(ord(char) for char in core) % 37)


class BitsScorer(Scorer):
    """Scores each continuation with :func:`bits_of`, whatever the prefix."""

    def __init__(self, model_id: str = "bits", shift: float = 0.0) -> None:
        self.info = ModelInfo(model_id, None, None, "scripted", "none", "cpu", "none", {})
        self.shift = shift
        self.requests: list = []

    def conditional_score(self, requests):
        self.requests += list(requests)
        return [
            [
                TokenScores(("t",), (-(bits_of(text) + self.shift * (i > 0)) * math.log(2),))
                for i, text in enumerate(request.continuations)
            ]
            for request in requests
        ]

    def sequence_score(self, requests):
        raise NotImplementedError

    def generate(self, requests):
        raise NotImplementedError


@pytest.fixture(scope="module")
def small_set():
    items = _generated("narrative", "human", 1).items[:2]
    return build_stimulus_set(
        items,
        paradigm="narrative",
        protocol="human",
        generator="test",
        generator_version="0",
        seed=1,
        config={"test": True},
        design_cell=get_paradigm("narrative").design_cell,
    )


@pytest.fixture(scope="module")
def rows(small_set):
    return make_distractors(small_set, BitsScorer(), SETTINGS)


def test_the_maze_words_are_the_words_the_study_shows(small_set):
    for item in small_set:
        assert maze.maze_words(item) == story_words(item)


def test_split_word_keeps_punctuation_apart():
    assert split_word('"Box,') == ('"', "Box", ",")
    assert split_word("don't.") == ("", "don't", ".")
    assert split_word("--") == ("--", "", "")


def test_candidates_match_length_and_frequency_and_avoid_the_story():
    import wordfreq

    avoid = {"key", "hey", "the"}
    found = candidates("key", avoid, MazeSettings(n_candidates=10))
    assert len(found) == 10 and not set(found) & avoid
    assert all(abs(len(word) - 3) <= 1 and word.isalpha() and word.islower() for word in found)
    zipf = wordfreq.zipf_frequency("key", "en")
    assert all(abs(wordfreq.zipf_frequency(word, "en") - zipf) <= 0.5 for word in found)
    assert candidates("key", avoid, MazeSettings(n_candidates=10)) == found  # reproducible
    # A narrow window widens with the closest in frequency, after the words inside it.
    narrow = candidates("key", avoid, MazeSettings(n_candidates=30, zipf_tolerance=0.01))
    gaps = [abs(wordfreq.zipf_frequency(word, "en") - zipf) for word in narrow]
    inside = sum(gap <= 0.01 for gap in gaps)
    assert inside < 30 and all(gap <= 0.01 for gap in gaps[:inside])
    assert gaps[inside:] == sorted(gaps[inside:])
    assert all(word[0].isupper() for word in candidates("Key", avoid, SETTINGS))
    excluded = MazeSettings(n_candidates=10, exclude=frozenset(found[:3]))
    assert [w for w in candidates("key", avoid, excluded) if w in found] == found[3:]


def test_the_exclusion_list_is_read_one_word_a_line(tmp_path):
    path = tmp_path / "exclude.txt"
    path.write_text("# abbreviations\nUK\n\nfeb  # a month\n", encoding="utf-8")
    assert maze.read_word_list(path) == {"uk", "feb"}
    with pytest.raises(TracktaleError, match="cannot read"):
        maze.read_word_list(tmp_path / "missing.txt")


def test_the_rule_takes_the_first_candidate_over_the_target_else_the_highest():
    settings = MazeSettings(min_delta=10, min_abs=25)
    scored = [("a", 20.0), ("b", 26.0), ("c", 30.0)]
    assert choose(10.0, scored, settings) == 1  # target max(25, 20) = 25: b is the first over it
    assert choose(18.0, scored, settings) == 2  # target 28: c
    assert choose(25.0, scored, settings) == 2  # target 35: none; c is the highest
    assert choose(25.0, [("a", 3.0), ("b", 3.0)], settings) == 0  # the first of equals
    with pytest.raises(TracktaleError, match="no distractor candidates"):
        choose(1.0, [], settings)


def test_each_distractor_is_the_one_the_rule_picks(small_set, rows):
    by_item = {}
    for row in rows:
        by_item.setdefault(row.item_id, []).append(row)
    for item in small_set:
        words = maze.maze_words(item)
        item_rows = by_item[item.item_id]
        assert [row.word for row in item_rows] == words
        assert item_rows[0].distractor == FIRST_DISTRACTOR and item_rows[0].word_surprisal is None
        avoid = {split_word(word)[1].lower() for word in words}
        used: set[str] = set()
        for row in item_rows[1:]:
            lead, core, trail = split_word(row.word)
            pool = [w for w in candidates(core, avoid, SETTINGS) if w.lower() not in used]
            target = max(25.0, bits_of(core) + 10.0)
            over = [w for w in pool if bits_of(w) >= target]
            expected = over[0] if over else max(pool, key=lambda w: (bits_of(w), -pool.index(w)))
            used.add(expected.lower())
            assert row.distractor == f"{lead}{expected}{trail}"
            assert row.word_surprisal == pytest.approx(bits_of(core))
            assert row.distractor_surprisal == pytest.approx(bits_of(expected))
            assert row.met_threshold == bool(over)
            assert split_word(row.distractor)[1].lower() not in avoid
        chosen = [split_word(row.distractor)[1].lower() for row in item_rows[1:]]
        assert len(chosen) == len(set(chosen))  # no repeat within an item


def test_one_scorer_call_per_item_with_the_text_before_each_word(small_set):
    scorer = BitsScorer()
    item = small_set.items[0]
    item_distractors(item, scorer, SETTINGS)
    words = maze.maze_words(item)
    assert len(scorer.requests) == len(words) - 1
    assert scorer.requests[2].prefix == " ".join(words[:3])
    assert scorer.requests[2].continuations[0] == " " + "".join(split_word(words[3])[:2])


def test_the_csv_round_trip_gives_a_maze_ready_content_hashed_set(small_set, rows, tmp_path):
    path = tmp_path / "distractors.csv"
    assert write_distractors_csv(rows, path) == len(rows)
    with path.open(encoding="utf-8") as handle:
        assert tuple(next(csv.reader(handle))) == maze.COLUMNS
    read = read_distractors_csv(path, small_set)
    assert read == {
        item.item_id: [row.distractor for row in rows if row.item_id == item.item_id]
        for item in small_set
    }
    new_set = apply_distractors(small_set, read, "0" * 64)
    folder = write_stimulus_set(new_set, tmp_path / "maze-set")
    again = read_stimulus_set(folder)  # checks every item's content id and the manifest's sha256
    assert again.sha256 == new_set.sha256 != small_set.sha256
    assert [item.meta["distractors"] for item in again] == list(read.values())
    assert again.manifest.config["maze_distractors"]["source_items_sha256"] == small_set.sha256
    check_reading_mode(again, "maze")  # the study accepts it
    with pytest.raises(TracktaleError):
        check_reading_mode(small_set, "maze")


def _edited(rows, tmp_path, edit):
    path = tmp_path / "edited.csv"
    write_distractors_csv(rows, path)
    with path.open(encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    table = edit(table)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    return path


def _drop_column(table):
    return [{k: v for k, v in row.items() if k != "distractor"} for row in table]


def _set(index, column, value):
    def edit(table):
        table[index][column] = value
        return table

    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_drop_column, r"missing column\(s\) distractor$"),
        (lambda t: t[:5] + t[6:], r": no row for item \w+ word 5 \("),
        (_set(3, "word", "banana"), r"line 5: item \w+ word 3 is .*, not 'banana'$"),
        (_set(3, "distractor", "  "), r"line 5: empty distractor for item \w+ word 3"),
        (_set(3, "distractor", "two words"), r"line 5: distractor 'two words' .* not one word"),
        (_set(3, "item_id", "nope"), r"line 5: no item 'nope' in the stimulus set$"),
        (_set(3, "word_index", "x"), r"line 5: word_index 'x' is not a word of item"),
        (lambda t: t + [t[3]], r"line \d+: item \w+ word 3 given twice$"),
    ],
)
def test_a_bad_edited_csv_is_refused_in_one_line(small_set, rows, tmp_path, edit, message):
    path = _edited(rows, tmp_path, edit)
    with pytest.raises(TracktaleError, match=message) as caught:
        read_distractors_csv(path, small_set)
    assert "\n" not in str(caught.value)


def test_the_check_counts_the_distractors_not_clearly_worse(small_set, rows):
    distractors = {
        item.item_id: [row.distractor for row in rows if row.item_id == item.item_id]
        for item in small_set
    }
    maze_set = apply_distractors(small_set, distractors, "0" * 64)
    deltas = [
        bits_of(row.distractor) - bits_of(row.word)
        for row in rows
        if row.word_index > 0 and split_word(row.word)[1]
    ]
    for shift in (0.0, 5.0):  # a second model finds every distractor 5 bits more surprising
        found = check_distractors(maze_set, BitsScorer("m", shift), min_delta=10)
        assert found.n_words == len(deltas)
        assert found.n_not_worse == sum(delta + shift < 10 for delta in deltas)
    assert 0 < check_distractors(maze_set, BitsScorer(), 10).n_not_worse < len(deltas)
    with pytest.raises(TracktaleError, match="has no meta.distractors"):
        check_distractors(small_set, BitsScorer(), 10)


def _run(argv, capsys):
    from tracktale.app.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out + err


def test_the_commands_write_apply_and_check(small_set, tmp_path, monkeypatch, capsys):
    from tracktale.app import maze as commands

    monkeypatch.setattr(
        commands, "_load", lambda model, *args: BitsScorer(model, shift=float(model == "b"))
    )
    source = write_stimulus_set(small_set, tmp_path / "set")
    out = tmp_path / "d.csv"
    status, text = _run(
        ["stimuli", "maze-distractors", str(source), "--model", "a", "--out", str(out)]
        + ["--candidates", "6", "--vocabulary", "5000"],
        capsys,
    )
    assert status == 0, text
    assert "distractors reach the threshold" in text
    maze_dir = tmp_path / "m"
    status, text = _run(
        ["stimuli", "maze-apply", str(source), str(out), "--out", str(maze_dir)], capsys
    )
    assert status == 0, text
    status, text = _run(
        ["stimuli", "maze-check", str(maze_dir), "--model", "a", "--model", "b"], capsys
    )
    assert status == 0, text
    expected = {
        model: check_distractors(read_stimulus_set(maze_dir), BitsScorer(model, shift), 10.0)
        for model, shift in (("a", 0.0), ("b", 1.0))
    }
    for model, row in expected.items():
        line = next(line for line in text.splitlines() if line.startswith(f"│ {model} "))
        assert [cell.strip() for cell in line.split("│")[2:4]] == [
            str(row.n_words),
            str(row.n_not_worse),
        ]
    out.write_text("item_id,word_index,word\n", encoding="utf-8")
    status, text = _run(
        ["stimuli", "maze-apply", str(source), str(out), "--out", str(tmp_path / "n")], capsys
    )
    assert status == 1 and "missing column(s) distractor" in text
    assert not (tmp_path / "n").exists()


def test_a_set_with_distractors_still_validates_and_bad_distractors_are_named(
    small_set, rows, tmp_path
):
    from tracktale.stimuli.validation import validate_stimulus_set

    distractors = {
        item.item_id: [row.distractor for row in rows if row.item_id == item.item_id]
        for item in small_set
    }
    good = apply_distractors(small_set, distractors, "0" * 64)
    assert [maze.as_generated(item) for item in good] == list(small_set)
    report = validate_stimulus_set(write_stimulus_set(good, tmp_path / "good"))
    assert report.ok, report.problems
    short = {key: value[:-1] for key, value in distractors.items()}
    report = validate_stimulus_set(
        write_stimulus_set(apply_distractors(small_set, short, "0" * 64), tmp_path / "bad")
    )
    assert [problem.message for problem in report.problems] == [
        f"meta.distractors is not a list of {len(maze.maze_words(item))} words (one per word)"
        for item in small_set
    ]


def test_an_imported_dutch_set_gets_dutch_distractors_and_reads_as_a_maze(
    tmp_path, monkeypatch, capsys
):
    import wordfreq

    from tests.experiment.items_sets import dutch_set
    from tracktale.app import maze as commands
    from tracktale.experiment.paradigms import get_human_study

    monkeypatch.setattr(commands, "_load", lambda model, *args: BitsScorer(model))
    dutch = dutch_set()
    assert maze.maze_language(dutch) == "nl"
    source = write_stimulus_set(dutch, tmp_path / "set")
    out = tmp_path / "d.csv"
    status, text = _run(
        ["stimuli", "maze-distractors", str(source), "--model", "a", "--out", str(out)]
        + ["--candidates", "6", "--vocabulary", "5000"],
        capsys,
    )
    assert status == 0, text
    status, text = _run(
        ["stimuli", "maze-apply", str(source), str(out), "--out", str(tmp_path / "m")], capsys
    )
    assert status == 0, text
    maze_set = read_stimulus_set(tmp_path / "m")
    study = get_human_study("items").bind(maze_set, None)
    check_reading_mode(maze_set, "maze", study.reading_units)
    dutch_words = set(wordfreq.top_n_list("nl", 5000))
    english_only = set(wordfreq.top_n_list("en", 5000)) - dutch_words
    cores = [
        split_word(word)[1].lower()
        for item in maze_set
        for word in item.meta["distractors"][1:]
        if split_word(word)[1]
    ]
    assert cores and all(core in dutch_words for core in cores)
    assert not any(core in english_only for core in cores)


def test_a_language_without_a_word_list_is_refused_in_one_line():
    from tests.experiment.items_sets import dutch_set

    dutch = dutch_set()
    config = dict(dutch.manifest.config)
    config["design"] = {**config["design"], "language": "sw"}
    swahili = dataclasses.replace(
        dutch, manifest=dataclasses.replace(dutch.manifest, config=config)
    )
    with pytest.raises(TracktaleError, match="no candidate words for language 'sw'") as error:
        make_distractors(swahili, BitsScorer(), SETTINGS)
    assert "\n" not in str(error.value) and "maze-apply" in str(error.value)
