"""The boxes paradigm's report section: its tables and figures, one section per stimulus set."""

from __future__ import annotations

import dataclasses

from tracktale.analysis.data.exclusions import apply_exclusions
from tracktale.analysis.report.build import ReportContext, SectionResult, per_set_sections


def models_section(context: ReportContext) -> list[SectionResult] | None:
    """Table 1 (with people where a boxes study ran), compression, probing and transitions."""
    from tracktale.analysis.boxes import boxes_outputs
    from tracktale.analysis.boxes.options import BoxesReportOptions
    from tracktale.stimuli.boxes.scoring import ScoringRules

    if context.results is None:
        return None
    results = context.results
    options = context.options
    chosen = options.of(context.paradigm, BoxesReportOptions)
    rules = ScoringRules(functor=chosen.functor, unparsed=chosen.unparsed)
    human = context.human
    if human is not None and "response" not in human.columns:
        human = None  # an export without responses: models only
    if human is not None and not human.empty and options.rules is not None:
        # The session rules only: the accuracy rule is the narrative paper's (Step-EM by
        # chance is 2^-12, so a 50% floor would measure difficulty, not attention).
        session_rules = dataclasses.replace(options.rules, min_accuracy=0.0)
        kept = apply_exclusions(human, context.participants, session_rules, ("explicit",))
        human = kept.trials
    return per_set_sections(
        context,
        "models",
        lambda stimulus_set, folder: boxes_outputs(
            results, stimulus_set, folder, rules=rules, human=human
        ),
    )
