"""The scorecard: this run's numbers beside the source paper's published ones.

The paper's values live in one data file shipped with the package,
``paper_entity_tracking.csv``: one row per published number with the section it comes from,
what kind of number it is (human accuracy, a GLM statistic, a model's accuracy, ...) and how to
compare it (``equal``; ``below`` for "p < .001"; ``at_most`` for "within 3 points"; ``range``
for a span over models, "from -27 to -17", whose upper end is ``value_high``). For each row the
scorecard finds this run's value, its 95% interval where one exists, the difference (run minus
paper) and whether the paper's value lies inside the run's interval. A range is compared as a
range: this run's span over its models (one model: one value) agrees when each end lies inside
the paper's span or its interval reaches the paper's end, so a single model at -20.2 agrees
with the paper's -27 to -17.

Intervals are never computed here: accuracies come from the same accuracy tables the report
prints (:func:`tracktale.analysis.stats.proportions.accuracy_table` and the case-study tables
built on it), GLM coefficients from the fitted models (b +/- 1.96 SE, the odds ratio's own
interval), and the manipulation check from its own table, so the scorecard always shows the
intervals the analysis stage provides.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from tracktale.analysis.report.build import ReportContext, SectionResult
from tracktale.analysis.report.tables import save_table
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

PAPER_VALUES = "paper_entity_tracking.csv"
"""The package data file with the paper's numbers."""

COLUMNS = (
    "id",
    "quantity",
    "section",
    "unit",
    "relation",
    "paper",
    "paper_high",
    "run",
    "run_high",
    "difference",
    "ci_low",
    "ci_high",
    "paper_in_ci",
    "status",
)


@dataclass(frozen=True)
class RunValue:
    """This run's counterpart of a paper value (``value`` is ``None`` when it has none).

    For a ``range`` row, ``value`` is the low end of this run's span, ``high`` its high end,
    ``ci_low`` the low end's lower bound, ``ci_high`` the high end's upper bound and ``ends``
    each end's own interval.
    """

    value: float | None
    ci_low: float = math.nan
    ci_high: float = math.nan
    note: str = ""
    high: float = math.nan
    ends: tuple[tuple[float, float], ...] = ()


def paper_values() -> pd.DataFrame:
    """The paper's published numbers, one row each (see the module docstring).

    Raises:
        TracktaleError: If the installation lacks the data file.
    """
    import pandas as pd

    try:
        with resources.files(__package__).joinpath(PAPER_VALUES).open(encoding="utf-8") as handle:
            table = pd.read_csv(handle, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise TracktaleError(f"{PAPER_VALUES} is missing from the installation") from None
    table["value"] = table["value"].astype(float)
    table["value_high"] = pd.to_numeric(table["value_high"].replace("", math.nan))
    return table


def build_scorecard(context: ReportContext) -> pd.DataFrame:
    """The scorecard table for a report's narrative context (after the other sections ran).

    Returns:
        One row per paper value with :data:`COLUMNS`; ``status`` is ``compared`` or says why
        this run has no counterpart.
    """
    import pandas as pd

    finders = _Finders(context)
    rows = []
    for spec in paper_values().to_dict("records"):
        found = finders.find(spec)
        rows.append(_row(spec, found))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _row(spec: dict[str, Any], found: RunValue) -> dict[str, Any]:
    paper = float(spec["value"])
    paper_high = float(spec.get("value_high", math.nan))
    row = {
        "id": spec["id"],
        "quantity": spec["quantity"],
        "section": spec["section"],
        "unit": spec["unit"],
        "relation": spec["relation"],
        "paper": paper,
        "paper_high": paper_high,
        "run": math.nan,
        "run_high": math.nan,
        "difference": math.nan,
        "ci_low": math.nan,
        "ci_high": math.nan,
        "paper_in_ci": "",
        "status": found.note or "not in this run",
    }
    if found.value is None:
        return row
    row.update(run=found.value, difference=found.value - paper, status=found.note or "compared")
    row["ci_low"], row["ci_high"] = found.ci_low, found.ci_high
    relation = spec["relation"]
    if relation == "range":
        row["run_high"] = found.high
        row["difference"] = math.nan  # two ends: no single difference
        row["paper_in_ci"] = _ranges_agree((paper, paper_high), found)
    elif relation == "below":
        row["paper_in_ci"] = "yes" if found.value < paper else "no"
    elif relation == "at_most":
        row["paper_in_ci"] = "yes" if found.value <= paper else "no"
    elif not (math.isnan(found.ci_low) or math.isnan(found.ci_high)):
        row["paper_in_ci"] = "yes" if found.ci_low <= paper <= found.ci_high else "no"
    return row


def _ranges_agree(paper: tuple[float, float], found: RunValue) -> str:
    """``yes`` when each end of this run's span, with its 95% interval, meets the paper's span."""
    low, high = paper
    ends = found.ends or ((found.ci_low, found.ci_high),)
    meets = [
        not (math.isnan(end_low) or math.isnan(end_high)) and end_low <= high and end_high >= low
        for end_low, end_high in ends
    ]
    return "yes" if all(meets) else "no"


class _Finders:
    """This run's value for each kind of paper number."""

    def __init__(self, context: ReportContext) -> None:
        self.context = context
        self.shared = context.shared
        self.models = context.models
        self.value = context.options.value

    def find(self, spec: dict[str, Any]) -> RunValue:
        finder = getattr(self, f"_{spec['kind']}", None)
        if finder is None:
            raise TracktaleError(f"{PAPER_VALUES}: unknown kind {spec['kind']!r} ({spec['id']})")
        return finder(spec)

    def _shared_rows(self, key: str, column: str, value: str) -> pd.DataFrame | None:
        """The rows of a table an earlier section shared where ``column == value``, if any."""
        table = self.shared.get(key)
        if table is None:
            return None
        rows = table[table[column] == value]
        return None if rows.empty else rows

    def _human_participants(self, spec: dict[str, Any]) -> RunValue:
        rows = self._shared_rows("exclusions_summary", "task", spec["task"])
        return RunValue(None) if rows is None else RunValue(float(rows.iloc[0][spec["statistic"]]))

    def _human_accuracy(self, spec: dict[str, Any]) -> RunValue:
        key = "human_accuracy_by_complexity" if spec["complexity"] else "human_accuracy"
        table = self.shared.get(key)
        if table is None:
            return RunValue(None)
        rows = table[table["task"] == spec["task"]]
        if spec["complexity"]:
            rows = rows[rows["complexity"].astype(float) == float(spec["complexity"])]
        return _accuracy(rows)

    def _glm(self, spec: dict[str, Any]) -> RunValue:
        fit = self.shared.get("glm_complexity" if spec["glm"] == "complexity" else "glm_recency")
        if fit is None:
            return RunValue(None)
        if fit.name != spec["glm"]:
            return RunValue(None, note=f"this run's second GLM is {fit.name}, not {spec['glm']}")
        rows = fit.table[fit.table["term"] == spec["term"]]
        if rows.empty:
            return RunValue(None)
        row = rows.iloc[0]
        statistic = spec["statistic"]
        if statistic == "b":
            half = 1.959963984540054 * float(row["se"])
            return RunValue(float(row["b"]), float(row["b"]) - half, float(row["b"]) + half)
        if statistic == "odds_ratio":
            return RunValue(float(row["odds_ratio"]), float(row["or_low"]), float(row["or_high"]))
        return RunValue(float(row[statistic]))

    def _final_rows(self, spec: dict[str, Any]) -> pd.DataFrame | None:
        from tracktale.analysis.narrative.casestudies import final_models

        if self.models is None:
            return None
        rows = final_models(self.models)
        rows = rows[(rows["task"] == spec["task"]) & (rows["template"] == spec["template"])]
        if spec["model_id"]:
            rows = rows[rows["agent"] == spec["model_id"]]
        return rows if not rows.empty else None

    def _model_accuracy(self, spec: dict[str, Any]) -> RunValue:
        from tracktale.analysis.narrative.casestudies import model_accuracy

        rows = self._final_rows(spec)
        if rows is None:
            return RunValue(None)
        return _accuracy(model_accuracy(rows, ("task",), self.value))

    def _model_complexity_cost(self, spec: dict[str, Any]) -> RunValue:
        from tracktale.analysis.narrative.casestudies import scaling_table

        rows = self._final_rows(spec)
        if rows is None:
            return RunValue(None)
        table = scaling_table(rows, task=spec["task"], template=spec["template"], value=self.value)
        return RunValue(100 * float(table["complexity_cost"].iloc[0]))

    def _instruction_gain(self, spec: dict[str, Any]) -> RunValue:
        from tracktale.analysis.narrative.casestudies import instruction_table

        if self.models is None:
            return RunValue(None)
        table = instruction_table(self.models, self.value, spec["template"] or None)
        table = table[(table["family"] == "OLMo 2") & (table["task"] == spec["task"])]
        return RunValue(float(table["gain_pp"].max())) if not table.empty else RunValue(None)

    def _template_difference(self, spec: dict[str, Any]) -> RunValue:
        from tracktale.analysis.narrative.casestudies import template_table

        if self.models is None or self.models["template"].nunique() < 2:
            return RunValue(None)
        differences = template_table(self.models, self.value)["diff_from_standard_pp"].abs()
        return RunValue(float(differences.max())) if differences.notna().any() else RunValue(None)

    def _manipulation(self, spec: dict[str, Any]) -> RunValue:
        rows = self._shared_rows("manipulation_ratios", "template", spec["template"])
        if rows is None:
            return RunValue(None)
        most = rows.loc[rows["log10_ratio"].idxmin()]
        least = rows.loc[rows["log10_ratio"].idxmax()]
        labels = list(dict.fromkeys([str(most["label"]), str(least["label"])]))
        note = f"compared ({' to '.join(labels)}; {len(rows)} model(s))"
        return RunValue(
            float(most["log10_ratio"]),
            float(most["ci_low"]),
            float(least["ci_high"]),
            note,
            high=float(least["log10_ratio"]),
            ends=tuple((float(r["ci_low"]), float(r["ci_high"])) for r in (most, least)),
        )


def _accuracy(rows: pd.DataFrame) -> RunValue:
    if rows.empty:
        return RunValue(None)
    row = rows.iloc[0]
    return RunValue(100 * row["accuracy"], 100 * row["ci_low"], 100 * row["ci_high"])


def scorecard_section(context: ReportContext) -> SectionResult | None:
    """The report section: the scorecard as a table and a CSV (``tables/scorecard.csv``)."""
    if context.human is None and context.models is None:
        return None
    table = build_scorecard(context)
    compared = table[table["status"] != "not in this run"]
    saved = save_table(table, context.tables_dir, "scorecard", "Paper versus this run")
    with_ci = compared[compared["paper_in_ci"] != ""]
    inside = int((with_ci["paper_in_ci"] == "yes").sum())
    missing = len(table) - len(compared)
    lines = [
        f"{inside} of {len(with_ci)} checkable paper values lie inside this run's 95% interval "
        "(or meet the paper's bound; a range over models agrees when each end of this run's "
        "range, with its interval, meets the paper's range).",
        *_who_the_people_are(context),
        "Human accuracies are scored by the study's rule for typed answers; model accuracies "
        "by the paper's rule for generated ones (the answer contains the target container), "
        "as the paper scored its models. Where people and models stand side by side (the "
        "previous section) both are scored under the one-answer rule.",
        "Each row: the paper's value with its section, this run's value, the difference (run "
        "minus paper) and this run's 95% interval. Accuracies in percent.",
        f"GLM rows use this run's task coding ({context.options.task_coding}); the paper's "
        "signs are those of the default (explicit +0.5).",
    ]
    if missing:
        lines.append(
            f"{missing} paper values have no counterpart in this run (models not scored): "
            "they are listed in the CSV."
        )
    shown = SectionResult(
        title=f"{context.paradigm}: paper versus this run (scorecard)",
        html="<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>",
    )
    shown.tables.append(type(saved)(saved.name, saved.title, display_table(compared), saved.paths))
    return shown


def _who_the_people_are(context: ReportContext) -> list[str]:
    """A warning when the people are simulated: agreeing with the paper is then circular."""
    human = context.human
    if human is None or human.empty or "source" not in human.columns:
        return []
    sources = set(human["source"].dropna().astype(str))
    if sources != {"simulated"}:
        return []
    return [
        "The participants of this run are simulated (source=simulated): their accuracy is drawn "
        "from the paper's own estimates by task and complexity (Fig. 3), so the human rows "
        "check the pipeline (that the analysis recovers what went in); they are not a "
        "replication."
    ]


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """The scorecard as the page shows it: numbers rounded to their unit, intervals in a cell."""
    import pandas as pd

    rows = []
    for row in table.itertuples(index=False):
        interval = (
            f"[{_number(row.ci_low, row.unit)}, {_number(row.ci_high, row.unit)}]"
            if not math.isnan(row.ci_low)
            else ""
        )
        rows.append(
            {
                "quantity": row.quantity,
                "section": row.section,
                "paper": _paper_cell(row),
                "this run": _run_cell(row),
                "difference": "" if row.unit == "p" else _number(row.difference, row.unit),
                "this run's 95% CI": interval,
                "paper inside": row.paper_in_ci,
                "note": "" if row.status == "compared" else row.status.removeprefix("compared "),
            }
        )
    return pd.DataFrame(rows)


_BOUNDS = {"below": "< ", "at_most": "at most "}


def _paper_cell(row: Any) -> str:
    paper = _number(row.paper, row.unit, paper=True)
    if row.relation == "range":
        return f"{paper} to {_number(row.paper_high, row.unit, paper=True)}"
    return _BOUNDS.get(row.relation, "") + paper


def _run_cell(row: Any) -> str:
    run = _number(row.run, row.unit)
    high = row.run_high
    if row.relation == "range" and run and not math.isnan(high) and high != row.run:
        return f"{run} to {_number(high, row.unit)}"
    return run


def _number(value: float, unit: str, paper: bool = False) -> str:
    from tracktale.analysis.stats.glm import format_p

    if value is None or math.isnan(value):
        return ""
    if unit == "p":
        return f"{value:g}" if paper else format_p(value)
    if unit == "count":
        return f"{value:.0f}"
    digits = 1 if unit in ("%", "points", "log10") else 2
    return f"{value:.{digits}f}"
