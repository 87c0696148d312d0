"""The arithmetic paradigm's report sections: the paper's tables and figures, then people."""

from __future__ import annotations

import dataclasses

from tracktale.analysis.data.exclusions import apply_exclusions
from tracktale.analysis.report.build import ReportContext, SectionResult, per_set_sections


def models_section(context: ReportContext) -> list[SectionResult] | None:
    """Every arithmetic table and figure per set, then people beside the models (ours)."""
    from tracktale.analysis.arithmetic import ArithmeticOptions, arithmetic_outputs
    from tracktale.analysis.arithmetic.human import people_outputs
    from tracktale.analysis.arithmetic.options import ArithmeticReportOptions

    given = context.options.of(context.paradigm, ArithmeticReportOptions)
    chosen = ArithmeticOptions(
        reference=given.reference, first_answer=given.first_answer, interval=given.interval
    )
    results = context.results
    parts: list[SectionResult] = []
    if results is not None:
        parts += per_set_sections(
            context,
            "models",
            lambda stimulus_set, folder: arithmetic_outputs(
                results, stimulus_set, folder, options=chosen
            ),
        )
    human = context.human
    if human is not None and not human.empty:
        if context.options.rules is not None:
            # The session rules only, as for boxes: a 50% accuracy floor would measure the
            # difficulty of 15-step procedures, not attention.
            rules = dataclasses.replace(context.options.rules, min_accuracy=0.0)
            human = apply_exclusions(human, context.participants, rules, ("explicit",)).trials
        people = human
        parts += per_set_sections(
            context,
            "people and models",
            lambda stimulus_set, folder: people_outputs(
                people, results, stimulus_set, folder, chosen
            ),
        )
    return parts or None
