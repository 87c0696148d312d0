"""A paradigm's report options: declared by its plug-in, offered as flags, stated on the page."""

from __future__ import annotations

import enum
from typing import Literal

import click
import pytest
from click.testing import CliRunner
from pydantic import Field, ValidationError

from tracktale.analysis.arithmetic.options import ArithmeticReportOptions
from tracktale.analysis.boxes.options import BoxesReportOptions
from tracktale.analysis.cli import report
from tracktale.analysis.cli_options import paradigm_options
from tracktale.analysis.report.build import ReportOptions
from tracktale.analysis.report.options import (
    ParadigmOptions,
    collect,
    options_model,
    paradigm_option_specs,
)
from tracktale.analysis.report.render import describe_options
from tracktale.plugin import ParadigmPlugin
from tracktale.stimuli.registry import PLUGINS


class Speed(enum.Enum):
    SLOW = "slow"
    FAST = "fast"


class ToyOptions(ParadigmOptions):
    rule: Literal["one", "two"] = Field("one", description="Which rule.")
    speed: Speed = Field(Speed.SLOW, description="How fast.")


class OpenOptions(ParadigmOptions):
    count: int = Field(3, description="Not a closed choice.")


@pytest.fixture
def toy_options():
    """A paradigm ``toy`` whose plug-in declares report options, for one test."""

    def register(model: str) -> None:
        PLUGINS.add(
            "toy",
            ParadigmPlugin(
                name="toy",
                stimuli="tests.tracktale.registry_target:VALUE",
                report_options=f"tests.analysis.test_report_options:{model}",
            ),
            lazy=False,
        )

    yield register
    PLUGINS.remove("toy")


def test_the_flags_are_the_paradigms_declared_fields_in_registration_order():
    flags = [spec.flag for spec in paradigm_option_specs()]
    assert flags == [
        "--boxes-functor",
        "--boxes-unparsed",
        "--arithmetic-interval",
        "--arithmetic-reference",
        "--arithmetic-first-answer",
    ]
    by_flag = {option.opts[0]: option for option in report.params}
    functor = by_flag["--boxes-functor"]
    assert isinstance(functor.type, click.Choice) and list(functor.type.choices) == [
        "strict",
        "any",
    ]
    assert functor.default == "strict" and "authors' code" in (functor.help or "")
    assert options_model("narrative") is None and options_model("boxes") is BoxesReportOptions


def test_a_new_paradigms_options_become_flags_without_editing_the_command_line(toy_options):
    toy_options("ToyOptions")

    @click.command()
    @paradigm_options()
    def command(**given: str) -> None:
        chosen = collect(given)["toy"]
        assert isinstance(chosen, ToyOptions)
        click.echo(f"{chosen.rule} {chosen.speed.value}")

    result = CliRunner().invoke(command, ["--toy-speed", "fast"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "one fast"
    wrong = CliRunner().invoke(command, ["--toy-rule", "three"])
    assert wrong.exit_code == 2 and "'three' is not one of 'one', 'two'" in wrong.output


def test_an_option_that_is_not_a_closed_choice_is_refused(toy_options):
    toy_options("OpenOptions")
    with pytest.raises(TypeError, match="report option 'count' must be a closed choice"):
        paradigm_option_specs(["toy"])


def test_the_options_reach_the_sections_typed_and_default_when_not_given():
    options = ReportOptions(paradigms=collect({"boxes__unparsed": "whole-step", "engine": "z"}))
    assert options.of("boxes", BoxesReportOptions) == BoxesReportOptions(unparsed="whole-step")
    assert options.of("arithmetic", ArithmeticReportOptions).reference == "paper"
    with pytest.raises(TypeError, match="not a ArithmeticReportOptions"):
        options.of("boxes", ArithmeticReportOptions)
    with pytest.raises(ValidationError):
        BoxesReportOptions(functor="loose")  # type: ignore[arg-type]


def test_the_options_line_states_only_the_reported_paradigms_options():
    options = ReportOptions(paradigms={"boxes": BoxesReportOptions(functor="any")})
    narrative = describe_options(options, ["narrative"])
    assert "boxes" not in narrative and "arithmetic" not in narrative
    assert narrative.startswith("mixed-model engine auto")
    both = describe_options(options, ["boxes", "arithmetic"])
    assert both.endswith(
        "boxes functor rule any, unparsed answers per-state, "
        "arithmetic reference paper (first answer: span, intervals wilson)"
    )
