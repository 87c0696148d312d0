"""A paradigm is one plug-in: one declaration, one registration, every stage finds its part."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.toyparadigm.plugin import PLUGIN as TOY
from tracktale.analysis.power.people import PowerModel, power_model, power_paradigms
from tracktale.analysis.report import build as report
from tracktale.analysis.report.options import ParadigmOptions, options_model
from tracktale.errors import TracktaleError
from tracktale.experiment.paradigms import HumanStudy, get_human_study, human_study_names
from tracktale.models.tasks import task_names
from tracktale.plugin import ParadigmPlugin
from tracktale.registry import UnknownName
from tracktale.stimuli.paradigm import Paradigm
from tracktale.stimuli.registry import PLUGINS, get_paradigm, get_plugin, paradigm_names


@pytest.fixture
def toy():
    """The toy paradigm (tests/toyparadigm, a lab's own package) registered for one test."""
    PLUGINS.add("toy", TOY, lazy=False)
    yield TOY
    PLUGINS.remove("toy")


def test_the_four_paradigms_are_registered_once_each_in_order():
    assert paradigm_names() == ("narrative", "boxes", "arithmetic", "items")
    for name in paradigm_names():
        plugin = get_plugin(name)
        assert isinstance(plugin, ParadigmPlugin) and plugin.name == name


@pytest.mark.parametrize("name", ["narrative", "boxes", "arithmetic", "items"])
def test_every_declared_part_resolves_to_what_its_stage_expects(name):
    plugin = get_plugin(name)
    stimuli = get_paradigm(name)
    assert isinstance(stimuli, Paradigm) and stimuli.name == name
    study = get_human_study(name)
    assert isinstance(study, HumanStudy) and study.paradigm == name
    sections = report.sections_of(name)
    assert sections and all(callable(f) for f in report._resolve(list(sections)))
    assert plugin.model_tasks and set(plugin.model_tasks) <= set(task_names())
    if plugin.has("power"):
        assert isinstance(power_model(name), PowerModel)
    model = options_model(name)
    if plugin.has("report_options"):
        assert model is not None and issubclass(model, ParadigmOptions)
        assert model().describe()
    optional = {part for part in ("power", "report_options") if plugin.has(part)}
    assert set(plugin.references()) == {"stimuli", "human_study", "report"} | optional


def test_power_models_are_those_the_plugins_declare():
    assert power_paradigms() == ("boxes", "arithmetic")
    assert power_model("boxes").terms[0] == "steps"
    with pytest.raises(TracktaleError, match="no people power analysis for paradigm 'narrative'"):
        power_model("narrative")


def test_listing_the_paradigms_imports_none_of_them():
    code = (
        "import sys\n"
        "from tracktale.stimuli.registry import paradigm_names\n"
        "assert paradigm_names()\n"
        "loaded = [m for m in sys.modules if m.startswith(('tracktale.stimuli.narrative',"
        " 'tracktale.stimuli.boxes', 'tracktale.experiment', 'tracktale.analysis'))]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_unknown_paradigm_is_a_domain_error_listing_the_known():
    with pytest.raises(UnknownName, match=r"unknown paradigm 'chess' \(choose from narrative, "):
        get_plugin("chess")
    with pytest.raises(TracktaleError, match="paradigm 'chess' has no human study"):
        get_human_study("chess")


def test_a_new_paradigm_plugs_into_every_stage_with_one_registration(toy, tmp_path):
    """Each stage finds the toy's part; tests/toyparadigm runs it through the stages."""
    import pandas as pd

    from tests.toyparadigm import report as toy_report
    from tests.toyparadigm import stimuli as toy_stimuli
    from tests.toyparadigm import study as toy_study

    assert "toy" in paradigm_names() and get_plugin("toy") is TOY
    assert get_paradigm("toy") is toy_stimuli.PARADIGM
    assert "toy" in human_study_names() and get_human_study("toy") is toy_study.STUDY
    assert "toy" in report.section_paradigms()
    assert report._resolve(list(report.sections_of("toy"))) == [toy_report.accuracy]
    trials = pd.DataFrame(
        {"paradigm": ["toy"], "agent_kind": ["model"], "agent": ["m"], "number": ["plural"],
         "correct": [1], "role": ["main"]}
    )  # fmt: skip
    sections = report.run_sections(trials, None, tmp_path, report.ReportOptions())
    assert [s.title for s in sections] == [toy_report.TITLE]
    assert set(TOY.model_tasks) <= set(task_names())
    with pytest.raises(TracktaleError, match="no people power analysis for paradigm 'toy'"):
        power_model("toy")
    PLUGINS.remove("toy")
    assert "toy" not in human_study_names() and "toy" not in report.section_paradigms()


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        (
            {"human_study": "tracktale.analysis.toy:STUDY"},
            "human_study must be a tracktale.experiment",
        ),
        ({"report": "tracktale.models.toy:S"}, "report must be a tracktale.analysis"),
        ({"power": "no_colon_here"}, "'module:attribute' reference"),
    ],
)
def test_a_part_of_tracktale_must_belong_to_its_stage(parts, message):
    with pytest.raises(ValueError, match=message):
        ParadigmPlugin(name="toy", stimuli="tracktale.stimuli.toy:PARADIGM", **parts)


def test_a_registration_that_does_not_give_its_plugin_is_a_one_line_error():
    """A lab's entry point naming a package not installed, or another paradigm's plug-in."""
    PLUGINS.add("missing", "mylab_not_installed.plugin:PLUGIN")
    PLUGINS.add("renamed", TOY, lazy=False)
    try:
        with pytest.raises(TracktaleError, match=r"^paradigm 'missing' cannot be loaded: No "):
            get_plugin("missing")
        with pytest.raises(TracktaleError, match="not as the ParadigmPlugin named 'renamed'"):
            get_plugin("renamed")
    finally:
        PLUGINS.remove("missing")
        PLUGINS.remove("renamed")
    assert paradigm_names() == ("narrative", "boxes", "arithmetic", "items")
