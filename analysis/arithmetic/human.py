"""People beside the models: FAA by procedure length with a human curve (ours).

The paper has no human study; this table and figure are ours. People's trials are scored by
the server with the models' own scorer (:mod:`tracktale.stimuli.arithmetic.typed`), so their
``correct`` is FAA by the same definition. A participant answers several procedures, so
people's intervals resample participants (:func:`~tracktale.analysis.stats.proportions.
clustered_accuracy_interval`: BCa over participants, Wilson over the pooled trials where
participants show no variation, never a zero-width [1, 1] at 20/20), as the narrative report
does; the models' intervals are those of the paper's Figure 2 (over items).

Written for each stimulus set that has human rows:

- ``arithmetic_people_faa_by_horizon.csv``: one row per agent (``people`` and each model) and
  horizon: ``kind``, ``model``, ``horizon``, ``n``, ``participants``, ``faa``, ``ci_low``,
  ``ci_high`` (percent), ``interval``, ``par`` (the paper's PAR: the percentage of trials
  with an answer that is a number; for people a timeout or an unparseable answer has none;
  empty where the human rows carry no responses), ``probed`` and ``intermediate_accuracy``
  (ours, for a study with ``probe_values``: the intermediate values people typed on the way,
  and the percentage equal to the procedure's own value of that variable, by
  :func:`~tracktale.stimuli.arithmetic.typed.score_intermediates`; boxes left empty are not
  counted; empty for models and where nothing was probed);
- ``arithmetic_people_vs_models_by_horizon.*``: the figure, people in black with error bars.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.analysis.report.outputs import Outputs, written_paths

if TYPE_CHECKING:
    import pandas as pd

    from tracktale.stimulus_set import StimulusSet

PEOPLE = "people"
COLUMNS = [
    "kind", "model", "horizon", "n", "participants", "faa", "ci_low", "ci_high", "interval", "par",
    "probed", "intermediate_accuracy",
]  # fmt: skip
TABLE_STEM = "arithmetic_people_faa_by_horizon"
TABLE_TITLE = (
    "People and models: FAA by number of steps, people with participant-clustered intervals, "
    "PAR and people's intermediate values (ours: the paper has no human data)"
)


def human_horizon_table(
    human: pd.DataFrame, *, seed: int = 0, stimulus_set: StimulusSet | None = None
) -> pd.DataFrame:
    """People's FAA by horizon over their main trials, with participant-clustered intervals.

    Args:
        human: Human rows of the tidy trial table (``agent``, ``role``, ``horizon``,
            ``correct``, and ``response`` for PAR, ``intermediates`` for the probed values);
            practice rows are left out.
        seed: Seed of the bootstrap.
        stimulus_set: The set the rows refer to (needed to score probed values).

    Returns:
        The rows of :data:`COLUMNS` for ``people``.
    """
    import pandas as pd

    from tracktale.analysis.stats.proportions import clustered_accuracy_interval

    main = human[human["role"] == "main"] if "role" in human.columns else human
    records = []
    for horizon, group in main.groupby("horizon", sort=True):
        faa, low, high, method = clustered_accuracy_interval(
            group["correct"], group["agent"], seed=seed
        )
        records.append(
            {
                "kind": "human",
                "model": PEOPLE,
                "horizon": int(horizon),
                "n": len(group),
                "participants": group["agent"].nunique(),
                "faa": 100 * faa,
                "ci_low": 100 * low,
                "ci_high": 100 * high,
                "interval": method,
                "par": _par(group),
                **_probed(group, stimulus_set),
            }
        )
    return pd.DataFrame.from_records(records, columns=COLUMNS)


def people_and_models(
    human: pd.DataFrame,
    results: pd.DataFrame | None,
    stimulus_set: StimulusSet,
    options: Any = None,
) -> pd.DataFrame:
    """People's rows, then each model's FAA by horizon on the same set's items."""
    import pandas as pd

    from tracktale.analysis.arithmetic.rows import ArithmeticOptions, has_rows, scored_rows
    from tracktale.analysis.arithmetic.tables import horizon_table

    options = options or ArithmeticOptions()
    people = human_horizon_table(human, seed=options.seed, stimulus_set=stimulus_set)
    if results is None or not has_rows(results, stimulus_set):
        return people
    rows = scored_rows(results, stimulus_set, options)
    rows = rows[rows["horizon"].isin(set(people["horizon"]))]
    models = horizon_table(
        rows, n_boot=options.n_boot, seed=options.seed, interval=options.interval
    )
    models = models.assign(kind="model", participants=None, interval=options.interval)
    models = models.assign(probed=None, intermediate_accuracy=None)
    return pd.concat([people, models[COLUMNS]], ignore_index=True)


def people_outputs(
    human: pd.DataFrame,
    results: pd.DataFrame | None,
    stimulus_set: StimulusSet,
    folder: Path,
    options: Any = None,
) -> Outputs:
    """Write the table and figure of this module for one stimulus set.

    Returns:
        What was written (``written``: the paths, in order); empty when no human row
        is a main trial of the set.
    """
    from tracktale.analysis.arithmetic.figures import plot_people_vs_models
    from tracktale.analysis.arithmetic.tables import write_table

    outputs = Outputs()
    ids = {item.item_id for item in stimulus_set}
    human = human[human["item_id"].isin(ids)]
    if human.empty or not (human.get("role", "main") == "main").any():
        return outputs
    folder.mkdir(parents=True, exist_ok=True)
    table = people_and_models(human, results, stimulus_set, options)
    outputs.table(table, write_table(table, folder / TABLE_STEM), TABLE_TITLE)
    outputs.figures_saved(plot_people_vs_models(table, folder))
    return outputs


def _par(trials: pd.DataFrame) -> float | None:
    """PAR of people's trials: the percentage whose typed answer is a number."""
    from tracktale.stimuli.arithmetic.typed import parse_typed_answer

    if "response" not in trials.columns:
        return None
    numbers = [
        isinstance(text, str) and parse_typed_answer(text).value is not None
        for text in trials["response"]
    ]
    return 100 * sum(numbers) / len(numbers)


def _probed(trials: pd.DataFrame, stimulus_set: StimulusSet | None) -> dict[str, Any]:
    """How many intermediate values people typed, and the percentage right (``None``: none)."""
    import json

    from tracktale.stimuli.arithmetic.typed import score_intermediates

    judged: list[bool] = []
    if stimulus_set is not None and "intermediates" in trials.columns:
        for item_id, text in zip(trials["item_id"], trials["intermediates"], strict=True):
            if not isinstance(text, str):
                continue
            typed = {e["variable"]: e["value"] for e in json.loads(text) if e["value"].strip()}
            context = stimulus_set.get(item_id).context
            judged += score_intermediates(context, typed)["intermediate_correct"].values()
    if not judged:
        return {"probed": None, "intermediate_accuracy": None}
    return {"probed": len(judged), "intermediate_accuracy": 100 * sum(judged) / len(judged)}


write_people_section = written_paths(people_outputs)
