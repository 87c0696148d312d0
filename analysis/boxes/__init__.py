"""Analysis of the boxes paradigm: the tables and figures of *Can You Follow Me?*.

:func:`boxes_section` is the report section: from explicit-task model results and the boxes
stimulus set they were scored on, it writes

- ``boxes_table1.csv``/``.tex``: Step-EM / State-EM per condition row and shot column (the
  paper's Table 1; with compressed instances, distractors, prompt formats or partial synthetic
  language in the set, their rows make Tables 2-4), and ``boxes_final_step.csv``, the same in
  long form with 95% bootstrap intervals over instances and parse rates; with human trials
  of a boxes study on the set, a ``people`` row first (participant-clustered intervals, ours:
  the paper has no human data) and ``boxes_human_final_step.csv``;
- ``boxes_compression.csv``/``.tex`` (sets with compressed initialization): compressed minus
  normal initialization, paired by world, with bootstrap intervals;
- ``boxes_probing.csv`` and ``boxes_probing_<model>.{png,pdf,svg}`` (sets probed at every step):
  per-step curves with intervals (Figure 2);
- ``boxes_transitions.csv``, ``boxes_transition_labels.csv`` and
  ``boxes_transitions_<model>_<condition>.{png,pdf,svg}``: the transition categories of
  Figure 3 counted per step and plotted as in Figure 4.

Outputs are scored with our rules or the authors' (``rules``: functor and unparsed-answer
rules, see :class:`~tracktale.stimuli.boxes.scoring.ScoringRules`); an item sampled several
times scores as the mean of its samples. The report writes each stimulus set's files into its
own folder.

:func:`boxes_outputs` returns the same as objects (each table's data, each figure's files),
which the report section (:mod:`.section`, declared in :data:`SECTIONS`) renders.

This module imports pandas and matplotlib only when a function runs, so a report registry can
import it cheaply.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tracktale.analysis.report.outputs import Outputs, written_paths
from tracktale.stimuli.boxes.scoring import ScoringRules

if TYPE_CHECKING:
    import pandas as pd

    from tracktale.stimulus_set import StimulusSet

DEFAULT_BOOTSTRAP = 2000
SECTIONS = ("tracktale.analysis.boxes.section:models_section",)
"""The paradigm's report sections (``module:function``), in page order."""

TITLES = {
    "table1": "Step-EM / State-EM at the final test step, per model, condition and shot count, "
    "in the layout of the paper's Table 1 (and of Tables 2-4 where the set varies "
    "initialization, distractors or partial synthetic language)",
    "final_step": "The same in long form: Step-EM and State-EM at the final test step with "
    "95% bootstrap intervals over instances, and the share of answers parsed",
    "human": "People at the final test step: Step-EM and State-EM with participant-clustered "
    "intervals (ours: the paper has no human data)",
    "compression": "Compressed minus normal initialization at the final test step, each "
    "compressed instance paired with the same world run from the empty state, with bootstrap "
    "intervals (ours: the paper's Table 2 shows the two conditions' rows, as Table 1's layout "
    "does)",
    "probing": "Intermediate state probing: Step-EM and State-EM at every probed step, with "
    "bootstrap intervals (the data of the paper's Figure 2)",
    "transitions": "Transition categories (the paper's Figure 3) per model, condition and step: "
    "counts and shares of states (the data of Figure 4)",
    "transition_labels": "Every probed state's transition category, per instance and step",
}
"""Each table's caption in the report and in its LaTeX file."""
LONG_FORM = frozenset(
    {"boxes_final_step", "boxes_probing", "boxes_transitions", "boxes_transition_labels"}
)
"""Tables the page links without printing their rows: Table 1 and the figures summarize them."""


def boxes_outputs(
    results: pd.DataFrame,
    stimulus_set: StimulusSet,
    out_dir: str | os.PathLike[str],
    *,
    rules: ScoringRules | None = None,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    human: pd.DataFrame | None = None,
) -> Outputs:
    """Write the boxes tables and figures for ``results`` on ``stimulus_set``.

    Args:
        results: Model result rows (``model_id``, ``revision``, ``item_id``, ``task``,
            ``output``, ...); rows of other tasks and of items outside the set are ignored.
        stimulus_set: The boxes stimulus set.
        out_dir: The folder to write into (created if needed).
        rules: Our scoring rules (default) or the authors' code's (functor, unparsed answers).
        n_boot: Bootstrap resamples per interval.
        seed: Seed of the bootstrap.
        human: Human trials (``agent``, ``item_id``, ``task``, ``response``) of a boxes study on
            this set: a ``people`` row joins Table 1 (:mod:`.human`; participant-clustered
            intervals), and ``boxes_human_final_step.csv`` is written.

    Returns:
        What was written (``written``: the paths, in order, tables first); empty when no
        result belongs to the set.
    """
    import pandas as pd

    from tracktale.analysis.boxes import figures, human_rows, scores, tables, transitions

    rules = rules or ScoringRules()
    scored = scores.scored_items(results, stimulus_set, rules)
    people = human_rows.human_scored_items(human, stimulus_set) if human is not None else None
    outputs = Outputs()
    if scored.empty and (people is None or people.empty):
        return outputs
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    final = scores.final_step_table(scored, n_boot, seed)
    people_table = None
    if people is not None and not people.empty:
        factors = scores.row_factors(scored if not scored.empty else people)
        people_table = human_rows.human_final_step_table(people, factors)
        final = pd.concat([people_table[final.columns], final], ignore_index=True)
    # Written (and shown) in reading order: the paper's table, its long form, then the rest.
    _write(outputs, tables.paper_layout(final), out / "boxes_table1", TITLES["table1"], latex=True)
    _write(outputs, final, out / "boxes_final_step", TITLES["final_step"])
    if people_table is not None:
        _write(outputs, people_table, out / "boxes_human_final_step", TITLES["human"])
    if (scored["initialization"] == "compressed").any():
        paired = scores.paired_compression(scored, n_boot, seed)
        _write(outputs, paired, out / "boxes_compression", TITLES["compression"], latex=True)
    if (scored["probe"] == "every").any():
        probing = scores.probing_table(scored, n_boot, seed)
        labels = transitions.label_transitions(scored, stimulus_set, rules)
        counts = transitions.transition_counts(labels)
        _write(outputs, probing, out / "boxes_probing", TITLES["probing"])
        _write(outputs, counts, out / "boxes_transitions", TITLES["transitions"])
        _write(outputs, labels, out / "boxes_transition_labels", TITLES["transition_labels"])
        outputs.figures_saved(figures.plot_probing(probing, out))
        outputs.figures_saved(figures.plot_transitions(counts, out))
    return outputs


def _write(
    outputs: Outputs, table: pd.DataFrame, stem: Path, title: str, *, latex: bool = False
) -> None:
    """Write ``table`` as ``stem.csv`` (and ``stem.tex``, captioned) and record it."""
    from tracktale.analysis.boxes import tables

    paths = [tables.write_csv(table, stem.with_suffix(".csv"))]
    if latex:
        paths.append(tables.write_latex(table, stem.with_suffix(".tex"), title))
    outputs.table(table, paths, title, shown=stem.name not in LONG_FORM)


boxes_section = written_paths(boxes_outputs)
