r"""Rendering: the procedure of Figure 1 and the inference prompt of Appendix B.

The prompt reproduces the paper's Appendix B (Figure 9) line for line. The paper's text has
three artefacts of its typesetting, resolved here as follows:

- every line of the listing is printed as its own paragraph; the prompt joins the lines with
  single newlines and adds no blank lines (the paper shows none we could place);
- typographic quotes around 'The final result is' are straight ASCII quotes, and the example
  procedure's ``\/`` is the division operator ``/`` (its executor runs ``eval`` on the
  operator, so the operators are Python's ``+ - * /``);
- "- Example (correct):" is followed by no example, and "That line must be ..." refers to a
  line the paper does not show. ``prompt_version="paper"`` keeps the text as published;
  ``"completed"`` adds the evident correct example ``<answer>42</answer>`` after
  "- Example (correct):". Nothing else is invented.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from tracktale.stimuli.arithmetic.executor import Number, round3

INSTRUCTION_LINES = (
    "You are a deterministic procedure executor.",
    "You will be given:",
    "1. A procedure (step-by-step instructions)",
    "2. Input values",
    "Your task is to simulate the procedure exactly as written.",
    "Execution rules:",
    "- Execute each step sequentially, without skipping or reordering.",
    "- Maintain exact intermediate state.",
    "- Do not reinterpret or optimize steps.",
    "Behavior:",
    "Show step-by-step execution.",
    "Include intermediate variable values after each step.",
    "Output rules:",
    "- Show all intermediate steps clearly.",
    "- Use the same variable names as in the procedure (S1, S2, etc.).",
    "- That line must be in the format: <answer>FINAL_RESULT</answer>.",
    "- Do not include any additional text before or after these tags.",
    "- Do not use phrases like 'The final result is'.",
    "- The output must contain only the tagged answer.",
    "- Example (correct):",
    "Example (incorrect):",
    "The final result is <answer>42</answer>",
    "Answer: 42",
)
PROMPT_VERSIONS = ("paper", "completed")
_CORRECT_EXAMPLE = "<answer>42</answer>"

MAX_STEPS = 1000
_STEP_HEADS = [f"Step {n}: " for n in range(MAX_STEPS + 1)]
_HEADER = "function(x, y):\nLet S1 = x\nLet S2 = y\n"


def instructions(prompt_version: str) -> str:
    """The instruction block that precedes ``Procedure:`` (no trailing newline)."""
    if prompt_version not in PROMPT_VERSIONS:
        raise ValueError(f"prompt_version must be one of {PROMPT_VERSIONS}")
    lines = list(INSTRUCTION_LINES)
    if prompt_version == "completed":
        lines.insert(lines.index("- Example (correct):") + 1, _CORRECT_EXAMPLE)
    return "\n".join(lines)


_INSTRUCTIONS = {version: instructions(version) for version in PROMPT_VERSIONS}


def step_texts(steps: Sequence[tuple[int, str, int]], first: int = 3) -> list[str]:
    """Each step as an assignment, ``S3 = S1 + S2`` (step n assigns S<n+2>).

    Args:
        steps: ``(i, op, j)`` per step, with ``op`` one of ``+ - * /``.
        first: The index of the variable the first of ``steps`` assigns.
    """
    return [f"S{t} = S{i} {op} S{j}" for t, (i, op, j) in enumerate(steps, start=first)]


def render_procedure(texts: Sequence[str]) -> str:
    """The procedure of Figure 1 from :func:`step_texts`: header, ``Step n: ...``, return."""
    if len(texts) > MAX_STEPS:
        raise ValueError(f"a procedure has at most {MAX_STEPS} steps, got {len(texts)}")
    return (
        _HEADER
        + "\n".join(map(operator.add, _STEP_HEADS[1 : len(texts) + 1], texts))
        + f"\nFinal Step: Return S{len(texts) + 2}"
    )


def format_input(value: Number) -> str:
    """An input as the prompt writes it: ``8`` (integer) or ``0.5``/``3.0`` (float)."""
    return str(value) if type(value) is int else repr(value)


def render_context(procedure: str, x: Number, y: Number) -> str:
    """The task part of the prompt: the procedure and the inputs."""
    return f"Procedure:\n{procedure}\nInputs:\nx = {format_input(x)}, y = {format_input(y)}"


def render_prompt(context: str, prompt_version: str = "paper") -> str:
    """The full Appendix B prompt for an item's context."""
    return _INSTRUCTIONS[prompt_version] + "\n" + context


def render_answer(value: Number) -> str:
    """The reference as the paper scores it, rounded to three decimals.

    Integers print exactly (``9560``); floats as the repr of ``round(value, 3)`` (``0.333``,
    ``12.5``, ``1.4300000000000001e+190``, ``inf``, ``-inf``, ``nan``), which parses back to
    exactly the rounded value.
    """
    return str(value) if type(value) is int else repr(round3(value))
