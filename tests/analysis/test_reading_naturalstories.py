"""The Natural Stories converter: on a two-story miniature in the corpus's layout, and on the
real corpus where ``TRACKTALE_NATURALSTORIES`` names a local clone (skipped without one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REPO_ROOT
from tracktale.analysis.reading.naturalstories import MEAN_READER, convert
from tracktale.analysis.reading.records import check_reading_times
from tracktale.analysis.reading.surprisal import item_names
from tracktale.app.cli import cli
from tracktale.errors import TracktaleError

TOKENS = "word\tzone\titem\nIf\t1\t1\nyou\t2\t1\nwere.\t3\t1\nA\t1\t2\nbird\t2\t2\n"
RTS = (
    "WorkerId\tWorkTimeInSeconds\tcorrect\titem\tzone\tRT\tword\tnItem\n"
    "W1\t900\t6\t1\t1\t350\tIf\t2\nW1\t900\t6\t1\t2\t300\tyou\t2\nW1\t900\t6\t1\t3\t420\twere.\t2\n"
    "W2\t800\t5\t2\t2\t380\tbird\t1\n"
)

# processed_wordinfo.tsv's real header and order (sorted by word, not by story).
WORDINFO = (
    "word\tzone\titem\tnItem\tmeanItemRT\tsdItemRT\tgmeanItemRT\tgsdItemRT\n"
    "A\t1\t2\t80\t410.5\t120.2\t390.25\t1.4\nIf\t1\t1\t84\t350.0\t100.0\t340.5\t1.3\n"
    "bird\t2\t2\t80\t380.0\t90.0\t370.0\t1.3\nwere.\t3\t1\t84\t420.0\t130.0\t400.0\t1.5\n"
    "you\t2\t1\t84\t300.0\t80.0\t290.0\t1.3\n"
)


def _corpus(folder: Path, rts: str = RTS, wordinfo: str = WORDINFO) -> Path:
    (folder / "naturalstories_RTS").mkdir(parents=True)
    (folder / "naturalstories_RTS" / "all_stories.tok").write_text(TOKENS)
    (folder / "naturalstories_RTS" / "processed_RTs.tsv").write_text(rts)
    (folder / "naturalstories_RTS" / "processed_wordinfo.tsv").write_text(wordinfo)
    return folder


def test_the_miniature_converts_to_the_per_word_table(tmp_path):
    reading, stories = convert(_corpus(tmp_path))
    check_reading_times(reading)
    assert stories.to_dict("list") == {
        "item": ["story01", "story02"],
        "text": ["If you were.", "A bird"],
    }
    w2 = reading[reading["participant"] == "W2"].iloc[0]
    assert (w2["item"], w2["word_index"], w2["word"], w2["rt_ms"]) == ("story02", 1, "bird", 380.0)


def test_a_word_that_is_not_the_storys_is_named(tmp_path):
    with pytest.raises(TracktaleError, match="story02 word 1: processed_RTs.tsv has 'bard'"):
        convert(_corpus(tmp_path, RTS.replace("380\tbird", "380\tbard")))
    with pytest.raises(TracktaleError, match="is missing"):
        convert(tmp_path / "nothing")


def test_by_word_means_are_the_geometric_means_of_one_reader(tmp_path):
    reading, stories = convert(_corpus(tmp_path, rts=""), by_word_means=True)
    check_reading_times(reading)
    assert set(reading["participant"]) == {MEAN_READER} and len(stories) == 2
    bird = reading[(reading["item"] == "story02") & (reading["word_index"] == 1)].iloc[0]
    assert (bird["word"], bird["rt_ms"]) == ("bird", 370.0)
    assert reading["item"].tolist() == ["story01"] * 3 + ["story02"] * 2


def test_an_empty_file_of_a_partial_copy_is_named(tmp_path):
    # A snapshot without the large files keeps processed_RTs.tsv as an empty file.
    with pytest.raises(TracktaleError, match=r"processed_RTs.tsv is empty"):
        convert(_corpus(tmp_path, rts=""))
    with pytest.raises(TracktaleError, match="story01 word 0: processed_wordinfo.tsv has 'Iff'"):
        convert(_corpus(tmp_path / "b", wordinfo=WORDINFO.replace("If\t", "Iff\t")), True)


def test_the_script_writes_both_files(tmp_path):
    script = REPO_ROOT / "scripts" / "naturalstories.py"
    done = subprocess.run(
        [sys.executable, str(script), str(_corpus(tmp_path / "ns")), str(tmp_path / "out")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "reading_times.csv").is_file()
    assert "2 stories" in done.stdout
    imported = CliRunner().invoke(cli, [
        "stimuli", "import", str(tmp_path / "out" / "stories.csv"),
        "--design", str(tmp_path / "out" / "design.yaml"), "--out", str(tmp_path / "set"),
    ])  # fmt: skip
    assert imported.exit_code == 0, imported.output
    assert sorted(item_names(tmp_path / "set").values()) == ["story01", "story02"]
    means = subprocess.run(
        [sys.executable, str(script), "--by-word-means", str(tmp_path / "ns"), str(tmp_path / "m")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert means.returncode == 0, means.stderr
    assert "5 reading times of 1 people" in means.stdout


@pytest.mark.skipif(
    not os.environ.get("TRACKTALE_NATURALSTORIES"),
    reason="set TRACKTALE_NATURALSTORIES to a clone of languageMIT/naturalstories",
)
def test_the_real_corpus_converts():
    folder = Path(os.environ["TRACKTALE_NATURALSTORIES"])
    means, stories = convert(folder, by_word_means=True)
    assert len(stories) == 10 and len(means) == 10256
    assert sum(len(text.split()) for text in stories["text"]) == 10256
    if (folder / "naturalstories_RTS" / "processed_RTs.tsv").stat().st_size == 0:
        pytest.skip("this copy of the corpus has no per-reader file")
    reading, _ = convert(folder)
    assert reading["participant"].nunique() > 100
    assert reading["rt_ms"].between(100, 3000).all()
