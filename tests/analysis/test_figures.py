import sys

import matplotlib
import pytest

from tracktale.analysis.data.exclusions import apply_exclusions
from tracktale.analysis.narrative import casestudies, figures
from tracktale.analysis.narrative.manipulation import template_logprob_ratios


@pytest.fixture(scope="module")
def parts(trial_table, simulated_human):
    human = trial_table[trial_table["agent_kind"] == "human"]
    models = trial_table[trial_table["agent_kind"] == "model"]
    analysed = apply_exclusions(human, simulated_human.participants).trials
    return analysed, models


def test_every_figure_is_written_in_three_non_empty_formats(parts, tmp_path):
    analysed, models = parts
    keys = ("font.size", "axes.spines.top", "axes.prop_cycle", "svg.fonttype")
    # (Reading rcParams["backend"] would itself import pyplot, so only style keys are compared.)
    rc_before = {key: matplotlib.rcParams[key] for key in keys}
    made = [
        figures.humans_vs_reference(analysed, models, tmp_path),
        figures.family_scaling(models, tmp_path),
        figures.scaling_log_axis(casestudies.scaling_table(models), tmp_path),
        figures.instruction_tuning(casestudies.instruction_table(models), tmp_path),
        figures.template_robustness(casestudies.template_table(models), tmp_path),
        figures.olmo_instruct_explicit(models, tmp_path),
        figures.checkpoint_trajectories(casestudies.checkpoint_table(models), tmp_path),
        figures.human_distribution_figure(
            casestudies.participant_accuracy(analysed),
            casestudies.human_distribution(analysed, models),
            tmp_path,
        ),
        figures.manipulation_check(template_logprob_ratios(models), tmp_path),
    ]
    assert all(figure is not None for figure in made)
    for figure in made:
        assert set(figure.paths) == {"png", "pdf", "svg"}
        for path in figure.paths.values():
            assert path.stat().st_size > 2000, path
        assert figure.paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert figure.paths["pdf"].read_bytes()[:5] == b"%PDF-"
    # No pyplot, no global style left behind.
    assert "matplotlib.pyplot" not in sys.modules
    assert {key: matplotlib.rcParams[key] for key in keys} == rc_before


def test_figures_without_their_data_are_skipped(parts, tmp_path):
    analysed, models = parts
    pythia_only = models[models["family"] == "Pythia"]
    assert figures.olmo_instruct_explicit(pythia_only, tmp_path) is None
    assert figures.instruction_tuning(casestudies.instruction_table(pythia_only), tmp_path) is None
    assert figures.humans_vs_reference(None, pythia_only, tmp_path) is None
    assert figures.humans_vs_reference(analysed, None, tmp_path) is not None
