"""Time the analysis: the paper's GLM, a power simulation, and a whole report.

Targets: the GLM on 48 participants in under 50 ms; power at 200 simulations per size over six
sizes in under 2 minutes; the full report (48 simulated people, the paper's 16 models on the
full model protocol, statsmodels mixed model) in under a minute. Prints figures; asserts nothing.
Run: .venv/bin/python benchmarks/bench_analysis.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from tracktale.analysis.data.catalog import KNOWN_MODELS
from tracktale.analysis.data.exclusions import apply_exclusions
from tracktale.analysis.data.tidy import build_trial_table, item_table
from tracktale.analysis.power.design import PowerSettings, simulate_power
from tracktale.analysis.power.simulate import (
    SimulationParams,
    simulate_human_data,
    simulate_model_results,
)
from tracktale.analysis.report.build import ReportOptions, build_report
from tracktale.analysis.stats.glm import fit_human_glm
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import write_stimulus_set


def _best(function, repeats: int) -> float:
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        timings.append(time.perf_counter() - start)
    return min(timings)


def main() -> None:
    narrative = get_paradigm("narrative")
    human_set = narrative.generate_set("human", 1)
    model_set = narrative.generate_set("model", 1)
    human = simulate_human_data(human_set, 48, SimulationParams(guessers=0.1), seed=1)
    table = build_trial_table(item_table([human_set]), human)
    analysed = apply_exclusions(table, human.participants).trials
    fit_human_glm(analysed)  # imports
    glm = _best(lambda: fit_human_glm(analysed, recency="focus"), 10)
    print(f"GLM with recency, {len(analysed)} trials of 48 participants: {1000 * glm:.1f} ms")

    settings = PowerSettings(sizes=(20,), simulations=50, seed=1)
    power = _best(lambda: simulate_power(human_set, SimulationParams(guessers=0.1), settings), 1)
    per_sim = power / settings.simulations
    print(
        f"power: {1000 * per_sim:.0f} ms per simulated study of 20 participants "
        f"(6 sizes x 200 simulations: about {1200 * per_sim / 60:.1f} min)"
    )

    results = simulate_model_results(model_set, list(KNOWN_MODELS), seed=1)
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        write_stimulus_set(human_set, root / "human-set")
        write_stimulus_set(model_set, root / "model-set")
        (root / "export").mkdir()
        human.trials.to_csv(root / "export" / "trials.csv", index=False)
        human.participants.to_csv(root / "export" / "participants.csv", index=False)
        results.to_parquet(root / "results.parquet")
        start = time.perf_counter()
        report = build_report(
            stimuli=[root / "human-set", root / "model-set"],
            human=root / "export",
            models=root / "results.parquet",
            out=root / "report",
            options=ReportOptions(engine="statsmodels"),
        )
        elapsed = time.perf_counter() - start
        n_figures = sum(len(s.figures) for s in report.sections)
        print(
            f"report: 48 people + {len(KNOWN_MODELS)} models x {len(model_set)} items "
            f"({len(results):,} result rows): {elapsed:.1f} s, {n_figures} figures"
        )


if __name__ == "__main__":
    main()
