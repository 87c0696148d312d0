"""Power by simulation for the boxes and arithmetic human studies, with participant inference.

The narrative study's power analysis (:mod:`tracktale.analysis.power.design`) fits the paper's GLM.
The boxes and arithmetic papers have no human study and so no human test; ours (README,
"Where the papers are silent or we differ") asks of people what the report shows for them:

- **boxes**: does State-EM fall with the number of steps (``steps``)? Also ``instruction``
  (flipped minus normal) and ``language`` (synthetic minus natural language).
- **arithmetic**: does FAA fall with the procedure's length (``horizon``)? Also ``lookback``
  (look-back 3 minus 1).

Each simulated study draws participants as the study's simulated people are drawn
(:func:`tracktale.experiment.simulation.run.draw_person`: ability SD 0.5, 6% inattentive), gives
each the list the server would give (lists in turn) and answers every main trial from the
study's own generating model (:func:`tracktale.experiment.paradigms.boxes.p_state_error`,
:func:`tracktale.experiment.paradigms.arithmetic.p_correct`, whose constants are the default
effects here; a test checks that both agree). Timeouts and the session exclusions are not
simulated (the report applies no accuracy exclusion to these paradigms).

Tests (``test``), all with participants as the unit of inference, the clustering of the
report's participant-bootstrap intervals:

- ``participant-t`` (default): each participant's own least-squares coefficient of the term
  (the outcome, State-EM or FAA on 0-1, on the term's variable and the other design variables
  of the paradigm: steps, instruction, language and their interaction; or horizon, look-back,
  operation and look-back x operation: the condition cells saturated, so that conditions
  unbalanced against steps in a list cannot bias the steps coefficient), then a
  one-sample t test of those coefficients against 0 over participants (df G - 1). Every
  participant sees every level, so the coefficients are independent with mean 0 under the
  null whatever the correlation of a participant's trials; the estimate is in proportion
  units per unit of the term (per step, per condition).
- ``glm-cluster``: a logistic GLM of the trials (States as binomial counts for State-EM) with
  participant-clustered CR1 standard errors and a t(G - 1) reference.
- ``glm-cluster-z``: the same with a normal reference (what statsmodels reports), kept to
  show in ``benchmarks/bench_people_null.py`` how far it drifts from 5% with few participants.

Inference is over participants with the items fixed (the items differ between lists only by
design; the generating model has no item effect), as the report's intervals are.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from tracktale.stimulus_set import StimulusSet

TESTS = ("participant-t", "glm-cluster", "glm-cluster-z")

Simulate = Callable[["ListDesign", Mapping[str, float], float, bool, "np.random.Generator"], Any]


@dataclass(frozen=True)
class PowerModel:
    """One paradigm's people power model, named by its plug-in (``power``).

    Attributes:
        terms: The testable terms; the first is the default.
        covariates: The design variables of a participant's regression, in column order (the
            second and third also enter as their interaction).
        outcomes: The per-trial outcomes that can be tested; the first is the default.
        effects: The generating model's own effects (the people's are added to them).
        variable: A design variable's value on an item (``variable(name, item)``).
        states: The states an item asks for (1 where a trial has one answer).
        shifts: What the generating model subtracts from a variable (its slope counts the steps
            after the first), by variable.
        simulate: One participant's right answers per trial:
            ``simulate(design, effects, ability, attentive, rng)``.
    """

    terms: tuple[str, ...]
    covariates: tuple[str, ...]
    outcomes: tuple[str, ...]
    effects: Callable[[], dict[str, float]]
    variable: Callable[[str, Any], float]
    states: Callable[[Any], int]
    simulate: Simulate
    shifts: Mapping[str, float] = field(default_factory=dict)


def power_paradigms() -> tuple[str, ...]:
    """The paradigms that declare a people power model, in registration order."""
    from tracktale.stimuli.registry import paradigms_with

    return paradigms_with("power")


def power_model(paradigm: str) -> PowerModel:
    """The people power model ``paradigm``'s plug-in names.

    Raises:
        TracktaleError: For a paradigm without one.
    """
    from tracktale.stimuli.registry import get_plugin

    if paradigm not in power_paradigms():
        raise TracktaleError(f"no people power analysis for paradigm {paradigm!r}")
    model: PowerModel = get_plugin(paradigm).load("power")
    return model


def default_effects(paradigm: str) -> dict[str, float]:
    """The generating model's effects: those of the study's simulated people.

    The paradigm's own (:attr:`PowerModel.effects`), then both of the people:
    ``participant_sd``, ``inattentive`` (share of people who guess).
    """
    from tracktale.experiment.simulation import run as simulate

    people = {"participant_sd": 0.5, "inattentive": simulate.INATTENTIVE_RATE}
    return {**power_model(paradigm).effects(), **people}


@dataclass(frozen=True)
class PeoplePowerSettings:
    """What a boxes or arithmetic power analysis simulates and tests.

    Attributes:
        sizes: Participants per simulated study.
        simulations: Simulated studies per size.
        term: The tested term (``None``: the first of the paradigm's :attr:`PowerModel.terms`).
        test: One of :data:`TESTS`.
        outcome: boxes ``state-em`` (default) or ``step-em``; arithmetic ``faa``.
        alpha: Two-sided level.
        effects: Overrides of :func:`default_effects` (e.g. ``{"steps": 0.0}``: the null).
        seed: Seed of every draw.
    """

    sizes: Sequence[int] = (10, 20, 30, 40)
    simulations: int = 200
    term: str | None = None
    test: str = "participant-t"
    outcome: str | None = None
    alpha: float = 0.05
    effects: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0


@dataclass(frozen=True)
class ListDesign:
    """One list's main trials: the design variables and what the generating model needs."""

    covariates: np.ndarray
    """Trials x (1 + covariates) design matrix, the term's columns centred."""
    states: np.ndarray
    """States asked per trial (1 for arithmetic)."""
    offsets: dict[str, np.ndarray]
    """Per-trial values of each effect's variable in the generating model."""


def paradigm_of(stimulus_set: StimulusSet) -> str:
    """The paradigm of a stimulus set (from its manifest)."""
    return str(stimulus_set.manifest.paradigm)


def list_designs(stimulus_set: StimulusSet, paradigm: str) -> list[ListDesign]:
    """Every list's main trials, in the order participants are given lists (L1, L2, ...)."""
    import numpy as np

    from tracktale.experiment.paradigms import get_human_study
    from tracktale.experiment.study.design import LIST_IDS, DesignConfig

    study = get_human_study(paradigm)
    model = power_model(paradigm)
    designs = []
    for list_id in LIST_IDS:
        plan = study.build_session(stimulus_set, list_id, 0, DesignConfig())
        items = [stimulus_set.get(t.item_id) for t in plan.trials if t.role == "main"]
        variables = {name: np.array([model.variable(name, i) for i in items], dtype=float)
                     for name in model.covariates}  # fmt: skip
        centred = [values - values.mean() for values in variables.values()]
        # The two conditions' interaction saturates the condition cells, so a list whose
        # conditions are not balanced against the steps cannot lend their effects to steps.
        interaction = centred[1] * centred[2]
        columns = [np.ones(len(items)), *centred, interaction - interaction.mean()]
        states = [model.states(i) for i in items]
        offsets = dict(variables)
        for name, shift in model.shifts.items():
            offsets[name] = offsets[name] - shift
        designs.append(ListDesign(np.column_stack(columns), np.array(states), offsets))
    return designs


def simulate_study(
    designs: Sequence[ListDesign],
    paradigm: str,
    participants: int,
    effects: Mapping[str, float],
    rng: np.random.Generator,
) -> list[np.ndarray]:
    """One study: per participant, the right states (or results) per trial."""
    simulate = power_model(paradigm).simulate
    out = []
    for index in range(participants):
        design = designs[index % len(designs)]
        ability = rng.normal(0.0, effects["participant_sd"])
        attentive = rng.random() >= effects["inattentive"]
        out.append(simulate(design, effects, ability, attentive, rng))
    return out


def test_study(
    designs: Sequence[ListDesign],
    paradigm: str,
    right: Sequence[np.ndarray],
    term: str,
    test: str,
    outcome: str,
) -> tuple[float, float] | None:
    """(estimate, two-sided p) of ``term`` in one simulated study, or ``None`` if unfittable."""
    import numpy as np
    from scipy import stats

    column = 1 + power_model(paradigm).covariates.index(term)
    design_of = [designs[i % len(designs)] for i in range(len(right))]
    if outcome == "step-em":
        values = [(r == d.states).astype(float) for r, d in zip(right, design_of, strict=True)]
    else:
        values = [r / d.states for r, d in zip(right, design_of, strict=True)]
    if test == "participant-t":
        weights = [np.linalg.pinv(d.covariates)[column] for d in design_of]
        slopes = np.array([w @ v for w, v in zip(weights, values, strict=True)])
        if np.ptp(slopes) == 0:
            return float(slopes[0]), 1.0  # every participant alike: no evidence of an effect
        result = stats.ttest_1samp(slopes, 0.0)
        return float(slopes.mean()), float(result.pvalue)
    return _glm_test(design_of, right, values, column, test, outcome)


def _glm_test(design_of, right, values, column, test, outcome) -> tuple[float, float] | None:
    import numpy as np
    import statsmodels.api as sm
    from scipy import stats

    x = np.vstack([d.covariates for d in design_of])
    groups = np.concatenate([np.full(len(v), i) for i, v in enumerate(values)])
    if outcome == "state-em":
        hits = np.concatenate(right).astype(float)
        states = np.concatenate([d.states for d in design_of]).astype(float)
        endog = np.column_stack([hits, states - hits])
    else:
        endog = np.concatenate(values)
    if np.ptp(endog if endog.ndim == 1 else endog[:, 0] / endog.sum(axis=1)) == 0:
        return None
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            # Near-separation (a participant always right) warns; a non-finite z is refused.
            warnings.simplefilter("ignore")
            fit = sm.GLM(endog, x, family=sm.families.Binomial()).fit(
                cov_type="cluster", cov_kwds={"groups": groups}
            )
            z = float(fit.params[column] / fit.bse[column])
    except (ValueError, np.linalg.LinAlgError, ArithmeticError):
        return None
    if not math.isfinite(z):
        return None
    if test == "glm-cluster":
        return float(fit.params[column]), float(2 * stats.t.sf(abs(z), len(values) - 1))
    return float(fit.params[column]), float(2 * stats.norm.sf(abs(z)))


def parse_effects(pairs: Sequence[str]) -> dict[str, float]:
    """``NAME=VALUE`` pairs (``--people-effect``) as a mapping (names: :func:`resolve`).

    Raises:
        TracktaleError: For a pair without ``=`` or with a value that is not a number.
    """
    effects = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or not math.isfinite(number):
            raise TracktaleError(f"--people-effect {pair!r}: expected NAME=NUMBER")
        effects[name.strip()] = number
    return effects


def resolve(paradigm: str, settings: PeoplePowerSettings) -> tuple[str, str, dict[str, float]]:
    """The term, outcome and effects of ``settings`` for ``paradigm``, checked.

    Raises:
        TracktaleError: For a term, test, outcome or effect the paradigm does not have.
    """
    model = power_model(paradigm)
    term = settings.term or model.terms[0]
    if term not in model.terms:
        raise TracktaleError(
            f"{paradigm}: unknown term {term!r} (choose from {', '.join(model.terms)})"
        )
    outcome = settings.outcome or model.outcomes[0]
    if outcome not in model.outcomes:
        raise TracktaleError(
            f"{paradigm}: unknown outcome {outcome!r} (choose from {', '.join(model.outcomes)})"
        )
    if settings.test not in TESTS:
        raise TracktaleError(f"unknown test {settings.test!r} (choose from {', '.join(TESTS)})")
    effects = default_effects(paradigm)
    unknown = sorted(set(settings.effects) - set(effects))
    if unknown:
        raise TracktaleError(
            f"{paradigm}: unknown effect {unknown[0]!r} (choose from {', '.join(effects)})"
        )
    if settings.simulations < 1 or not settings.sizes or min(settings.sizes) < 2:
        raise TracktaleError("power needs at least one simulation and sizes of 2 or more")
    return term, outcome, {**effects, **settings.effects}


def simulate_people_power(
    stimulus_set: StimulusSet,
    settings: PeoplePowerSettings,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Power of the chosen test for every sample size.

    Returns:
        The columns of :func:`tracktale.analysis.power.design.simulate_power` (``mean_estimate`` in
        the test's units; ``mean_analysed`` is every participant: no exclusions).

    Raises:
        TracktaleError: For a set of another paradigm, or settings :func:`resolve` refuses.
    """
    import numpy as np
    import pandas as pd

    from tracktale.analysis.power.design import _summary as summary_row

    paradigm = paradigm_of(stimulus_set)
    term, outcome, effects = resolve(paradigm, settings)
    designs = list_designs(stimulus_set, paradigm)
    rng = np.random.default_rng(settings.seed)
    rows, done, total = [], 0, len(settings.sizes) * settings.simulations
    for size in settings.sizes:
        fitted = []
        for _ in range(settings.simulations):
            right = simulate_study(designs, paradigm, size, effects, rng)
            fitted.append(test_study(designs, paradigm, right, term, settings.test, outcome))
            done += 1
            if progress:
                progress(done, total)
        # The narrative power table's row: (estimate, p, participants analysed) per study.
        outcomes = [None if f is None else (*f, float(size)) for f in fitted]
        rows.append(summary_row(size, outcomes, settings, settings.test))
    return pd.DataFrame(rows)


def people_power_report(
    stimulus_set: StimulusSet,
    settings: PeoplePowerSettings,
    out: Path | None,
    progress: Callable[[int, int], None] | None = None,
    echo: Callable[[str], None] = print,
) -> list[str]:
    """Run :func:`simulate_people_power`; write ``power.csv/.tex`` and the curve to ``out``.

    Returns:
        The lines the CLI prints after the run (one per size, then what was written).
    """
    from tracktale.analysis.power.design import power_figure
    from tracktale.analysis.report.tables import format_cell, save_table

    term, outcome, _ = resolve(paradigm_of(stimulus_set), settings)
    echo(f"test: {settings.test} on {outcome}, term {term}")
    table = simulate_people_power(stimulus_set, settings, progress)
    lines = [
        f"N={row.participants:>4}  power {format_cell(row.power, 3)} "
        f"[{format_cell(row.ci_low, 3)}, {format_cell(row.ci_high, 3)}]  "
        f"mean estimate {format_cell(row.mean_estimate, 4)}"
        for row in table.itertuples()
    ]
    if out is not None:
        save_table(table, out, "power", f"Power for {term} (alpha {settings.alpha})")
        power_figure(table, out, term)
        lines.append(f"wrote {out}/power.csv and {out}/power_curve.png")
    return lines
