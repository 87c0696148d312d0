import math

import numpy as np
import pandas as pd
import pytest

from tracktale.analysis.data.tidy import model_trial_rows
from tracktale.analysis.narrative import casestudies
from tracktale.analysis.narrative.manipulation import template_logprob_ratios
from tracktale.errors import TracktaleError


def _rows(model, task, template, complexity, correct, revision="", cell=None, **extra):
    return {
        "model_id": model,
        "revision": revision,
        "task": task,
        "item_id": f"{model}{task}{template}{complexity}{len(extra)}",
        "template": template,
        "complexity": complexity,
        "cell": cell or f"C{complexity}.F0",
        "correct": correct,
        **extra,
    }


def _models(rows):
    results = pd.DataFrame(rows)
    tidy = model_trial_rows(results)
    for column in ("template", "complexity", "cell"):
        tidy[column] = results[column].to_numpy()
    return tidy


BASE, TUNED = "allenai/OLMo-2-0425-1B", "allenai/OLMo-2-0425-1B-Instruct"


def _crafted():
    rows = []
    for model, explicit, implicit in ((BASE, 0.2, 0.9), (TUNED, 0.7, 0.8)):
        for task, accuracy in (("explicit", explicit), ("implicit", implicit)):
            for template in ("standard", "pseudoword"):
                for complexity in (1, 2):
                    rows += [
                        _rows(model, task, template, complexity, float(i < 10 * accuracy))
                        for i in range(10)
                    ]
    for step, accuracy in ((1000, 0.5), (64000, 0.8)):
        rows += [
            _rows(BASE, "implicit", "standard", 1, float(i < 10 * accuracy), f"step{step}")
            for i in range(10)
        ]
    return _models(rows)


def test_instruction_table_pairs_base_and_instruct_by_size():
    table = casestudies.instruction_table(_crafted()).set_index("task")
    assert table.loc["explicit", "gain_pp"] == pytest.approx(50)
    assert table.loc["implicit", "gain_pp"] == pytest.approx(-10)
    assert table.loc["explicit", "ci_low_base"] < 0.2 < table.loc["explicit", "ci_high_base"]


def test_templates_and_scaling_and_checkpoints():
    models = _crafted()
    templates = casestudies.template_table(models)
    assert templates["diff_from_standard_pp"].abs().max() == pytest.approx(0)
    scaling = casestudies.scaling_table(models)
    assert list(scaling["agent"]) == [BASE, TUNED]
    assert scaling.loc[0, "accuracy"] == pytest.approx(0.9)  # checkpoints left out
    assert scaling.loc[0, "n_parameters"] == pytest.approx(1e9)
    checkpoints = casestudies.checkpoint_table(models)
    assert list(checkpoints["step"]) == [1000, 64000]
    assert list(checkpoints["accuracy"]) == pytest.approx([0.5, 0.8])
    with pytest.raises(TracktaleError, match="no final-model results for task=implicit"):
        casestudies.scaling_table(models, template="improbable")
    with pytest.raises(TracktaleError, match="no column 'correct_calibrated'"):
        casestudies.model_accuracy(models, value="correct_calibrated")


def test_human_placement_weights_cells_as_the_human_design_does():
    model = _models(
        [_rows(BASE, "implicit", "standard", 1, 1.0) for _ in range(4)]
        + [_rows(BASE, "implicit", "standard", 4, float(i < 2), cell="C4.F0") for i in range(4)]
        + [_rows(BASE, "implicit", "standard", 5, 0.0, cell="C5.F0") for _ in range(4)]
    )
    # Three quarters of the human trials are C1, one quarter C4; C5 is not in the human design.
    human = pd.DataFrame(
        {
            "agent": np.repeat(["p1", "p2", "p3", "p4"], 4),
            "task": "implicit",
            "cell": ["C1.F0", "C1.F0", "C1.F0", "C4.F0"] * 4,
            "correct": [1, 1, 1, 1] + [1, 1, 0, 0] + [0, 0, 0, 0] + [1, 1, 1, 0],
        }
    )
    table = casestudies.human_distribution(human, model).iloc[0]
    assert table["model_accuracy"] == pytest.approx(0.75 * 1.0 + 0.25 * 0.5)
    # Participants score 1.0, 0.5, 0.0, 0.75: two below 0.875, none tied.
    assert table["percentile"] == pytest.approx(100 * 3 / 4)
    assert table["human_median"] == pytest.approx(0.625)


def test_manipulation_check_in_log10_units():
    rows = []
    for template, logprob in (("standard", -100.0), ("pseudoword", -100.0 - 20 * math.log(10))):
        for offset in (-1.0, 1.0):
            rows.append(
                _rows(BASE, "sequence", template, 1, None, logprob=logprob + offset, n_tokens=10)
            )
    table = template_logprob_ratios(_models(rows)).set_index("template")
    assert table.loc["pseudoword", "log10_ratio"] == pytest.approx(-20)
    assert table.loc["pseudoword", "ci_low"] < -20 < table.loc["pseudoword", "ci_high"]
    assert table.loc["standard", "log10_ratio"] == 0
    assert table.loc["pseudoword", "log10_ratio_per_token"] == pytest.approx(-2)
    with pytest.raises(TracktaleError, match="unknown template 'odd'"):
        template_logprob_ratios(_models(rows), reference="odd")
    with pytest.raises(TracktaleError, match="no sequence log-probabilities"):
        template_logprob_ratios(_crafted().assign(logprob=math.nan))


def test_manipulation_check_is_item_by_item_on_matched_stories():
    rows = []
    for story, standard in (("s1", -80.0), ("s2", -200.0), ("s3", -140.0)):
        for template, shift in (("standard", 0.0), ("pseudoword", -17 * math.log(10))):
            noise = 0.01 * len(story + template)  # the pairs differ by -17 log10 units, nearly
            rows.append(
                _rows(
                    BASE,
                    "sequence",
                    template,
                    1,
                    None,
                    logprob=standard + shift + noise,
                    n_tokens=10,
                    story_key=story,
                )
            )
    models = _models(rows)
    models["story_key"] = [row["story_key"] for row in rows]
    paired = template_logprob_ratios(models).set_index("template").loc["pseudoword"]
    assert bool(paired["paired"]) and paired["n_pairs"] == 3
    assert paired["log10_ratio"] == pytest.approx(-17, abs=0.01)
    assert paired["ci_high"] - paired["ci_low"] < 0.1  # the story-to-story spread cancels
    unpaired = template_logprob_ratios(models.drop(columns="story_key"))
    unpaired = unpaired.set_index("template").loc["pseudoword"]
    assert not bool(unpaired["paired"]) and unpaired["ci_high"] - unpaired["ci_low"] > 20


def test_figures_5_and_7_use_the_same_subset_standard_by_default():
    models = _crafted()
    models.loc[models["template"] == "pseudoword", "correct"] = 0.0  # templates now differ
    standard = casestudies.instruction_table(models).set_index("task")
    pooled = casestudies.instruction_table(models, template=None).set_index("task")
    # Figure 7's data: OLMo 2 Instruct, explicit, standard template.
    rows = casestudies.final_models(models)
    figure7 = rows[
        (rows["agent"] == TUNED) & (rows["task"] == "explicit") & (rows["template"] == "standard")
    ]["correct"].mean()
    assert standard.loc["explicit", "accuracy_instruct"] == pytest.approx(figure7) == 0.7
    assert pooled.loc["explicit", "accuracy_instruct"] == pytest.approx(0.35)
