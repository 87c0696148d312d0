"""The results store: atomic shards, one row per key when read, compaction, no torch."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from tests.models.conftest import shard_keys
from tracktale.errors import TracktaleError
from tracktale.models import store
from tracktale.scorer import ModelInfo, ResultRecord

INFO = ModelInfo("org/m", "step1", "abc", "hf", "float32", "cpu", "none", {"n_parameters": 10})


def record(item_id, task="implicit", revision="step1", **scores):
    return ResultRecord(
        "org/m",
        revision,
        item_id,
        task,
        "sha",
        "narrative",
        INFO,
        {"correct": True, "logprob_good": -1.0, "tokens_good": [" a", "b"], **scores},
    )


def test_rows_are_flat_columns_readable_with_pandas(tmp_path):
    store.write_shard(tmp_path, [record("a"), record("b", task="explicit", output="box")])
    frame = store.read_results(tmp_path)
    assert len(frame) == 2 and set(store.STANDARD_COLUMNS) <= set(frame.columns)
    row = frame.set_index("item_id").loc["a"]
    assert row["revision"] == "step1" and row["resolved_sha"] == "abc" and row["n_parameters"] == 10
    assert list(row["tokens_good"]) == [" a", "b"]
    assert frame["correct"].dtype == "boolean" and pd.isna(row["output"])
    assert frame.set_index("item_id").loc["b", "output"] == "box"


def test_flat_lists_stay_lists_and_nested_values_are_sorted_json(tmp_path):
    nested = {"b": [1, (2, 3)], "a": {"y": 1, "x": None}}
    row = store.record_to_row(
        record("a", ids=(4, 5), pairs=[(1, 2), (3, 4)], per_box=nested, label="x"), written_at=0
    )
    assert row["ids"] == [4, 5] and row["label"] == "x"
    assert row["pairs"] == "[[1, 2], [3, 4]]"
    assert row["per_box"] == '{"a": {"x": null, "y": 1}, "b": [1, [2, 3]]}'
    store.write_shard(tmp_path, [record("a", per_box=nested)])
    assert store.read_results(tmp_path).loc[0, "per_box"] == row["per_box"]


def test_the_latest_row_of_a_key_wins_and_each_key_is_read_once(tmp_path):
    store.write_shard(tmp_path, [record("a", logprob_good=-5.0), record("b")])
    store.write_shard(tmp_path, [record("a", logprob_good=-7.0)])
    frame = store.read_results(tmp_path)
    assert sorted(frame["item_id"]) == ["a", "b"]
    assert frame.set_index("item_id").loc["a", "logprob_good"] == -7.0


def test_no_revision_is_stored_as_an_empty_string(tmp_path):
    store.write_shard(tmp_path, [record("a", revision=None)])
    assert store.read_results(tmp_path)["revision"].tolist() == [""]


def test_compaction_keeps_each_key_once_in_one_shard(tmp_path):
    for value in (-1.0, -2.0, -3.0):
        store.write_shard(tmp_path, [record("a", logprob_good=value), record(f"x{value}")])
    (tmp_path / ".part-stale.parquet.tmp").write_bytes(b"half a shard")
    before = store.read_results(tmp_path)
    rows, merged = store.compact(tmp_path)
    assert (rows, merged) == (4, 3)
    assert len(list(tmp_path.glob("part-*.parquet"))) == 1
    assert len(shard_keys(tmp_path)) == 4
    after = store.read_results(tmp_path)
    pd.testing.assert_frame_equal(
        before.sort_values("item_id").reset_index(drop=True),
        after.sort_values("item_id").reset_index(drop=True),
    )


def test_a_failed_write_leaves_no_shard(tmp_path, monkeypatch):
    def broken(table, handle):
        handle.write(b"PAR1 partial")
        raise OSError("disk full")

    monkeypatch.setattr(store.pq, "write_table", broken)
    with pytest.raises(OSError):
        store.write_shard(tmp_path, [record("a")])
    assert not list(tmp_path.iterdir())


def test_reading_errors_are_one_line(tmp_path):
    with pytest.raises(TracktaleError, match="no results at"):
        store.read_results(tmp_path / "missing")
    (tmp_path / "part-bad.parquet").write_bytes(b"not parquet")
    with pytest.raises(TracktaleError, match="cannot read results shard"):
        store.read_results(tmp_path)


def test_an_empty_store_reads_as_an_empty_frame_with_the_standard_columns(tmp_path):
    frame = store.read_results(tmp_path)
    assert len(frame) == 0 and set(store.STANDARD_COLUMNS) <= set(frame.columns)


def test_the_store_module_does_not_import_torch():
    code = "import sys, tracktale.models.store; print('torch' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_a_reader_lists_the_shards_again_when_a_merge_removes_one(tmp_path, monkeypatch):
    writer = store.ShardWriter(tmp_path)
    writer.write([record("a")])
    writer.write([record("b")])
    original, merged = store._read_shard, []

    def merging_meanwhile(path, columns):
        if not merged:  # another process merges the shards between listing and reading
            merged.append(True)
            merged.append(writer.merge())
        return original(path, columns)

    monkeypatch.setattr(store, "_read_shard", merging_meanwhile)
    frame = store.read_results(tmp_path)
    assert sorted(frame["item_id"]) == ["a", "b"] and merged[1] is not None
    assert len(list(tmp_path.glob("part-*.parquet"))) == 1


def test_a_writer_does_not_merge_what_a_compaction_took(tmp_path):
    writer = store.ShardWriter(tmp_path)
    writer.write([record("a")])
    writer.write([record("b")])
    store.write_shard(tmp_path, [record("c")])
    assert store.compact(tmp_path) == (3, 3)
    assert writer.merge() is None  # its shards are gone, their rows in the compacted one
    assert shard_keys(tmp_path) == sorted(shard_keys(tmp_path)) and len(shard_keys(tmp_path)) == 3
