"""People and each model side by side: one case-study figure per model, the joint table, provenance.

This report section (narrative paradigm) follows the models-as-case-studies section. For every
final model it draws one figure with the analysed participants' accuracy by complexity (after
the exclusions) and the model's accuracy by complexity on each template, one panel per task;
it writes one long table holding both, a table of how each model answered (generations that hit
their token budget, answers naming several containers, accuracy under both answer rules), and a
provenance table naming where each model's weights came from (hub commit, local folder, or GGUF
file with its sha256 and quantization), so a reader of the report sees that a dequantized Q4_1
model is not the original checkpoint. People and models are scored under one rule here,
:data:`~tracktale.analysis.narrative.answers.SIDE_BY_SIDE_RULE` (the figures and tables say
which). The people's 95% intervals are those of the human section (``--accuracy-interval``:
over participants and items by default, issue 29), a model's Wilson over its items.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import TYPE_CHECKING

from tracktale.analysis.narrative.answers import (
    RULE_WORDS,
    SIDE_BY_SIDE_RULE,
    answers_table,
    correct_under,
)
from tracktale.analysis.narrative.casestudies import final_models
from tracktale.analysis.narrative.figures import _errorbar
from tracktale.analysis.report.build import ReportContext, SectionResult
from tracktale.analysis.report.style import (
    HUMAN_COLOUR,
    OKABE_ITO,
    TEMPLATE_COLOURS,
    SavedFigure,
    new_figure,
    percent_axes,
    save_figure,
    styled,
)
from tracktale.analysis.report.tables import SavedTable, save_table
from tracktale.analysis.stats.proportions import accuracy_table
from tracktale.errors import TracktaleError
from tracktale.models.tasks import task_names

if TYPE_CHECKING:
    import pandas as pd

TASKS = ("explicit", "implicit")
CHANCE: dict[str, float | None] = {"explicit": None, "implicit": 0.5}
"""Chance accuracy per task: open recall has none, a two-way choice 50%."""
PEOPLE_INTERVALS = {
    "two-way": "over participants and items (two-way clustered)",
    "bootstrap": "a bootstrap over participants",
    "wilson": "Wilson over the pooled trials",
}
"""How the people's intervals are made, per ``--accuracy-interval`` (the human section's own)."""
PROVENANCE = (
    "model_source",
    "source_file",
    "quantization",
    "source_sha256",
    "source_package",
    "resolved_sha",
    "dtype",
)


def side_by_side_section(context: ReportContext) -> SectionResult | None:
    """The joint table, one case-study figure per model, and the models' provenance."""
    models = context.models
    if models is None or final_models(models).empty:
        return None
    value = context.options.value
    interval = context.options.accuracy_interval
    human = context.shared.get("human_analysed")
    human = human if human is not None and not human.empty else None
    section = SectionResult(title=f"{context.paradigm}: people and models side by side")
    joint = joint_table(human, models, value, interval)
    saved = save_table(joint, context.tables_dir, "humans_and_models", "")
    section.tables.append(
        SavedTable(
            saved.name,
            "Accuracy (%) by complexity on the standard template (the one people saw): "
            "participants after exclusions and each model, both scored under the "
            f"{SIDE_BY_SIDE_RULE} rule ({RULE_WORDS[SIDE_BY_SIDE_RULE]}); every template, "
            f"with 95% intervals (people: {PEOPLE_INTERVALS[interval]}; a model: Wilson over "
            "its items), in the CSV file",
            side_by_side_grid(joint),
            saved.paths,
        )
    )
    section.tables.append(
        save_table(
            answers_table(final_models(models), value),
            context.tables_dir,
            "model_answers",
            "How each model answered: generations that stopped at their token budget, typed "
            "answers naming several containers, and accuracy under the paper's contains rule "
            "(the models' own results) and the one-answer rule (the people's)",
        )
    )
    rows = final_models(models)
    for agent in sorted(rows["agent"].unique()):
        figure = case_study_figure(
            human, rows[rows["agent"] == agent], context.figures_dir, value, interval
        )
        if figure is not None:
            section.figures.append(figure)
    provenance = provenance_table(models)
    # The CSV keeps every column; the page names each model's source once, in a sentence.
    save_table(provenance, context.tables_dir, "model_provenance", "Where each model came from")
    section.html = _notes(provenance, human is not None)
    return section


def interval_columns(accuracy_interval: str) -> tuple[str | None, str | None]:
    """The ``cluster`` and ``item`` columns of :func:`accuracy_table` for the people's intervals.

    ``two-way``: over participants and items; ``bootstrap``: participants alone; ``wilson``:
    the pooled trials.
    """
    if accuracy_interval not in PEOPLE_INTERVALS:
        raise TracktaleError(
            f"unknown accuracy interval {accuracy_interval!r}: one of {', '.join(PEOPLE_INTERVALS)}"
        )
    cluster = "agent" if accuracy_interval in ("two-way", "bootstrap") else None
    return cluster, "item_id" if accuracy_interval == "two-way" else None


def joint_table(
    human: pd.DataFrame | None,
    models: pd.DataFrame,
    value: str,
    accuracy_interval: str = "two-way",
) -> pd.DataFrame:
    """One row per (who, task, template, complexity): ``n``, accuracy and its 95% interval.

    People saw the standard template only, their intervals as ``accuracy_interval`` says
    (:func:`interval_columns`; the human section's ``--accuracy-interval``); each model has a
    row per template and ``all`` (templates pooled), with Wilson intervals over its items.
    """
    import pandas as pd

    parts = []
    if human is not None:
        scored = human.assign(correct_rule=correct_under(human, SIDE_BY_SIDE_RULE))
        cluster, item = interval_columns(accuracy_interval)
        table = accuracy_table(
            scored, ["task", "complexity"], "correct_rule", cluster=cluster, item=item
        )
        table = table.drop(columns=["n_clusters", "interval"], errors="ignore")
        table.insert(0, "template", "standard")
        table.insert(0, "label", "Participants")
        table.insert(0, "agent", "humans")
        parts.append(table)
    rows = final_models(models)
    rows = rows.assign(correct_rule=correct_under(rows, SIDE_BY_SIDE_RULE, value))
    by = ["agent", "label", "task", "template", "complexity"]
    parts.append(accuracy_table(rows, by, value="correct_rule"))
    if rows["template"].nunique() > 1:
        pooled = accuracy_table(rows, [c for c in by if c != "template"], value="correct_rule")
        pooled.insert(3, "template", "all")
        parts.append(pooled)
    joint = pd.concat(parts, ignore_index=True, sort=False)
    return joint[
        ["agent", "label", "task", "template", "complexity", "n", "accuracy"]
        + [c for c in ("ci_low", "ci_high") if c in joint.columns]
    ]


def side_by_side_grid(joint: pd.DataFrame) -> pd.DataFrame:
    """The joint table as the page shows it: standard template, a column per level, in %."""
    rows = joint[joint["template"] == "standard"]
    grid = rows.pivot_table(
        index=["label", "task"], columns="complexity", values="accuracy", sort=False
    )
    grid.columns = [f"C{int(level)}" for level in grid.columns]
    grid = grid.map(lambda v: f"{100 * v:.1f}" if v == v else "")
    return grid.reset_index().rename(columns={"label": "who"})


def provenance_table(models: pd.DataFrame) -> pd.DataFrame:
    """Per model: where its weights came from, how it was run, and how many rows per task."""
    import pandas as pd

    out = []
    for agent, rows in models.groupby("agent", sort=True):
        entry = {"agent": agent, "label": rows["label"].iloc[0]}
        for column in PROVENANCE:
            values = rows[column].dropna().unique() if column in rows.columns else []
            entry[column] = ", ".join(map(str, values)) if len(values) else ""
        for task in task_names():
            entry[f"rows_{task}"] = int((rows["task"] == task).sum())
        out.append(entry)
    return pd.DataFrame(out)


def _notes(provenance: pd.DataFrame, with_humans: bool) -> str:
    lines = []
    if not with_humans:
        lines.append("No human data was given: the figures show the models alone.")
    for row in provenance.itertuples(index=False):
        if row.model_source == "gguf":
            lines.append(
                f"{row.label}: dequantized from the GGUF file {row.source_file} "
                f"({row.quantization}, sha256 {row.source_sha256}"
                + (f", from {row.source_package}" if row.source_package else "")
                + f") and run in {row.dtype}; these are the quantized model's weights, not the "
                "original checkpoint's."
            )
        elif row.model_source:
            where = f" at commit {row.resolved_sha}" if row.resolved_sha else ""
            lines.append(f"{row.label}: {row.model_source}{where}, run in {row.dtype}.")
    return "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>"


def _slug(agent: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", agent).strip("-").lower() or "model"


DODGE = 0.1
"""Distance, in complexity levels, between the series drawn around one level."""


def case_study_figure(
    human: pd.DataFrame | None,
    rows: pd.DataFrame,
    folder: Path,
    value: str = "correct",
    accuracy_interval: str = "two-way",
) -> SavedFigure | None:
    """One model against the participants: accuracy by complexity, a line per template.

    The people's error bars are the intervals ``accuracy_interval`` names
    (:func:`interval_columns`).
    """
    if rows.empty:
        return None
    cluster, item = interval_columns(accuracy_interval)
    agent, label = rows["agent"].iloc[0], rows["label"].iloc[0]
    templates = [t for t in TEMPLATE_COLOURS if t in set(rows["template"])]
    templates += sorted(set(rows["template"]) - set(templates))
    # Every series gets its own place around each level (people first, then each template),
    # so that no two error bars are drawn at the same x.
    series = (["Participants"] if human is not None else []) + templates
    shift = {name: (place - (len(series) - 1) / 2) * DODGE for place, name in enumerate(series)}
    with styled():
        figure = new_figure(2)
        for index, (ax, task) in enumerate(zip(figure.axes, TASKS, strict=True)):
            if human is not None:
                _people(ax, human[human["task"] == task], shift["Participants"], cluster, item)
            task_rows = rows[rows["task"] == task]
            task_rows = task_rows.assign(
                correct_rule=correct_under(task_rows, SIDE_BY_SIDE_RULE, value)
            )
            for position, template in enumerate(templates):
                cells = task_rows[task_rows["template"] == template]
                if cells.empty:
                    continue
                table = accuracy_table(cells, ["complexity"], value="correct_rule")
                moved = table["complexity"].astype(float) + shift[template]
                table = table.assign(complexity=moved)
                colour = TEMPLATE_COLOURS.get(template, OKABE_ITO[4 + position % 3])
                style = {"color": colour, "linestyle": "--", "label": f"model: {template}"}
                _errorbar(ax, table, "complexity", **style)
            levels = sorted(
                set(rows["complexity"].dropna())
                | (set(human["complexity"].dropna()) if human is not None else set())
            )
            ax.set_xticks(list(levels), [f"C{int(level)}" for level in levels])
            ax.set_xlabel("Complexity")
            ax.set_title(f"{'AB'[index]}  {task.capitalize()} task", loc="left")
        percent_axes(figure, chance=[CHANCE[task] for task in TASKS])
        handles, names = figure.axes[-1].get_legend_handles_labels()
        figure.legend(handles, names, loc="outside lower center", ncols=4, fontsize=6.5)
        caption = (
            f"{label} and the participants, both scored under the {SIDE_BY_SIDE_RULE} rule "
            f"({RULE_WORDS[SIDE_BY_SIDE_RULE]}). Error bars: 95% intervals, "
            f"{PEOPLE_INTERVALS[accuracy_interval]} for the people and a Wilson interval over "
            "the model's items "
            f"({_items_per_point(rows)} per point) for the model, one dashed line per template "
            "(people and templates drawn slightly apart at each level). The dashed grey line "
            "at 50% in panel B is chance in the implicit task (two continuations); panel A "
            "(open recall) has no chance level."
        )
        return save_figure(figure, folder, f"case_study_{_slug(agent)}", caption)


def _people(ax, trials: pd.DataFrame, shift: float, cluster: str | None, item: str | None) -> None:
    """The participants' accuracy by complexity (one-answer rule), ``shift`` off each level."""
    scored = trials.assign(correct_rule=correct_under(trials, SIDE_BY_SIDE_RULE))
    people = accuracy_table(scored, ["complexity"], "correct_rule", cluster=cluster, item=item)
    people = people.assign(complexity=people["complexity"].astype(float) + shift)
    _errorbar(ax, people, "complexity", color=HUMAN_COLOUR, label="Participants")


def _items_per_point(rows: pd.DataFrame) -> str:
    counts = rows.groupby(["task", "template", "complexity"]).size()
    low, high = int(counts.min()), int(counts.max())
    return str(low) if low == high else f"{low}-{high}"
