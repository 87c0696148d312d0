import pandas as pd
import pytest

from tracktale.analysis.data.load import load_human_trials, load_model_results
from tracktale.analysis.data.tidy import build_trial_table, item_table, select
from tracktale.errors import TracktaleError


def _export(human, folder, suffix):
    folder.mkdir()
    for name, table in (("trials", human.trials), ("participants", human.participants)):
        if suffix == "csv":
            table.to_csv(folder / "trials.csv" if name == "trials" else folder / f"{name}.csv")
        else:
            table.to_parquet(folder / f"{name}.parquet")
    return folder


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_human_exports_load_from_a_folder(simulated_human, tmp_path, suffix):
    folder = _export(simulated_human, tmp_path / "export", suffix)
    loaded = load_human_trials(folder)
    assert len(loaded.trials) == len(simulated_human.trials)
    assert set(loaded.trials["correct"].unique()) <= {0.0, 1.0}
    assert loaded.participants["attentive"].eq(1).all()


def test_the_tidy_table_takes_the_design_from_the_items(trial_table, human_set):
    human = trial_table[trial_table["agent_kind"] == "human"]
    some = human[human["role"] == "main"].iloc[0]
    item = human_set.get(some["item_id"])
    assert some["complexity"] == item.condition["complexity"]
    assert some["sentences_since_focus"] == item.meta["sentences_since_focus"]
    assert set(trial_table["agent_kind"]) == {"human", "model"}
    assert set(trial_table.loc[trial_table["agent_kind"] == "human", "source"]) == {"simulated"}
    models = trial_table[trial_table["agent_kind"] == "model"]
    assert set(models["family"]) == {"Pythia", "OLMo 2", "other"}
    assert models.loc[models["revision"] == "step1000", "step"].eq(1000).all()


def test_a_missing_trial_column_is_named(simulated_human, tmp_path):
    path = tmp_path / "trials.csv"
    simulated_human.trials.drop(columns=["correct"]).to_csv(path, index=False)
    with pytest.raises(TracktaleError, match=r"trials.csv: column 'correct' is missing"):
        load_human_trials(path)


def test_an_invalid_value_is_named_with_its_row(simulated_human):
    trials = simulated_human.trials.copy()
    trials.loc[5, "task"] = "recall"
    with pytest.raises(TracktaleError, match=r"row 6: task 'recall' is not one of"):
        load_human_trials(trials)


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("status", "finished", r"row 3: status 'finished' is not one of started, completed"),
        ("source", "mturk", r"row 3: source 'mturk' is not one of online, lab, simulated"),
        ("attentive", "yes", r"row 3: attentive 'yes' is not true or false"),
    ],
)
def test_participant_columns_are_checked_as_the_record_declares_them(
    simulated_human, column, value, message
):
    participants = simulated_human.participants.copy()
    participants[column] = participants[column].astype(object)
    participants.loc[2, column] = value
    with pytest.raises(TracktaleError, match=message):
        load_human_trials((simulated_human.trials, participants))


def test_a_trial_on_an_unknown_item_is_refused(simulated_human, human_set):
    trials = simulated_human.trials.copy()
    trials.loc[2, "item_id"] = "0000000000000000"
    with pytest.raises(TracktaleError, match="item '0000000000000000' is not in the given"):
        build_trial_table(item_table([human_set]), load_human_trials(trials))


def test_model_results_missing_a_column_are_refused(model_results, tmp_path):
    path = tmp_path / "results.csv"
    model_results.drop(columns=["task"]).to_csv(path, index=False)
    with pytest.raises(TracktaleError, match="column 'task' is missing"):
        load_model_results(path)


def test_a_results_folder_without_a_store_falls_back_to_its_table(model_results, tmp_path):
    model_results.to_parquet(tmp_path / "results.parquet")
    loaded = load_model_results(tmp_path)
    assert len(loaded) == len(model_results)
    assert loaded["revision"].map(type).eq(str).all()


def test_selection_names_an_unknown_template_and_an_empty_selection(trial_table):
    with pytest.raises(TracktaleError, match="unknown template 'fancy' \\(the data has: "):
        select(trial_table, template="fancy")
    with pytest.raises(TracktaleError, match="no trials match"):
        select(trial_table, template="pseudoword", agent_kind="human")
    with pytest.raises(TracktaleError, match="no such column"):
        select(trial_table, colour="red")
    assert len(select(trial_table, template="standard", task="implicit")) > 0


def test_no_data_at_all_is_an_error(human_set):
    with pytest.raises(TracktaleError, match="no data"):
        build_trial_table(item_table([human_set]))


def test_human_trials_load_straight_from_the_study_database(tmp_path, monkeypatch):
    import dataclasses

    from tracktale.experiment.simulation.run import simulate_study
    from tracktale.experiment.study.config import load_study

    url = f"sqlite:///{tmp_path / 'study.db'}"
    monkeypatch.delenv("DATABASE_URL", raising=False)
    config = dataclasses.replace(load_study(None), database=url)
    simulate_study(config, n=2, seed=3)
    human = load_human_trials(url)
    assert set(human.trials["source"]) == {"simulated"}
    assert human.origin == url
    assert human.trials["participant_id"].nunique() == 2
    assert len(human.participants) == 2
    assert set(human.trials["role"]) >= {"main", "filler", "practice"}


def test_a_database_without_a_study_is_a_one_line_error(tmp_path):
    with pytest.raises(TracktaleError, match="no study database"):
        load_human_trials(f"sqlite:///{tmp_path / 'nothing.db'}")


def test_condition_keys_that_collide_with_trial_columns_are_prefixed():
    from tracktale.analysis.data.tidy import _prefixed

    assert _prefixed({"task": "x", "complexity": 2}, "condition_") == {
        "condition_task": "x",
        "complexity": 2,
    }
    assert isinstance(pd.DataFrame(), pd.DataFrame)


def test_a_database_that_is_not_a_study_is_a_one_line_error(tmp_path):
    import sqlite3

    sqlite3.connect(tmp_path / "other.db").execute(
        "create table notes (x text)"
    ).connection.commit()
    with pytest.raises(TracktaleError, match="cannot read the study database"):
        load_human_trials(f"sqlite:///{tmp_path / 'other.db'}")


def test_a_database_password_never_reaches_the_report():
    from tracktale.analysis.data.load import _without_password

    assert _without_password("postgresql+psycopg://ann:s3cret@db:5432/study") == (
        "postgresql+psycopg://ann:***@db:5432/study"
    )
    assert _without_password("sqlite:///study.sqlite") == "sqlite:///study.sqlite"


def test_a_folder_that_is_neither_a_store_nor_holds_a_table_is_named(tmp_path):
    with pytest.raises(TracktaleError, match="not a results store"):
        load_model_results(tmp_path)
