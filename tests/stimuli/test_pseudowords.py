"""The Wuggy plugin, the pseudoword generator and the committed pseudoword list."""

from __future__ import annotations

import itertools
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tracktale.errors import TracktaleError
from tracktale.stimuli import pseudowords
from tracktale.stimuli.lexicons import objects

try:
    from tracktale.stimuli.lexicons import wuggy_plugin
except ImportError:
    wuggy_plugin = None

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_LEXICON = REPO_ROOT.parent / "shared" / "wuggy" / "orthographic_english.txt"
COMMITTED = REPO_ROOT / "stimuli" / "lexicons" / "objects_pseudoword.tsv"

requires_wuggy = pytest.mark.skipif(
    wuggy_plugin is None, reason="wuggy is not installed (pip install 'tracktale[wuggy]')"
)
requires_lexicon = pytest.mark.skipif(
    not SHARED_LEXICON.is_file(),
    reason=f"Wuggy's English lexicon is not at {SHARED_LEXICON} (../shared from the repo root)",
)


def committed_rows() -> list[list[str]]:
    lines = COMMITTED.read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines if not line.startswith("#")]


def lexicon_words() -> set[str]:
    with SHARED_LEXICON.open(encoding="utf-8") as handle:
        return {line.split("\t")[0].lower() for line in handle}


@pytest.fixture(scope="module")
def shared_generator():
    state = random.getstate()
    random.seed(0)
    yield wuggy_plugin.load_generator(SHARED_LEXICON)
    random.setstate(state)


@requires_wuggy
@pytest.mark.parametrize(
    ("syllabified", "segments"),
    [
        ("book-mark", "b:oo:k:m:a:rk"),
        ("pho-to", "ph:o::t:o:"),
        ("coin", "c:oi:n"),
        ("key", "k:e:y"),  # a 'y' after a vowel is a coda glide
        ("yes", "y:e:s"),  # ... before a vowel an onset
        ("gym", "g:y:m"),  # ... and the nucleus when it is the only vowel
        ("quill", "qu:i:ll"),
        ("rhy-thm", "rh:y::thm::"),  # no vowel: the whole syllable is the onset
    ],
)
def test_plugin_splits_syllables_into_onset_nucleus_coda(tmp_path, syllabified, segments):
    plugin = wuggy_plugin.EnglishOrthographyPlugin(tmp_path / "lexicon.txt")
    representation = plugin.transform(syllabified).representation
    assert plugin.output_segmental(representation) == segments
    assert representation[0].letters == "^" and representation[-1].letters == "$"
    assert {segment.sequence_length for segment in representation} == {syllabified.count("-") + 1}


@requires_wuggy
def test_plugin_reads_a_lexicon_outside_its_own_folder(tmp_path):
    lexicon = tmp_path / "elsewhere" / "tiny lexicon.txt"
    lexicon.parent.mkdir()
    lexicon.write_text("book\tbook\t1.00\nlook\tlook\t2.00\nbookmark\tbook-mark\t0.50\n")
    generator = wuggy_plugin.load_generator(lexicon)
    assert generator.lookup_reference_segments("book") == "book"
    assert "look" in generator.word_lexicon["l", 4]
    assert len(generator.neighbor_lexicon) == 3


def test_the_generator_module_does_not_import_wuggy():
    code = "import sys, tracktale.stimuli.pseudowords; assert 'wuggy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_lexicon_is_a_one_line_error(tmp_path):
    with pytest.raises(TracktaleError, match="does not exist") as error:
        pseudowords.regenerate_pseudowords(tmp_path / "absent.txt")
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("book\tbook\n", r":1: expected word"),
        ("book\tbook\t1.0\nkey\tk-y\t1.0\n", r":2: expected word"),
        ("book\tbook\tmany\n", r":1: frequency 'many'"),
        ("", "is empty"),
        ("book\tbook\t1.0\n", "lacks the noun"),
    ],
)
def test_malformed_lexicon_is_a_one_line_error(tmp_path, text, problem):
    lexicon = tmp_path / "lexicon.txt"
    lexicon.write_text(text, encoding="utf-8")
    with pytest.raises(TracktaleError, match=problem) as error:
        pseudowords.regenerate_pseudowords(lexicon)
    assert "\n" not in str(error.value)


def test_committed_list_has_one_pseudoword_per_standard_noun():
    rows = committed_rows()
    assert [row[2] for row in rows] == [noun.word for noun in objects("standard")]
    assert len({row[0] for row in rows}) == len(rows) == 12
    for pseudoword, article, source in rows:
        assert re.fullmatch(r"[a-z]+", pseudoword)
        assert len(pseudoword) == len(source)
        assert article == ("an" if pseudoword[0] in "aeiou" else "a")
        assert pseudoword not in pseudowords.EXCLUDED_WORDS


@requires_lexicon
def test_committed_pseudowords_are_not_lexicon_words():
    words = lexicon_words()
    assert "wallet" in words
    assert not [row[0] for row in committed_rows() if row[0] in words]


@requires_wuggy
@requires_lexicon
def test_candidate_search_follows_wuggy_classic(shared_generator):
    # Same seed, same candidates in the same order as Wuggy's own generate_classic.
    random.seed("photo")
    classic = shared_generator.generate_classic(
        ["photo"], ncandidates_per_sequence=10, max_search_time_per_sequence=60
    )
    random.seed("photo")
    ours = itertools.islice(pseudowords._classic_candidates(shared_generator, "photo"), 10)
    assert [candidate for candidate, _ in ours] == [match["pseudoword"] for match in classic]


@pytest.mark.slow
@requires_wuggy
@requires_lexicon
def test_regeneration_reproduces_the_committed_file_byte_for_byte(tmp_path):
    state = random.getstate()
    rows = pseudowords.regenerate_pseudowords(SHARED_LEXICON, seed=pseudowords.DEFAULT_SEED)
    assert random.getstate() == state
    written = tmp_path / "objects_pseudoword.tsv"
    pseudowords.write_pseudoword_lexicon(rows, written, seed=pseudowords.DEFAULT_SEED)
    assert written.read_bytes() == COMMITTED.read_bytes()


@pytest.mark.slow
@requires_wuggy
@requires_lexicon
def test_the_cli_command_regenerates_the_committed_file(tmp_path, capsys):
    from tracktale.app.cli import main

    written = tmp_path / "pseudowords.tsv"
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "stimuli",
                "regenerate-pseudowords",
                "--lexicon",
                str(SHARED_LEXICON),
                "--out",
                str(written),
            ]
        )
    assert exit_info.value.code == 0
    assert written.read_bytes() == COMMITTED.read_bytes()
    assert "bookmark -> " in capsys.readouterr().out
