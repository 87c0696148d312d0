"""The arithmetic study's people power model (``tracktale analysis power`` on an arithmetic set).

Does FAA fall with the procedure's length (``horizon``)? Also ``lookback`` (look-back 3 minus
1). The simulated people answer from the study's own generating model
(:func:`tracktale.experiment.paradigms.arithmetic.p_correct`), whose constants are the default
effects. Named by the paradigm's plug-in (``power``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracktale.analysis.power.people import ListDesign, PowerModel


def _effects() -> dict[str, float]:
    """The effects of the right result's log-odds.

    ``intercept``, ``horizon`` per step, ``lookback`` (look-back 3).
    """
    from tracktale.experiment.paradigms import arithmetic

    return {
        "intercept": arithmetic.BASE_LOGIT,
        "horizon": -arithmetic.STEP_SLOPE,
        "lookback": -arithmetic.LOOKBACK_SHIFT,
    }


def _variable(name: str, item: Any) -> float:
    condition = item.condition
    if name == "horizon":
        return float(condition["horizon"])
    if name == "lookback":
        return float(int(condition["lookback"]) > 1)
    return float(condition["operation"] != "add")


def _simulate(
    design: ListDesign, effects: Mapping[str, float], ability: float, attentive: bool, rng: Any
) -> Any:
    """Whether each trial's result is right for one participant (guessers rarely are)."""
    import numpy as np

    from tracktale.experiment.paradigms.arithmetic import INATTENTIVE_ACCURACY

    logit = np.full(len(design.states), effects["intercept"] + ability)
    for name in ("horizon", "lookback"):
        logit = logit + effects[name] * design.offsets[name]
    right = 1 / (1 + np.exp(-logit)) if attentive else INATTENTIVE_ACCURACY
    return rng.binomial(1, np.broadcast_to(right, design.states.shape))


POWER = PowerModel(
    terms=("horizon", "lookback"),
    covariates=("horizon", "lookback", "operation"),
    outcomes=("faa",),
    effects=_effects,
    variable=_variable,
    states=lambda item: 1,
    simulate=_simulate,
)
