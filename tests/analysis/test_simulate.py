from collections import Counter

import numpy as np

from tracktale.analysis.simulate import (
    SimulationParams,
    human_design,
    simulate_model_results,
    simulate_outcomes,
)
from tracktale.trial import ParticipantRecord, TrialRecord


def test_latin_square_gives_every_participant_half_of_each_cell_in_each_format(human_set):
    design = human_design(human_set).trials
    main = design[design["role"] == "main"]
    for _, trials in main.groupby("list_id"):
        assert Counter(trials["task"]) == {"explicit": 18, "implicit": 18}
        cells = trials.assign(cell=[human_set.get(i).condition["cell"] for i in trials["item_id"]])
        for _, cell in cells.groupby("cell"):
            assert (cell["task"] == "explicit").sum() == len(cell) // 2
    # Across the two lists every main item is seen in both formats.
    formats = main.groupby("item_id")["task"].agg(set)
    assert all(value == {"explicit", "implicit"} for value in formats)
    assert set(design.loc[design["role"] == "filler", "task"]) == {"comprehension"}


def test_simulated_records_follow_the_trial_contract(simulated_human):
    for row in simulated_human.trials.head(60).to_dict("records"):
        TrialRecord.from_dict({k: (None if v != v else v) for k, v in row.items()})
    assert set(simulated_human.trials["source"]) == {"simulated"}
    assert list(simulated_human.participants.columns) == list(
        ParticipantRecord.__dataclass_fields__
    )
    assert len(simulated_human.trials) == 48 * 50


def test_simulation_is_seeded(human_set):
    design = human_design(human_set)
    params = SimulationParams()
    first = simulate_outcomes(design, 6, params, np.random.default_rng(1))
    second = simulate_outcomes(design, 6, params, np.random.default_rng(1))
    assert first.equals(second)


def test_simulated_model_results_have_the_store_columns(small_model_set):
    results = simulate_model_results(small_model_set, ["EleutherAI/pythia-70m"], seed=0)
    assert set(results["task"]) == {"implicit", "explicit", "sequence"}
    assert {"model_id", "revision", "resolved_sha", "n_parameters", "logprob"} <= set(results)
    assert len(results) == 3 * sum(item.role == "main" for item in small_model_set)


def test_the_design_is_the_studys_own_four_lists(human_set):
    from tracktale.experiment.design import LIST_IDS, build_session

    design = human_design(human_set).trials
    assert list(dict.fromkeys(design["list_id"])) == list(LIST_IDS)
    for list_id in LIST_IDS:
        plan = build_session(human_set, list_id, 0)
        rows = design[design["list_id"] == list_id]
        assert list(rows["item_id"]) == [t.item_id for t in plan.trials]
        assert list(rows["task"]) == [t.task for t in plan.trials]
        assert len(rows) == 50 and (rows["role"] != "practice").sum() == 46
