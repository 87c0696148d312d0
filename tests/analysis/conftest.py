"""Fixtures of the analysis tests: simulated people and models on small stimulus sets."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from tests.conftest import _generated

MODELS = {
    "EleutherAI/pythia-70m": [""],
    "EleutherAI/pythia-1.4b": ["", "step1000", "step64000"],
    "EleutherAI/pythia-12b": [""],
    "allenai/OLMo-2-0425-1B": [""],
    "allenai/OLMo-2-0425-1B-Instruct": [""],
    "meta-llama/Llama-3.3-70B-Instruct": [""],
}


@pytest.fixture(scope="session")
def small_model_set():
    """A model-protocol set with 4 items per cell and template (132 items)."""
    return _generated("narrative", "model", 1, (("per_condition", 4),))


@functools.cache
def _simulated_human(n: int, seed: int, guessers: float):
    from tracktale.analysis.power.simulate import SimulationParams, simulate_human_data

    human_set = _generated("narrative", "human", 1)
    return simulate_human_data(human_set, n, SimulationParams(guessers=guessers), seed=seed)


@pytest.fixture(scope="session")
def simulated_human():
    """48 simulated participants (10% guessers) on the default human set."""
    return _simulated_human(48, 7, 0.1)


@pytest.fixture(scope="session")
def model_results(small_model_set):
    from tracktale.analysis.power.simulate import simulate_model_results

    return simulate_model_results(small_model_set, MODELS, seed=3)


@pytest.fixture(scope="session")
def trial_table(human_set, small_model_set, simulated_human, model_results):
    """The tidy table of the simulated people and models."""
    from tracktale.analysis.data.load import load_model_results
    from tracktale.analysis.data.tidy import build_trial_table, item_table

    items = item_table([human_set, small_model_set])
    return build_trial_table(items, simulated_human, load_model_results(model_results))


def explicit_records(stimulus_set, answer_for, model_id="org/tiny", revision=None):
    """Explicit-task result records of one model on a set, as a scoring run writes them.

    ``answer_for(item, index)`` gives the model's output; it is scored by the paradigm.
    """
    from tracktale.scorer import ModelInfo, ResultRecord
    from tracktale.stimuli.registry import get_paradigm

    paradigm = get_paradigm(stimulus_set.manifest.paradigm)
    info = ModelInfo(model_id, revision, None, "hf", "float32", "cpu", "none")
    records = []
    for index, item in enumerate(stimulus_set):
        output = answer_for(item, index)
        scores = {**dataclasses.asdict(paradigm.score_response(item, output)), "output": output}
        scores |= {"prompt_format": "plain", "max_new_tokens": 64}
        records.append(
            ResultRecord(
                model_id,
                revision,
                item.item_id,
                "explicit",
                stimulus_set.sha256,
                paradigm.name,
                info,
                scores,
            )  # fmt: skip
        )
    return records
