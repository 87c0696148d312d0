"""People and models side by side under one answer rule; how each model answered."""

import pandas as pd
import pytest

from tracktale.analysis.narrative import answers, side_by_side
from tracktale.analysis.report.build import ReportContext, ReportOptions
from tracktale.errors import TracktaleError


def _rows():
    return pd.DataFrame(
        {
            "agent_kind": ["human", "human", "model", "model", "model", "model"],
            "agent": ["p1", "p1", "m", "m", "m", "m"],
            "label": ["", "", "M", "M", "M", "M"],
            "task": ["explicit", "explicit", "explicit", "explicit", "explicit", "implicit"],
            # A person who typed "box bag": wrong by the study's rule, right by the paper's.
            "correct": [False, True, True, True, False, True],
            "correct_paper_rule": [True, True, None, None, None, None],
            "flags": ["several_answers", "", None, None, None, None],
            "several_answers": [None, None, True, False, False, None],
            "finish_reason": [None, None, "stop", "length", "length", None],
            "max_new_tokens": [None, None, 24, 24, 24, None],
        }
    )


def test_one_rule_scores_people_and_models_alike():
    rows = _rows()
    contains = answers.correct_under(rows, "contains").tolist()
    one = answers.correct_under(rows, "one-answer").tolist()
    assert contains == [True, True, True, True, False, True]
    assert one == [False, True, False, True, False, True]
    with pytest.raises(ValueError, match="unknown answer rule"):
        answers.correct_under(rows, "exact")


def test_the_answers_table_counts_budget_hits_and_several_containers():
    table = answers.answers_table(_rows()[lambda r: r["agent_kind"] == "model"])
    explicit = table.set_index("task").loc["explicit"]
    assert (explicit["n"], explicit["hit_budget"], explicit["several_containers"]) == (3, 2, 1)
    assert explicit["budget"] == "24"
    assert explicit["accuracy_contains"] == pytest.approx(2 / 3)
    assert explicit["accuracy_one-answer"] == pytest.approx(1 / 3)
    implicit = table.set_index("task").loc["implicit"]
    assert implicit["accuracy_contains"] == implicit["accuracy_one-answer"] == 1.0


def _section(trial_table, simulated_human, folder, **options):
    from tracktale.analysis.data.exclusions import apply_exclusions

    human = trial_table[trial_table["agent_kind"] == "human"]
    models = trial_table[trial_table["agent"] == "EleutherAI/pythia-70m"]
    analysed = apply_exclusions(human, simulated_human.participants).trials
    context = ReportContext(
        "narrative",
        human,
        simulated_human.participants,
        models,
        ReportOptions(engine="none", **options),
        folder / "figures",
        folder / "tables",
        shared={"human_analysed": analysed},
    )
    return side_by_side.side_by_side_section(context), analysed


@pytest.fixture(scope="module")
def one_model_section(trial_table, simulated_human, tmp_path_factory):
    return _section(trial_table, simulated_human, tmp_path_factory.mktemp("side"))


def _people_cell(section, analysed):
    """The people's explicit C1 row of the written joint table, and that cell's trials."""
    written = pd.read_csv(section.tables[0].paths["csv"])
    row = written[(written["agent"] == "humans") & (written["task"] == "explicit")]
    row = row.sort_values("complexity").iloc[0]
    explicit = analysed[analysed["task"] == "explicit"]
    cell = explicit[explicit["complexity"] == row["complexity"]]
    return row, cell.assign(one=answers.correct_under(cell, "one-answer"))


def test_the_people_s_intervals_follow_the_accuracy_interval_option(
    one_model_section, trial_table, simulated_human, tmp_path
):
    from tracktale.analysis.stats.proportions import (
        TWO_WAY,
        clustered_accuracy_interval,
        two_way_accuracy_interval,
    )

    section, analysed = one_model_section  # the default: two-way
    row, cell = _people_cell(section, analysed)
    _, low, high, method = two_way_accuracy_interval(cell["one"], cell["agent"], cell["item_id"])
    assert method == TWO_WAY
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high))
    bootstrap, _ = _section(trial_table, simulated_human, tmp_path, accuracy_interval="bootstrap")
    row, _ = _people_cell(bootstrap, analysed)
    _, low, high, _ = clustered_accuracy_interval(cell["one"], cell["agent"])
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high))
    assert "bootstrap over participants" in bootstrap.figures[0].title
    assert "bootstrap over participants" in bootstrap.tables[0].title
    with pytest.raises(TracktaleError, match="unknown accuracy interval"):
        side_by_side.interval_columns("jackknife")


def test_the_side_by_side_section_names_its_rule_and_intervals(one_model_section):
    section, analysed = one_model_section
    (figure,) = section.figures
    caption = figure.title
    assert "one-answer rule" in caption
    # The report's default --accuracy-interval: over participants and items.
    assert "over participants and items" in caption and "Wilson" in caption
    assert "bootstrap" not in caption
    assert "50% in panel B is chance" in caption and "no chance level" in caption
    joint, how = section.tables[0], section.tables[1]
    assert "one-answer" in joint.title and "over participants and items" in joint.title
    assert list(joint.table["who"]) == ["Participants"] * 2 + ["Pythia 70M"] * 2
    written = pd.read_csv(joint.paths["csv"])
    people = written[(written["agent"] == "humans") & (written["task"] == "explicit")]
    explicit = analysed[analysed["task"] == "explicit"]
    expected = answers.correct_under(explicit, "one-answer").mean()
    assert (people["n"] * people["accuracy"]).sum() / people["n"].sum() == pytest.approx(expected)
    assert {"hit_budget", "several_containers", "accuracy_contains"} <= set(how.table.columns)
    # Provenance: once per model, in a sentence, not as a table of hashes on the page.
    assert [t.name for t in section.tables] == ["humans_and_models", "model_answers"]


def test_stored_answers_reach_the_table_with_their_containers(small_model_set, tmp_path):
    from tests.analysis.conftest import explicit_records
    from tracktale.analysis.data.load import load_model_results
    from tracktale.analysis.data.tidy import build_trial_table, item_table
    from tracktale.models.store import write_shard

    items = small_model_set.select(role="main")[:6]

    def answer(item, index):
        # Half the answers list every container: right by the paper's rule, wrong by one-answer.
        other = "basket" if item.answer != "basket" else "box"
        return f"the {item.answer}" if index % 2 else f"the {item.answer} or the {other}"

    records = explicit_records(small_model_set, answer)
    write_shard(
        tmp_path / "results", [r for r in records if r.item_id in {i.item_id for i in items}]
    )
    trials = build_trial_table(
        item_table([small_model_set]), None, load_model_results(tmp_path / "results")
    )
    table = answers.answers_table(trials).set_index("task").loc["explicit"]
    assert (table["n"], table["several_containers"]) == (6, 3)
    assert table["accuracy_contains"] == 1.0 and table["accuracy_one-answer"] == 0.5
    assert table["budget"] == "64"
