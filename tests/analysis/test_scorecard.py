"""The scorecard: the paper's numbers from one data file, beside this run's, with intervals."""

import math

import pandas as pd
import pytest

from tracktale.analysis.data.exclusions import apply_exclusions
from tracktale.analysis.narrative import scorecard
from tracktale.analysis.report.build import ReportContext, ReportOptions
from tracktale.analysis.stats.glm import fit_human_glm
from tracktale.analysis.stats.proportions import accuracy_table


def test_the_paper_values_come_from_one_file_with_their_sections():
    values = scorecard.paper_values()
    assert values["id"].is_unique
    assert values["section"].str.match(r"^§\d\.\d").all()
    row = values.set_index("id").loc["glm1_interaction_b"]
    assert row["value"] == -0.09 and row["section"] == "§4.1"
    # Every kind of number the issue names is there.
    kinds = set(values["kind"])
    assert {"human_accuracy", "glm", "model_accuracy", "manipulation"} <= kinds
    assert set(values["relation"]) <= {"equal", "below", "at_most", "range"}
    ranges = values[values["relation"] == "range"]
    assert ranges["value_high"].notna().all() and (ranges["value"] < ranges["value_high"]).all()


@pytest.fixture(scope="module")
def context(trial_table, simulated_human, tmp_path_factory):
    human = trial_table[trial_table["agent_kind"] == "human"]
    models = trial_table[trial_table["agent_kind"] == "model"]
    excluded = apply_exclusions(human, simulated_human.participants)
    folder = tmp_path_factory.mktemp("scorecard")
    shared = {
        "exclusions_summary": excluded.summary,
        "human_accuracy": accuracy_table(excluded.trials, ["task"]),
        "human_accuracy_by_complexity": accuracy_table(excluded.trials, ["task", "complexity"]),
        "glm_complexity": fit_human_glm(excluded.trials),
        "glm_recency": fit_human_glm(excluded.trials, recency="focus"),
    }
    return ReportContext(
        "narrative",
        human,
        simulated_human.participants,
        models,
        ReportOptions(),
        folder / "figures",
        folder / "tables",
        shared=shared,
    )


def test_each_row_has_the_run_value_the_difference_and_whether_the_paper_is_inside(context):
    table = scorecard.build_scorecard(context).set_index("id")
    assert list(table.reset_index().columns) == list(scorecard.COLUMNS)
    accuracy = context.shared["human_accuracy"].set_index("task").loc["explicit"]
    row = table.loc["human_explicit"]
    assert row["run"] == pytest.approx(100 * accuracy["accuracy"])  # the report's own table
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        (100 * accuracy["ci_low"], 100 * accuracy["ci_high"])
    )
    assert row["difference"] == pytest.approx(row["run"] - 75.3)
    assert row["paper_in_ci"] == ("yes" if row["ci_low"] <= 75.3 <= row["ci_high"] else "no")
    coefficient = context.shared["glm_complexity"].coefficient("complexity_c:task_s")
    b = table.loc["glm1_interaction_b"]
    assert b["run"] == pytest.approx(coefficient["b"])
    assert b["ci_high"] - b["ci_low"] == pytest.approx(2 * 1.959963984540054 * coefficient["se"])
    assert table.loc["glm1_complexity_p", "paper_in_ci"] in ("yes", "no")  # "p < .001"
    assert table.loc["glm1_complexity_se", "paper_in_ci"] == ""  # no interval for an SE
    # Models the run has are compared; the others are said to be absent.
    assert table.loc["pythia_70m_implicit", "status"] == "compared"
    assert table.loc["olmo_32b_instruct_explicit", "status"] == "not in this run"
    assert math.isnan(table.loc["olmo_32b_instruct_explicit", "run"])


def test_a_paper_value_inside_or_outside_the_interval():
    spec = {"id": "x", "quantity": "q", "section": "§4.1", "unit": "%", "relation": "equal"}
    inside = scorecard._row({**spec, "value": 75.0}, scorecard.RunValue(74.0, 70.0, 78.0))
    outside = scorecard._row({**spec, "value": 90.0}, scorecard.RunValue(74.0, 70.0, 78.0))
    assert (inside["paper_in_ci"], outside["paper_in_ci"]) == ("yes", "no")
    bound = scorecard._row({**spec, "relation": "at_most", "value": 3.0}, scorecard.RunValue(1.5))
    assert bound["paper_in_ci"] == "yes"


def test_the_section_writes_the_csv_and_a_readable_table(context):
    section = scorecard.scorecard_section(context)
    written = pd.read_csv(context.tables_dir / "scorecard.csv")
    assert len(written) == len(scorecard.paper_values())
    shown = section.tables[0].table
    assert "this run's 95% CI" in shown.columns
    assert len(shown) < len(written)  # rows without a counterpart stay in the CSV only
    assert "paper values lie inside this run&#x27;s 95% interval" in section.html


def test_a_range_over_models_is_compared_as_a_range():
    # The paper: pseudoword ratios from -27 (most affected model) to -17 (least affected).
    spec = {"id": "r", "quantity": "q", "section": "§4.5", "unit": "log10", "relation": "range"}
    spec |= {"value": -27.0, "value_high": -17.0}

    def one_model(value, half=0.3):
        ends = ((value - half, value + half),) * 2
        return scorecard.RunValue(value, value - half, value + half, high=value, ends=ends)

    # One model at -20.2 lies between the two ends: it agrees (compared to each end, it did not).
    assert scorecard._row(spec, one_model(-20.2))["paper_in_ci"] == "yes"
    assert scorecard._row(spec, one_model(-12.0))["paper_in_ci"] == "no"
    assert scorecard._row(spec, one_model(-16.9))["paper_in_ci"] == "yes"  # its interval reaches
    spread = scorecard.RunValue(
        -30.0, -30.5, -18.5, high=-19.0, ends=((-30.5, -29.5), (-19.5, -18.5))
    )
    row = scorecard._row(spec, spread)
    assert row["paper_in_ci"] == "no" and row["run_high"] == -19.0
    shown = scorecard.display_table(pd.DataFrame([{**row, "status": "compared"}]))
    assert shown.loc[0, "paper"] == "-27.0 to -17.0"
    assert shown.loc[0, "this run"] == "-30.0 to -19.0"


def test_the_scorecard_says_when_the_people_are_simulated(context):
    section = scorecard.scorecard_section(context)
    simulated = set(context.human["source"]) == {"simulated"}
    assert ("they are not a replication" in section.html) == simulated
    assert simulated  # the fixture's people are simulated: the sentence must be there
