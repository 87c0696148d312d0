"""How much the human results depend on the exclusion and timeout rules (issue 29).

The same estimates under each reading of the rules: as analysed; without the accuracy
exclusion; with the chance-level accuracy rule instead of the paper's 50% (each task against its
own chance: 1/2 for the implicit forced choice, 1 / the containers of the story for open
recall); and with timed-out trials dropped instead of scored wrong (or the reverse, when the
report dropped them). Each variant is fitted with the two-way clustered GLM (participant and
item, t tests, each SE at least the participant-clustered one): it holds its level for the
between-item terms and takes a second per variant, where the report's lead model (glmer with
the ladder, permutation tests) would take minutes each. The table says so.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from tracktale.analysis.data.exclusions import ExclusionRules, apply_exclusions
from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd


METHOD = "GLM, SEs clustered by participant and item (two-way, t)"


def with_chance(trials: pd.DataFrame) -> pd.DataFrame:
    """The trials with a ``chance`` column: the probability of a right answer by guessing.

    Implicit trials and fillers are choices between two (1/2); an explicit (open recall) trial
    is right by guessing with probability 1 / the containers of its story's complexity level.
    """
    import numpy as np

    from tracktale.stimuli.narrative.design import STRUCTURES

    containers = {level: structure.n_containers for level, structure in STRUCTURES.items()}
    if "complexity" in trials:
        explicit_chance = 1.0 / trials["complexity"].map(containers).astype(float)
    else:
        explicit_chance = np.nan
    chance = np.where(trials["task"] == "explicit", explicit_chance, 0.5)
    return trials.assign(chance=chance)


def _without_accuracy_rule(rules: ExclusionRules) -> ExclusionRules:
    return dataclasses.replace(rules, min_accuracy=0.0, accuracy_rule="paper")


def _variants(rules: ExclusionRules) -> list[tuple[str, ExclusionRules]]:
    timeouts = "timeouts scored wrong" if rules.drop_timeouts else "timeouts dropped"
    variants = [
        ("as analysed", rules),
        ("no accuracy exclusion", _without_accuracy_rule(rules)),
    ]
    if rules.accuracy_rule == "chance":
        variants.append(("the paper's 50% rule", dataclasses.replace(rules, accuracy_rule="paper")))
    else:
        variants.append(("chance-level rule", dataclasses.replace(rules, accuracy_rule="chance")))
    variants.append((timeouts, dataclasses.replace(rules, drop_timeouts=not rules.drop_timeouts)))
    return variants


def sensitivity_table(
    human: pd.DataFrame,
    participants: pd.DataFrame | None,
    rules: ExclusionRules,
    options: Any,
) -> pd.DataFrame:
    """The human estimates under each variant of the rules, one row per (variant, term).

    Args:
        human: Human rows of the tidy trial table, with a ``chance`` column
            (:func:`with_chance`).
        participants: The session records, or ``None``.
        rules: The rules the report applied.
        options: The report's options (``task_coding``, ``recency``).

    Returns:
        ``variant``, ``explicit_analysed``, ``implicit_analysed`` (participants), ``trials``,
        ``term``, ``label``, ``estimate``, ``or_low``, ``or_high``, ``p``, ``method``.
    """
    import pandas as pd

    from tracktale.analysis.stats.glm import fit_human_glm

    rows: list[dict[str, Any]] = []
    for name, variant in _variants(rules):
        kept = apply_exclusions(human, participants, variant)
        counts = kept.summary.set_index("task")["analysed"].to_dict()
        base = {
            "variant": name,
            "explicit_analysed": counts.get("explicit", 0),
            "implicit_analysed": counts.get("implicit", 0),
            "trials": len(kept.trials),
        }
        for recency in (None, options.recency):
            try:
                fit = fit_human_glm(
                    kept.trials,
                    recency=recency,
                    task_coding=options.task_coding,
                    clustering="two-way",
                    reference="t",
                )
            except TracktaleError:
                continue
            table = fit.table[fit.table["term"] != "Intercept"]
            # Model 2 contributes its recency term only; the others come from model 1.
            table = table[table["term"].str.startswith("recency") == (recency is not None)]
            for row in table.itertuples():
                rows.append(
                    {
                        **base,
                        "term": row.term,
                        "label": row.label,
                        "estimate": row.b,
                        "odds_ratio": row.odds_ratio,
                        "or_low": row.or_low,
                        "or_high": row.or_high,
                        "p": row.p,
                        "method": METHOD,
                    }
                )
    return pd.DataFrame(rows)
