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

This module imports pandas and matplotlib only when a function runs, so a report registry can
import it cheaply.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tracktale.stimuli.boxes.scoring import ScoringRules

if TYPE_CHECKING:
    import pandas as pd

    from tracktale.stimulus_set import StimulusSet

DEFAULT_BOOTSTRAP = 2000


def boxes_section(
    results: pd.DataFrame,
    stimulus_set: StimulusSet,
    out_dir: str | os.PathLike[str],
    *,
    rules: ScoringRules | None = None,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    human: pd.DataFrame | None = None,
) -> list[Path]:
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
        The paths written, tables first; empty when no result belongs to the set.
    """
    import pandas as pd

    from tracktale.analysis.boxes import figures, human_rows, scores, tables, transitions

    rules = rules or ScoringRules()
    scored = scores.scored_items(results, stimulus_set, rules)
    people = human_rows.human_scored_items(human, stimulus_set) if human is not None else None
    if scored.empty and (people is None or people.empty):
        return []
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[str | Path] = []
    final = scores.final_step_table(scored, n_boot, seed)
    if people is not None and not people.empty:
        factors = scores.row_factors(scored if not scored.empty else people)
        people_table = human_rows.human_final_step_table(people, factors)
        written.append(tables.write_csv(people_table, out / "boxes_human_final_step.csv"))
        final = pd.concat([people_table[final.columns], final], ignore_index=True)
    written.append(tables.write_csv(final, out / "boxes_final_step.csv"))
    layout = tables.paper_layout(final)
    written.append(tables.write_csv(layout, out / "boxes_table1.csv"))
    written.append(
        tables.write_latex(
            layout,
            out / "boxes_table1.tex",
            "Step-EM / State-EM at the final test step (boxes paradigm).",
        )
    )
    if (scored["initialization"] == "compressed").any():
        paired = scores.paired_compression(scored, n_boot, seed)
        written.append(tables.write_csv(paired, out / "boxes_compression.csv"))
        written.append(
            tables.write_latex(
                paired,
                out / "boxes_compression.tex",
                "Compressed minus normal initialization, paired by world (final test step).",
            )
        )
    figure_paths: list[Path] = []
    if (scored["probe"] == "every").any():
        probing = scores.probing_table(scored, n_boot, seed)
        written.append(tables.write_csv(probing, out / "boxes_probing.csv"))
        labels = transitions.label_transitions(scored, stimulus_set, rules)
        counts = transitions.transition_counts(labels)
        written.append(tables.write_csv(labels, out / "boxes_transition_labels.csv"))
        written.append(tables.write_csv(counts, out / "boxes_transitions.csv"))
        figure_paths += figures.plot_probing(probing, out)
        figure_paths += figures.plot_transitions(counts, out)
    return [Path(path) for path in written] + figure_paths
