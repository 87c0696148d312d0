"""The toy paradigm's report section: accuracy by the subject's number, people and models."""

from __future__ import annotations

from tracktale.analysis.report.build import ReportContext, SectionResult
from tracktale.analysis.report.outputs import Outputs

TITLE = "toy: choosing the agreeing verb"


def accuracy(context: ReportContext) -> SectionResult | None:
    """One table: per agent kind (people pooled, each model apart) and number, mean accuracy."""
    import pandas as pd

    parts = []
    if context.human is not None:
        people = context.human[context.human["role"] == "main"].assign(who="people")
        parts.append(people)
    if context.models is not None:
        parts.append(context.models.assign(who=context.models["agent"]))
    if not parts:
        return None
    trials = pd.concat(parts, ignore_index=True)
    table = (
        trials.groupby(["who", "number"], sort=True)["correct"]
        .agg(accuracy="mean", n="size")
        .reset_index()
    )
    context.tables_dir.mkdir(parents=True, exist_ok=True)
    path = context.tables_dir / "toy_accuracy.csv"
    table.to_csv(path, index=False, lineterminator="\n")
    outputs = Outputs()
    outputs.table(table, [path], "Accuracy by the subject's number")
    return SectionResult.from_outputs(TITLE, outputs)


SECTIONS = (accuracy,)
