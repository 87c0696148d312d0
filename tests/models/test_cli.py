"""``tracktale models``: score, list-revisions and compact from the command line."""

from __future__ import annotations

import pytest

from tests.models.conftest import HUB_ID, score_argv, shard_keys
from tracktale.app.cli import main
from tracktale.models.store import read_results


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_score_both_tasks_then_resume(offline_hub, stimulus_dir, tmp_path, capsys):
    out_dir = tmp_path / "results"
    argv = score_argv(
        stimulus_dir, HUB_ID, out_dir, "--revisions", "step0,step1000", "--task", "both",
        "--limit", "4", "--calibrate", "--batch-size", "3",
    )  # fmt: skip
    code, out, err = run(argv, capsys)
    assert code == 0, err
    assert "step1000" in out and "implicit" in out and "explicit" in out
    frame = read_results(out_dir)
    assert len(frame) == 16 and set(frame["task"]) == {"implicit", "explicit"}
    assert frame["resolved_sha"].notna().all() and frame["prior_good"].notna().sum() == 8
    assert "items/s" in err  # progress lines (stderr is not a terminal here)
    code, out, err = run(argv, capsys)
    assert code == 0 and "nothing missing, not loaded" in err
    assert len(shard_keys(out_dir)) == 16


def test_revision_and_revisions_are_exclusive(stimulus_dir, capsys):
    argv = score_argv(stimulus_dir, "m", "out", "--revision", "a", "--revisions", "b")
    code, _, err = run(argv, capsys)
    assert code == 2 and "not both" in err


def test_list_revisions(offline_hub, capsys):
    code, out, err = run(["models", "list-revisions", HUB_ID], capsys)
    assert code == 0 and out.split() == ["main", "step0", "step1000"]
    assert "from the cache" in err


def test_compact(model_dirs, stimulus_dir, tmp_path, capsys):
    out_dir = tmp_path / "results"
    for task in ("implicit", "sequence"):
        pythia = model_dirs["pythia"]
        argv = score_argv(stimulus_dir, pythia, out_dir, "--task", task, "--limit", "3")
        code, _, err = run(argv, capsys)
        assert code == 0, err
    assert len(list(out_dir.glob("part-*.parquet"))) == 2
    code, out, _ = run(["models", "compact", str(out_dir)], capsys)
    assert code == 0 and "6 rows in one shard (merged 2 shards)" in out
    assert len(list(out_dir.glob("part-*.parquet"))) == 1


def test_a_task_that_applies_to_no_item_says_so_and_names_those_that_do(tmp_path, capsys):
    from tests.conftest import _generated
    from tracktale.stimulus_set import write_stimulus_set

    boxes = tmp_path / "boxes"
    write_stimulus_set(_generated("boxes", "smoke", 1), boxes)
    # The default task (implicit) compares two continuations; boxes items have none. Before,
    # the run said "nothing missing, not loaded" and "nothing scored" and exited 0.
    code, out, err = run(score_argv(boxes, "default", tmp_path / "results"), capsys)
    assert code == 1, (out, err)
    assert "--task implicit: does not apply to the" in err and "boxes items" in err
    assert "tasks that do: explicit, sequence" in err
    assert len(err.strip().splitlines()) == 1 and "nothing" not in out + err
    assert not (tmp_path / "results").exists()


def test_tasks_that_apply_to_none_of_the_items_are_named():
    from tests.conftest import _generated
    from tracktale.models.runner import tasks_without_items

    boxes = list(_generated("boxes", "smoke", 1))
    narrative = list(_generated("narrative", "human", 1).select(role="main"))
    assert tasks_without_items(("implicit", "explicit"), boxes) == ["implicit"]
    assert tasks_without_items(("implicit", "explicit", "sequence"), narrative) == []
