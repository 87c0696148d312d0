"""Arithmetic items: sampled under the look-back rule, rendered, executed from their own text.

The look-back rule (Section 4.1 of the paper). Step n assigns S_t with t = n + 2; its two
operands are distinct variables, in random order:

- look-back k >= 2: drawn uniformly without replacement from the k most recent variables,
  H_t = {S_j : max(1, t - k) <= j < t} (both S1 and S2 at step 1, whatever k is);
- look-back 1: H_t = {S_(t-1)} has one variable, but a step needs two distinct ones. We pair
  the most recent variable with the input y (S2): step 1 is S1 op S2 and step n >= 2 is
  S_(t-1) op S2, the order drawn by a fair coin. This is the pattern of every step of the
  paper's own Appendix B example (S3 = S1 + S2, S4 = S2 * S3, S5 = S4 / S2, S6 = S5 - S2,
  S7 = S2 * S6), and with it the look-back-1 reference values reproduce the magnitudes of the
  paper's Table 4 (addition median ~350 and max ~9.6e3, multiplication max ~1e190), which a
  chain on the two most recent variables (growing like Fibonacci numbers) would not.

Two reference answers are computed from the rendered context text, never from the sampled
plan: ours by :func:`~.executor.execute_context` (IEEE results for division by zero and
overflow, ``truth["reference"]``) and the paper's by
:func:`~.paper_executor.execute_context_as_paper` (a step that raises is skipped,
``truth["paper_reference"]``); ``answer`` is the paper's, rounded as it is scored.
:func:`verify_item` re-renders the plan and re-runs the text both ways, so a stored item whose
text, plan, values or answers disagree is reported.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.item import Item
from tracktale.schema.payloads import ArithmeticTruth, truth_problems
from tracktale.stimuli.arithmetic.datasets import Dataset, get_dataset
from tracktale.stimuli.arithmetic.executor import (
    Number,
    ProcedureError,
    format_value,
    parse_steps,
    run_steps,
    split_context,
)
from tracktale.stimuli.arithmetic.paper_executor import (
    PAPER_TRUTH_FIELDS,
    execute_steps_as_paper,
    paper_truth,
)
from tracktale.stimuli.arithmetic.render import (
    render_answer,
    render_context,
    render_procedure,
    render_prompt,
    step_texts,
)

PARADIGM_NAME = "arithmetic"

Step = tuple[int, str, int]
_STEP_TEXT = re.compile(r"S([1-9]\d*) = S([1-9]\d*) ([-+*/]) S([1-9]\d*)")


def sample_inputs(rng: random.Random, dataset: Dataset) -> tuple[Number, Number]:
    """Draw x and y independently.

    Integers uniformly from lo..hi (with replacement), floats uniformly from [lo, hi] and
    rounded to three decimals.
    """
    setting = dataset.setting
    if setting.data_type == "int":
        return rng.randint(setting.low, setting.high), rng.randint(setting.low, setting.high)
    return (
        round(rng.uniform(setting.low, setting.high), 3),
        round(rng.uniform(setting.low, setting.high), 3),
    )


def sample_steps(rng: random.Random, dataset: Dataset, horizon: int) -> list[str]:
    """Draw ``horizon`` steps under the dataset's look-back rule and operators.

    Each step is one draw from every step the rule allows at its position (ordered operand
    pair and operator), as ``floor(random() * n)`` over those n steps: uniform up to n / 2**53.

    Returns:
        The steps as :func:`~.render.step_texts` writes them: ``S3 = S1 + S2``, ...
    """
    draw = rng.random
    return [
        choices[int(draw() * len(choices))]
        for choices in _allowed_steps(dataset.lookback, dataset.operators, horizon)
    ]


def _allowed_steps(lookback: int, operators: tuple[str, ...], horizon: int) -> list[list[str]]:
    """For each step 1..horizon, every step text the look-back rule and operators allow."""
    table = _ALLOWED.setdefault((lookback, operators), [])
    for t in range(len(table) + 3, horizon + 3):
        window = operand_window(t, lookback)
        pairs = [(i, j) for i in window for j in window if i != j]
        table.append([step_texts([(i, op, j)], first=t)[0] for i, j in pairs for op in operators])
    return table[:horizon]


_ALLOWED: dict[tuple[int, tuple[str, ...]], list[list[str]]] = {}
"""Allowed step texts by (look-back, operators), one list per step, grown on demand."""


def operand_window(t: int, lookback: int) -> tuple[int, ...]:
    """The variables (their indices) a step assigning S_t may use under ``lookback``."""
    if lookback == 1:
        return (1, 2) if t == 3 else (t - 1, 2)
    return tuple(range(max(1, t - lookback), t))


def build_item(
    dataset: Dataset,
    horizon: int,
    example: int,
    inputs: tuple[Number, Number],
    steps: Sequence[str],
    prompt_version: str,
    context: str | None = None,
    role: str = "main",
) -> Item:
    """Render, execute (from the rendered text) and package one item.

    Args:
        dataset: The dataset it belongs to.
        horizon: Its number of steps.
        example: Its position among the items of its dataset and horizon.
        inputs: ``(x, y)``.
        steps: The steps as :func:`~.render.step_texts` writes them (``S3 = S1 + S2``).
        prompt_version: ``paper`` or ``completed`` (see :mod:`.render`).
        context: The context already rendered from ``inputs`` and ``steps``, if the caller
            has it.
        role: ``main``, or ``practice`` for the human protocol's practice procedures.

    Returns:
        The item with its content id.
    """
    x, y = inputs
    context = context or render_context(render_procedure(steps), x, y)
    # Parsed once from the text, then run both ways.
    procedure, x_read, y_read = split_context(context)
    parsed = parse_steps(procedure)
    execution = run_steps(parsed, x_read, y_read)
    flags = execution.flags
    result = execution.result
    paper = execute_steps_as_paper(parsed, x_read, y_read)
    prompt = render_prompt(context, prompt_version)
    reported = paper.value
    return Item.create(
        paradigm=PARADIGM_NAME,
        role=role,
        condition={**dataset.condition(), "horizon": horizon},
        context=context,
        question=None,
        answer=render_answer(reported),
        prompt=prompt,
        messages=({"role": "user", "content": prompt},),
        truth={
            "inputs": {"x": x, "y": y},
            "steps": list(steps),
            "reference": format_value(result),
            "flags": flags,
            "edge_case": any(flags.values()) or result - result != 0,
            **paper_truth(paper, result),
        },
        meta={"example": example, "prompt_version": prompt_version},
    )


def verify_item(item: Item) -> list[str]:
    """Every way ``item`` disagrees with its dataset, its look-back rule or its own text.

    Returns:
        Problems as sentences; empty when the item is consistent.
    """
    malformed = truth_problems(item.truth, ArithmeticTruth)
    if malformed:
        return malformed
    try:
        return _verify(item)
    except (ProcedureError, TracktaleError) as error:
        return [str(error)]
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as error:
        return [f"the item's truth is malformed ({type(error).__name__}: {error})"]


def _verify(item: Item) -> list[str]:
    dataset = get_dataset(str(item.condition.get("dataset")))
    horizon = item.condition.get("horizon")
    problems = []
    if dict(item.condition) != {**dataset.condition(), "horizon": horizon}:
        problems.append(f"the condition does not describe dataset {dataset.name}")
    truth = item.truth
    x, y = truth["inputs"]["x"], truth["inputs"]["y"]
    problems.extend(_input_problems(dataset, x, y))
    steps = list(truth["steps"])
    if len(steps) != horizon:
        problems.append(f"the item has {len(steps)} steps, its horizon says {horizon}")
    problems.extend(_step_problems(dataset, steps))
    if problems:
        return problems
    return _rendering_problems(item, dataset, horizon, (x, y), steps)


def _input_problems(dataset: Dataset, x: Any, y: Any) -> list[str]:
    setting = dataset.setting
    kind = int if setting.data_type == "int" else float
    problems = []
    for name, value in (("x", x), ("y", y)):
        if type(value) is not kind:
            problems.append(f"input {name} = {value!r} is not {setting.data_type}")
        elif not setting.low <= value <= setting.high:
            problems.append(f"input {name} = {value!r} is outside [{setting.low}, {setting.high}]")
        elif kind is float and round(value, 3) != value:
            problems.append(f"input {name} = {value!r} has more than three decimals")
    return problems


def parse_step_text(text: str) -> tuple[int, int, str, int]:
    """``"S7 = S6 * S4"`` -> ``(7, 6, "*", 4)``.

    Raises:
        ProcedureError: If ``text`` is not an assignment of that form.
    """
    match = _STEP_TEXT.fullmatch(text) if isinstance(text, str) else None
    if not match:
        raise ProcedureError(f"truth step {text!r} is not 'S<t> = S<i> <op> S<j>'")
    return int(match[1]), int(match[2]), match[3], int(match[4])


def _step_problems(dataset: Dataset, steps: Sequence[str]) -> list[str]:
    problems = []
    for n, text in enumerate(steps, start=1):
        t, i, op, j = parse_step_text(text)
        window = operand_window(n + 2, dataset.lookback)
        if t != n + 2:
            problems.append(f"Step {n} assigns S{t}, not S{n + 2}")
        if i == j or i not in window or j not in window:
            problems.append(
                f"Step {n} uses S{i} and S{j}; look-back {dataset.lookback} allows two "
                f"distinct of {', '.join(f'S{w}' for w in window)}"
            )
        if op not in dataset.operators:
            problems.append(f"Step {n} uses {op!r}, not an operator of {dataset.operation}")
    return problems


def _rendering_problems(
    item: Item, dataset: Dataset, horizon: Any, inputs: tuple[Number, Number], steps: list[str]
) -> list[str]:
    rebuilt = build_item(
        dataset,
        horizon,
        int(item.meta["example"]),
        inputs,
        steps,
        str(item.meta["prompt_version"]),
        role=item.role,
    )
    ours, theirs = rebuilt.to_dict(), item.to_dict()
    problems = [
        f"field {name!r} differs from what the steps render (edited after generation?)"
        for name in ("context", "prompt", "messages", "answer")
        if ours[name] != theirs[name]
    ]
    problems.extend(
        f"truth {name!r} differs from executing the procedure text"
        for name in ("reference", "flags", "edge_case", *PAPER_TRUTH_FIELDS)
        if ours["truth"][name] != theirs["truth"].get(name)
    )
    if not problems and ours != theirs:
        problems.append("the item differs from its re-rendering (edited after generation?)")
    return problems
