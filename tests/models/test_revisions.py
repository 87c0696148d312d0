"""Revision presets, the --revisions syntax, and listing a model's revisions."""

from __future__ import annotations

import pytest

from tests.models.conftest import HUB_ID, REVISION_SEEDS
from tracktale.errors import TracktaleError
from tracktale.models.hub import list_revisions
from tracktale.models.revisions import PRESETS, parse_revisions, revision_sort_key, step_of


def test_pythia_publishes_154_checkpoints():
    steps = [step_of(r) for r in PRESETS["pythia"]]
    assert len(steps) == 154 and len(set(steps)) == 154
    assert steps[:11] == [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert steps[11:] == list(range(1000, 143001, 1000))


def test_the_log_spaced_preset_is_a_subset_in_training_order():
    subset = PRESETS["pythia-log"]
    assert set(subset) < set(PRESETS["pythia"])
    assert list(subset) == sorted(subset, key=revision_sort_key)
    assert subset[0] == "step0" and subset[-1] == "step143000" and len(subset) == 20


def test_parse_revisions_expands_presets_and_drops_repeats():
    assert parse_revisions(None) == [None]
    assert parse_revisions("step1000, main,step1000") == ["step1000", "main"]
    assert parse_revisions("main,pythia-log")[:3] == ["main", "step0", "step1"]
    with pytest.raises(TracktaleError, match="empty entry"):
        parse_revisions("step0,,step1")
    with pytest.raises(TracktaleError, match="not a valid revision"):
        parse_revisions("step 1")


def test_steps_and_order_of_olmo_style_names():
    names = [
        "stage2-ingredient1-step1000-tokens5B",
        "stage1-step140000-tokens588B",
        "stage1-step2000-tokens9B",
        "main",
    ]
    assert step_of(names[1]) == 140000 and step_of("main") is None
    assert sorted(names, key=revision_sort_key) == [
        "main",
        "stage1-step2000-tokens9B",
        "stage1-step140000-tokens588B",
        "stage2-ingredient1-step1000-tokens5B",
    ]


def test_list_revisions_from_the_cache_when_offline(offline_hub):
    revisions, source = list_revisions(HUB_ID)
    assert source == "cache"
    assert (
        revisions == sorted(REVISION_SEEDS, key=revision_sort_key) == ["main", "step0", "step1000"]
    )
    with pytest.raises(TracktaleError, match="cannot list the revisions of 'nobody/nothing'"):
        list_revisions("nobody/nothing")


def test_a_local_folder_has_no_revisions(model_dirs):
    with pytest.raises(TracktaleError, match="is a local model; only hub models have revisions"):
        list_revisions(str(model_dirs["pythia"]))
