import math

import pandas as pd
import pytest

from tracktale.analysis.catalog import describe_model, parse_size, training_step, training_tokens
from tracktale.analysis.stats import accuracy_table, mean_interval, wilson_interval


def test_wilson_interval_matches_known_values():
    # Reference values from the closed form (e.g. Newcombe 1998, table I: 0/10 and 81/263).
    low, high = wilson_interval(0, 10)
    assert low == 0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson_interval(81, 263)
    assert (low, high) == pytest.approx((0.2553, 0.3662), abs=1e-4)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


def test_accuracy_table_groups_and_skips_missing_values():
    trials = pd.DataFrame(
        {"task": ["a", "a", "a", "b", "b"], "correct": [1.0, 0.0, 1.0, 1.0, math.nan]}
    )
    table = accuracy_table(trials, ["task"]).set_index("task")
    assert table.loc["a", "n"] == 3 and table.loc["a", "accuracy"] == pytest.approx(2 / 3)
    assert table.loc["b", "n"] == 1 and table.loc["b", "ci_high"] == 1.0
    assert mean_interval([0.5, 0.7])[0] == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("model_id", "family", "size", "instruct", "label"),
    [
        ("EleutherAI/pythia-1.4b", "Pythia", 1.4e9, False, "Pythia 1.4B"),
        ("allenai/OLMo-2-1124-13B-Instruct", "OLMo 2", 13e9, True, "OLMo 2 13B Instruct"),
        ("Qwen/Qwen2.5-72B-Instruct", "other", 72e9, True, "Qwen2.5-72B-Instruct"),
        ("EleutherAI/pythia-410m-deduped", "Pythia", 410e6, False, "Pythia 410M"),
        ("someone/tiny-gpt", "other", math.nan, False, "tiny-gpt"),
    ],
)
def test_models_are_described_from_the_catalog_or_their_name(
    model_id, family, size, instruct, label
):
    description = describe_model(model_id)
    assert description.family == family
    assert description.instruct is instruct
    assert description.label == label
    if math.isnan(size):
        assert math.isnan(description.nominal_parameters)
    else:
        assert description.nominal_parameters == pytest.approx(size)


def test_training_steps_and_tokens_come_from_revision_names():
    assert training_step("step1000") == 1000
    assert training_step("stage1-step140000-tokens294B") == 140000
    assert training_tokens("stage1-step140000-tokens294B") == pytest.approx(2.94e11)
    assert math.isnan(training_step("main")) and math.isnan(training_step(None))
    assert math.isnan(parse_size("big"))
