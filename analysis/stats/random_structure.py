"""Random effects from the design, and the declared path by which a failing fit is simplified.

**The maximal structure** (Barr et al. 2013) gives every grouping factor (participants, items) a
random intercept and a random slope for every fixed term whose factors *all* vary within that
grouping's levels. In the narrative human study complexity, task and recency vary within
participants, and only task varies within items (each story has one complexity and one focus
position but is explicit for some people and implicit for others), so model 1's maximal
structure is ``(1 + complexity_z + task_s + complexity_z:task_s | agent) + (1 + task_s |
item_id)`` and model 2 adds ``recency_z`` by participant. :func:`maximal_slopes` reads this off
the rows fitted; :func:`design_slopes` off a declared design (``within_participants`` and
``within_items`` of each factor in a study's ``design.yaml``): the same rule.

**The ladder** (``ladder.R``, Matuschek et al. 2017), followed only when the maximal model is
singular or does not converge, each step printed with its reason:

1. drop the correlations between random effects (``||``);
2. drop the random slopes whose SD is below :data:`NEAR_ZERO` (log-odds);
3. drop slopes one at a time by likelihood-ratio test: the slope whose removal costs least goes
   while its p exceeds :data:`LADDER_ALPHA` (0.2) or the fit is still singular or not
   converged; an interaction slope goes before its main effects.

The final fit is refitted with the Nelder-Mead and nloptwrap optimizers (as ``lme4::allFit``)
and the largest difference in a fixed effect is reported.

``random`` (the CLI's ``--random``) chooses: ``maximal`` (the default, with the ladder),
``intercepts`` (crossed random intercepts only, the report's default before issue 29) or an
lme4 random part such as ``(1 + task_s | agent) + (1 | item_id)``, fitted as given.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import pandas as pd

GROUPS = ("agent", "item_id")
LADDER_ALPHA = 0.2
"""Step 3's level: a slope stays when dropping it gives LRT p <= 0.2 (Matuschek et al. 2017)."""
NEAR_ZERO = 0.01
"""Step 2's threshold: a random slope with SD below 0.01 log-odds counts as zero."""
RANDOM_CHOICES = ("maximal", "intercepts")


def maximal_slopes(
    frame: pd.DataFrame, terms: list[str], groups: tuple[str, ...] = GROUPS
) -> dict[str, list[str]]:
    """Grouping -> the fixed terms whose every factor varies within its levels (in the data).

    Args:
        frame: The rows fitted.
        terms: Fixed terms (``complexity_z``, ``task_s``, ``complexity_z:task_s``, ...); the
            intercept is implied.
        groups: The grouping columns.
    """
    from tracktale.analysis.stats.mixed import _within_group_range

    factors = {f for term in terms for f in term.split(":")}
    varies = {
        (group, factor): _within_group_range(frame[factor], frame[group].to_numpy()) > 0
        for group in groups
        for factor in factors
    }
    return {
        group: [t for t in terms if all(varies[(group, f)] for f in t.split(":"))]
        for group in groups
    }


def design_slopes(
    within: dict[str, tuple[bool, bool]], terms: list[str], groups: tuple[str, ...] = GROUPS
) -> dict[str, list[str]]:
    """The same rule from a declared design.

    Args:
        within: Factor (as named in the terms) -> (within participants, within items), as a
            study's ``design.yaml`` declares them.
        terms: Fixed terms, factors joined by ``:``.
        groups: The participant grouping first, then the item grouping.

    Raises:
        TracktaleError: When a term names a factor the design does not declare.
    """
    missing = {f for t in terms for f in t.split(":")} - set(within)
    if missing:
        raise TracktaleError(f"the design declares no factor {sorted(missing)[0]!r}")
    return {
        group: [t for t in terms if all(within[f][index] for f in t.split(":"))]
        for index, group in enumerate(groups)
    }


def random_part(slopes: dict[str, list[str]], correlated: bool = True) -> str:
    """The random part in lme4 notation (``(1 + a + b | g)`` or with ``||``)."""
    parts = []
    for group, terms in slopes.items():
        if not terms:
            parts.append(f"(1 | {group})")
        else:
            bar = "|" if correlated else "||"
            parts.append(f"(1 + {' + '.join(terms)} {bar} {group})")
    return " + ".join(parts)


def fixed_terms(fixed: str) -> list[str]:
    """The fixed terms of ``correct ~ a * b + c`` (``a``, ``b``, ``a:b``, ``c``)."""
    right = fixed.split("~", 1)[1]
    terms: list[str] = []
    for part in (p.strip() for p in right.split("+")):
        if "*" in part:
            factors = [f.strip() for f in part.split("*")]
            terms += [*factors, ":".join(factors)]
        elif part and part != "1":
            terms.append(part)
    return list(dict.fromkeys(terms))


def check_random(random: str) -> str:
    """``maximal``, ``intercepts`` or an lme4 random part (checked for its shape).

    Raises:
        TracktaleError: For anything else.
    """
    if random in RANDOM_CHOICES:
        return random
    text = random.strip()
    if not (text.startswith("(") and "|" in text and text.endswith(")")):
        raise TracktaleError(
            f"--random {random!r}: use maximal, intercepts or an lme4 random part such as "
            "'(1 + task_s | agent) + (1 | item_id)'"
        )
    return text


@dataclass
class LadderFit:
    """One model fitted along the ladder.

    Attributes:
        name: ``model 1`` or ``model 2``.
        maximal: The maximal formula.
        steps: ``step``, ``action``, ``reason``, ``formula``, ``singular``, ``converged``,
            ``logLik``, ``npar``, ``error`` (one row per fit made).
        optimizers: ``optimizer``, ``max_abs_diff_fixed``, ``logLik_diff``, ``error``.
        fit: The final fit (a :class:`~tracktale.analysis.stats.lme4.GlmerFit`), or R's
            message when it failed.
        formula: The final formula.
    """

    name: str
    maximal: str
    steps: Any
    optimizers: Any = None
    fit: Any = None
    formula: str = ""
    notes: list[str] = field(default_factory=list)

    def to_text(self) -> str:
        """The ladder, one line per step."""
        lines = [f"random effects of {self.name}: maximal {self.maximal}"]
        for row in self.steps.itertuples():
            state = "ok" if row.converged and not row.singular else "singular" * bool(row.singular)
            state = state or "not converged"
            if isinstance(row.error, str) and row.error:
                state = f"failed: {row.error}"
            lines.append(f"  {row.step}. {row.action} ({row.reason}): {row.formula} -> {state}")
        lines.append(f"  fitted: {self.formula}")
        return "\n".join(lines)


def fit_ladders(
    frame: pd.DataFrame, fixed: dict[str, str], slopes: dict[str, dict[str, list[str]]]
) -> dict[str, LadderFit]:
    """Fit each model along the ladder in one R process (``glmer_ladder.R``).

    Args:
        frame: The rows fitted (``correct``, ``agent``, ``item_id`` and the predictors).
        fixed: Model name -> fixed part (``correct ~ complexity_z * task_s``).
        slopes: Model name -> grouping -> its maximal random slopes.

    Raises:
        TracktaleError: When R or lme4 is missing, or R fails as a whole.
    """
    import pandas as pd

    from tracktale.analysis.stats.lme4 import GlmerFit, run_rscript

    keys = {name: f"m{index}" for index, name in enumerate(fixed)}
    rows = [
        {"model": keys[name], "group": group, "term": term}
        for name, by_group in slopes.items()
        for group, terms in by_group.items()
        for term in (terms or [""])
    ]
    columns = [c for c in frame.columns if any(c in f for f in fixed.values())]
    columns = list(dict.fromkeys(["correct", "agent", "item_id", *columns]))
    out: dict[str, LadderFit] = {}
    with tempfile.TemporaryDirectory(prefix="tracktale-ladder-") as work:
        folder = Path(work)
        frame[columns].to_csv(folder / "data.csv", index=False)
        spec = pd.DataFrame({"model": [keys[n] for n in fixed], "fixed": list(fixed.values())})
        spec.to_csv(folder / "spec.csv", index=False)
        pd.DataFrame(rows, columns=["model", "group", "term"]).to_csv(
            folder / "structure.csv", index=False
        )
        files = [str(folder / n) for n in ("data.csv", "spec.csv", "structure.csv")]
        run_rscript("glmer_ladder.R", [*files, work], 3600, "glmer (random-effects ladder)")
        for name, key in keys.items():
            info_table = pd.read_csv(folder / f"info_{key}.csv", keep_default_na=False)
            info = dict(zip(info_table["key"], info_table["value"].astype(str), strict=True))
            steps = pd.read_csv(folder / f"steps_{key}.csv", keep_default_na=False)
            ladder = LadderFit(
                name=name,
                maximal=f"{fixed[name]} + {random_part(slopes[name])}",
                steps=steps,
                formula=info.get("formula", ""),
            )
            if info.get("error"):
                ladder.fit = info["error"]
            else:
                ladder.optimizers = pd.read_csv(folder / f"optimizers_{key}.csv")
                ladder.fit = GlmerFit(
                    fixed=pd.read_csv(folder / f"fixed_{key}.csv"),
                    random=pd.read_csv(folder / f"random_{key}.csv"),
                    info=info,
                    vcov=pd.read_csv(folder / f"vcov_{key}.csv", index_col=0),
                )
            out[name] = ladder
    return out
