"""Report sections of the narrative paradigm: people, models as case studies, manipulation check.

The human section applies the exclusions, fits the models of :mod:`.human_inference`
(leading with inference that holds for items, then the paper's participant-clustered GLMs) and
draws Figure 3; the model section writes the case-study tables and Figures 4-7 with the
log-axis scaling, checkpoint and human-distribution figures; the last section is the template
manipulation check. Each returns ``None`` when its data is absent.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from tracktale.analysis.data.exclusions import apply_exclusions
from tracktale.analysis.narrative import casestudies, figures
from tracktale.analysis.narrative.answers import SIDE_BY_SIDE_RULE
from tracktale.analysis.narrative.human_inference import human_inference
from tracktale.analysis.narrative.sensitivity import sensitivity_table, with_chance
from tracktale.analysis.report.build import ReportContext, SectionResult
from tracktale.analysis.report.style import SavedFigure
from tracktale.analysis.report.tables import SavedTable, save_table
from tracktale.analysis.stats.proportions import accuracy_table
from tracktale.errors import TracktaleError
from tracktale.models.tasks import judged_tasks

if TYPE_CHECKING:
    import pandas as pd


ACCURACY_INTERVAL_NOTES = {
    "two-way": "<p>Accuracy intervals are over participants and items (two-way clustered, t "
    "on the logit scale): a participant's trials are not independent, and the items are a "
    "sample too.</p>",
    "bootstrap": "<p>Accuracy intervals resample participants (BCa bootstrap, "
    "--accuracy-interval bootstrap): a participant's trials are not independent; how the items "
    "differ is left out, so they are too narrow for an accuracy over items.</p>",
    "wilson": "<p>Accuracy intervals: Wilson over the pooled trials (--accuracy-interval "
    "wilson), which treats a participant's trials as independent: too narrow.</p>",
}
"""The sentence under the human accuracy tables, per ``--accuracy-interval``."""


def _list(lines: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>"


def human_section(context: ReportContext) -> SectionResult | None:
    """Exclusions, accuracy by complexity, the GLMs, the mixed model and Figure 3."""
    options = context.options
    section = SectionResult(title=f"{context.paradigm}: human participants")
    if context.human is None:
        figure = figures.humans_vs_reference(
            None, context.models, context.figures_dir, options.value
        )
        if figure is None:
            return None
        section.html = "<p>No human data was given.</p>"
        _add_figure(section, figure)
        return section
    human = with_chance(context.human)
    excluded = apply_exclusions(human, context.participants, options.rules)
    analysed = excluded.trials
    context.shared["human_analysed"] = analysed
    context.shared["exclusions_summary"] = excluded.summary
    tables = context.tables_dir
    section.tables += [
        save_table(excluded.summary, tables, "exclusions_summary", "Exclusions per task"),
        save_table(excluded.log, tables, "exclusions_log", "Every exclusion and its reason"),
    ]
    sources = context.human.drop_duplicates("agent")["source"].value_counts()
    parts = [
        "<p>Participants by source: "
        + html.escape(", ".join(f"{k} {v}" for k, v in sources.items()))
        + ".</p>",
        "<p>Exclusion rules, in order:</p>",
        _list(options.rules.describe() + list(excluded.notes)),
        "<p>"
        + html.escape(
            "; ".join(
                f"{row.task}: {row.analysed} of {row.participants} participants analysed"
                for row in excluded.summary.itertuples()
            )
        )
        + ".</p>",
    ]
    if analysed.empty:
        section.html = "".join([*parts, "<p>No trials are left after the exclusions.</p>"])
        section.warnings.append(
            "no human trials are left after the exclusions: no accuracy, GLM or mixed model "
            "(see tables/exclusions_log.csv)"
        )
        return section
    cluster = "agent" if options.accuracy_interval in ("two-way", "bootstrap") else None
    item = "item_id" if options.accuracy_interval == "two-way" else None
    by_level = accuracy_table(analysed, ["task", "complexity"], cluster=cluster, item=item)
    overall = accuracy_table(analysed, ["task"], cluster=cluster, item=item)
    context.shared["human_accuracy"] = overall  # the scorecard shows these same intervals
    context.shared["human_accuracy_by_complexity"] = by_level
    section.tables += [
        save_table(overall, tables, "human_accuracy", "Human accuracy per task"),
        save_table(
            by_level, tables, "human_accuracy_by_complexity", "Human accuracy by complexity"
        ),
    ]
    parts.append(ACCURACY_INTERVAL_NOTES[options.accuracy_interval])
    inference = human_inference(analysed, options, tables)
    parts += inference.html
    section.tables += inference.tables
    section.warnings += inference.warnings
    section.fits.update(inference.fits)
    context.shared.update(inference.fits)
    context.shared["inference_method"] = inference.method
    sensitivity = sensitivity_table(human, context.participants, options.rules, options)
    if not sensitivity.empty:
        title = "Sensitivity: the estimates under other exclusion and timeout rules"
        section.tables.append(save_table(sensitivity, tables, "sensitivity_exclusions", title))
    figure = figures.humans_vs_reference(
        analysed, context.models, context.figures_dir, options.value, cluster=cluster, item=item
    )
    _add_figure(section, figure)
    section.html = "".join(parts)
    return section


def _add_figure(section: SectionResult, figure: SavedFigure | None) -> None:
    """Add a figure to the section; ``None`` (nothing to draw) adds nothing."""
    if figure is not None:
        section.figures.append(figure)


def model_section(context: ReportContext) -> SectionResult | None:
    """Models as case studies: tables and Figures 4-7, checkpoints, human placement."""
    models = context.models
    if models is None or models["task"].isin(judged_tasks()).sum() == 0:
        return None
    value = context.options.value
    tables, folder = context.tables_dir, context.figures_dir
    section = SectionResult(title=f"{context.paradigm}: models as case studies")
    accuracy = casestudies.model_accuracy(models, ("task", "template", "complexity"), value)
    templates = casestudies.template_table(models, value)
    # One table on the page: a row per model, task and template, complexity levels across.
    saved = save_table(accuracy, tables, "model_accuracy", "")
    save_table(templates, tables, "templates", "Accuracy by template")
    section.tables.append(
        SavedTable(
            saved.name,
            "Model accuracy (%) by task, template and complexity, all levels together, and the "
            "difference from the standard template in points (95% intervals in the CSV file)",
            accuracy_grid(accuracy, templates),
            saved.paths,
        )
    )
    notes = [f"correctness column: {value}"]
    for task in ("implicit", "explicit"):
        try:
            scaling = casestudies.scaling_table(models, task=task, value=value)
        except TracktaleError as error:
            notes.append(str(error))
            continue
        section.tables.append(
            shown(
                save_table(
                    scaling, tables, f"scaling_{task}", f"Scaling ({task}, standard template)"
                )
            )
        )
        size_figure = figures.scaling_log_axis(scaling, folder, name=f"scaling_log_axis_{task}")
        _add_figure(section, size_figure)
        if size_figure is None and task == "explicit" and scaling["agent"].nunique() < 2:
            notes.append(
                "No accuracy-by-size figures: they compare models of different sizes, and "
                "this run scored one model."
            )
    _add_figure(section, figures.family_scaling(models, folder, value=value))
    subset = None if context.options.figure_template == "all" else context.options.figure_template
    notes.append(f"Figures 5 and 7: {'all templates pooled' if subset is None else subset}")
    instruction = casestudies.instruction_table(models, value, subset)
    if not instruction.empty:
        section.tables.append(
            save_table(instruction, tables, "instruction_tuning", "Base vs instruct (points)")
        )
        _add_figure(section, figures.instruction_tuning(instruction, folder))
    examples = _object_examples(context)
    _add_figure(section, figures.template_robustness(templates, folder, examples))
    _add_figure(section, figures.olmo_instruct_explicit(models, folder, value, subset))
    checkpoints = casestudies.checkpoint_table(models, value=value)
    if not checkpoints.empty:
        section.tables.append(
            save_table(checkpoints, tables, "checkpoints", "Accuracy across training checkpoints")
        )
        _add_figure(section, figures.checkpoint_trajectories(checkpoints, folder))
    analysed = context.shared.get("human_analysed")
    if analysed is not None and not analysed.empty:
        placement = casestudies.human_distribution(analysed, models, value)
        people = casestudies.participant_accuracy(analysed, SIDE_BY_SIDE_RULE)
        section.tables.append(
            shown(
                save_table(placement, tables, "human_placement", "Models in the human distribution")
            )
        )
        _add_figure(section, figures.human_distribution_figure(people, placement, folder))
    section.html = _list(notes)
    return section


def shown(saved: SavedTable) -> SavedTable:
    """The table as the page shows it: each model by its label, without its description.

    Family, size and parameter count would repeat on every row; the CSV file keeps them.
    """
    table = saved.table
    if "label" in table.columns:
        hidden = [c for c in casestudies.MODEL_COLUMNS if c != "label" and c in table.columns]
        table = table.drop(columns=hidden).rename(columns={"label": "model"})
        table = table[["model", *[c for c in table.columns if c != "model"]]]
    return SavedTable(saved.name, saved.title, table, saved.paths)


def accuracy_grid(accuracy: pd.DataFrame, templates: pd.DataFrame) -> pd.DataFrame:
    """Accuracy in percent, a row per model, task and template, complexity levels across."""
    grid = accuracy.pivot_table(
        index=["label", "task", "template"], columns="complexity", values="accuracy"
    )
    grid.columns = [f"C{int(level)}" for level in grid.columns]
    grid = 100 * grid
    overall = templates.set_index(["label", "task", "template"])
    grid["all"] = 100 * overall["accuracy"]
    grid["vs standard (points)"] = overall["diff_from_standard_pp"]
    grid = grid.map(lambda v: f"{v:.1f}" if v == v else "")  # one decimal, blank for none
    return grid.reset_index().rename(columns={"label": "model"})


def _object_examples(context: ReportContext) -> dict[str, list[str]]:
    """Template -> object words of the model items, most frequent first (Figure 6A)."""
    from collections import Counter

    counts: dict[str, Counter[str]] = {}
    for stimulus_set in context.stimulus_sets:
        for item in stimulus_set:
            template = item.condition.get("template")
            if item.role == "main" and template and isinstance(item.truth.get("objects"), list):
                counts.setdefault(str(template), Counter()).update(
                    str(o.get("noun")) for o in item.truth["objects"] if isinstance(o, dict)
                )
    return {t: [word for word, _ in c.most_common(4)] for t, c in counts.items()}


def manipulation_section(context: ReportContext) -> SectionResult | None:
    """Sequence log-probability ratios between templates (log10), per model."""
    from tracktale.analysis.narrative.manipulation import template_logprob_ratios

    models = context.models
    if (
        models is None
        or "logprob" not in models.columns
        or not (models["task"] == "sequence").any()
    ):
        return None
    ratios = template_logprob_ratios(models)
    context.shared["manipulation_ratios"] = ratios
    section = SectionResult(title=f"{context.paradigm}: template manipulation check")
    section.tables.append(
        shown(
            save_table(ratios, context.tables_dir, "manipulation_check", "log10 likelihood ratios")
        )
    )
    figure = figures.manipulation_check(ratios, context.figures_dir)
    if figure is not None:
        _add_figure(section, figure)
    lines = [
        f"{row.label}: {row.template} narratives are 10^{-row.log10_ratio:.1f} times less likely "
        f"than standard (95% CI 10^{-row.ci_high:.1f} to 10^{-row.ci_low:.1f})"
        for row in ratios.itertuples()
        if row.template != "standard"
    ]
    section.html = _list(lines)
    return section
