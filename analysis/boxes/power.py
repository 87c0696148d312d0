"""The boxes study's people power model (``tracktale analysis power`` on a boxes set).

Does State-EM fall with the number of steps (``steps``)? Also ``instruction`` (flipped minus
normal) and ``language`` (synthetic minus natural language). The simulated people answer from
the study's own generating model (:func:`tracktale.experiment.paradigms.boxes.p_state_error`),
whose constants are the default effects. Named by the paradigm's plug-in (``power``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracktale.analysis.power.people import ListDesign, PowerModel


def _effects() -> dict[str, float]:
    """The effects of the log-odds of getting one state wrong.

    ``state_error`` after one step, ``steps`` per further step, ``instruction`` (flipped),
    ``language`` (synthetic).
    """
    from tracktale.experiment.paradigms import boxes

    return {
        "state_error": boxes.STATE_ERROR_LOGIT,
        "steps": boxes.STEP_SLOPE,
        "instruction": boxes.CONDITION_SHIFT["flipped-truth"],
        "language": boxes.CONDITION_SHIFT["synthetic"],
    }


def _variable(name: str, item: Any) -> float:
    condition = item.condition
    if name == "steps":
        return float(condition["n_steps"])
    if name == "instruction":
        return float(condition["instruction"] != "normal")
    return float(condition["language"] != "nl")


def _simulate(
    design: ListDesign, effects: Mapping[str, float], ability: float, attentive: bool, rng: Any
) -> Any:
    """The right states per trial of one participant (a guesser: each right half the time)."""
    import numpy as np

    logit: Any = effects["state_error"] - ability
    for name in ("steps", "instruction", "language"):
        logit = logit + effects[name] * design.offsets[name]
    error = 1 / (1 + np.exp(-logit)) if attentive else np.full(len(design.states), 0.5)
    return rng.binomial(design.states, 1 - error)


POWER = PowerModel(
    terms=("steps", "instruction", "language"),
    covariates=("steps", "instruction", "language"),
    outcomes=("state-em", "step-em"),
    effects=_effects,
    variable=_variable,
    states=lambda item: len(item.truth["queried"]),
    simulate=_simulate,
    shifts={"steps": 1},  # the study's slope counts the steps after the first
)
