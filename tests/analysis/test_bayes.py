"""The optional Bayesian recency fit (brms): a planted effect is found, a null is supported."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tracktale.analysis.stats.bayes import fit_bayes_recency, recency_formula
from tracktale.errors import TracktaleError


def _frame(recency_logit: float, seed: int = 3) -> pd.DataFrame:
    """24 participants x 16 items, complexity 1-4, both tasks, focus positions 1-4."""
    rng = np.random.default_rng(seed)
    rows = []
    person = rng.normal(0, 0.5, 24)
    item = rng.normal(0, 0.3, 16)
    for a in range(24):
        for i in range(16):
            complexity, position = 1 + i % 4, 1 + (i // 4 + a) % 4
            task = 0.5 if (a + i) % 2 else -0.5
            logit = 1.2 + person[a] + item[i] + recency_logit * (position - 2.5)
            rows.append({"correct": float(rng.random() < 1 / (1 + np.exp(-logit))),
                         "complexity": complexity, "task_s": task, "position": position,
                         "agent": f"P{a}", "item_id": f"I{i}"})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["complexity_c"] = frame["complexity"] - frame["complexity"].mean()
    frame["recency_c"] = frame["position"] - frame["position"].mean()
    return frame


def test_the_formula_has_the_slopes_the_design_allows():
    formula = recency_formula(_frame(0.0))
    assert formula.startswith("correct ~ complexity_c * task_s + recency_c + ")
    # everything varies within participants here; within items only task and recency do
    assert "(1 + complexity_c + task_s + complexity_c:task_s + recency_c | agent)" in formula
    assert "(1 + task_s + recency_c | item_id)" in formula


def test_a_bad_bound_is_refused_before_r_runs(brms):
    with pytest.raises(TracktaleError, match="bound must be positive"):
        fit_bayes_recency(_frame(0.0), 0.0)


def test_a_planted_recency_effect_is_found_and_lies_outside_the_bounds(brms):
    # one fit (the Stan model's compile takes a minute or two); intercepts only, as the test is
    # about the summary and the maximal model takes minutes
    frame = _frame(0.6)
    formula = "correct ~ complexity_c * task_s + recency_c + (1 | agent) + (1 | item_id)"
    result = fit_bayes_recency(frame, 3.0, chains=2, iterations=600, formula=formula)
    accuracy = frame["correct"].mean()
    rough = 100 * 0.6 * accuracy * (1 - accuracy)  # about 8-9 points per position
    assert result.ci95_low < rough < result.ci95_high
    assert result.ci95_low > 3.0 and result.mass_inside < 0.05 and result.p_positive > 0.99
    assert result.rhat_max < 1.05 and result.draws == 600 and result.divergent >= 0
    assert "b ~ normal(0, 1)" in result.priors and result.brms_version.startswith("2.")


def test_the_report_passes_the_bound_and_bayes_to_the_recency_section(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from tracktale.analysis.narrative.human_inference import recency_bound
    from tracktale.analysis.report import build
    from tracktale.analysis.report.render import describe_options
    from tracktale.app.cli import cli

    seen = []

    def capture(**arguments):
        seen.append(arguments["options"])
        raise SystemExit(0)

    monkeypatch.setattr(build, "build_report", capture)
    human = tmp_path / "trials.csv"
    human.write_text("x\n")
    arguments = ["analysis", "report", "--stimuli", str(tmp_path), "--human", str(human)]
    arguments += ["--out", str(tmp_path / "o")]
    runner = CliRunner()
    # Through the root group: click keeps a command's help option once made, and a command
    # invoked alone would keep "--help" without the root's "-h" (docs/cli.md then differs).
    runner.invoke(cli, [*arguments, "--recency-sesoi", "5", "--bayes"])
    runner.invoke(cli, arguments)
    assert [(o.recency_sesoi, o.bayes) for o in seen] == [(5.0, True), (3.0, False)]
    assert recency_bound(seen[0]) == 5.0
    assert "recency equivalence bounds +-5 points (and brms)" in describe_options(seen[0], [])
    refused = runner.invoke(cli, [*arguments, "--recency-sesoi", "0"])
    assert refused.exit_code == 2 and "--recency-sesoi" in refused.output
