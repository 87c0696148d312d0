"""The paper's own reference executor (Appendix A, Figure 8), reproduced without ``eval``.

The paper computes its reference outputs with ``exec_algo(prompt, inputs)``: it starts a
dictionary with ``S1 = x`` and ``S2 = y``, then, for every line of the procedure that contains
``=``, splits off the assignment after the last ``:``, evaluates ``S<i> op S<j>`` with Python's
``eval`` **inside ``try: ... except Exception: pass``** and stores the value under ``S<t>``. It
returns ``[str(v) for v in vars_dict.values()]``: the values of the variables that were
assigned, in the order they were assigned. What that means, step by step:

- the header lines (``Let S1 = x``) and the inputs line (``x = 5, y = 8``) contain ``=`` but do
  not split into three tokens or two sides, so they raise and are passed over; ``Final Step:
  Return S<n>`` has no ``=``;
- a step raises, and so is **skipped**, when its divisor is zero (``ZeroDivisionError``, for
  ``0`` and ``0.0`` alike, whatever the dividend, ``inf`` and ``nan`` included), when an
  integer quotient or an integer mixed with a float is beyond binary64's range
  (``OverflowError``), or when it reads a variable a skipped step never assigned
  (``KeyError``); a skipped step leaves its variable unassigned, so every later step that reads
  it is skipped too;
- otherwise Python's numbers apply: integers stay exact however large they grow (``+ - *`` of
  two integers), ``/`` is true division, float overflow gives ``inf`` without an exception and
  ``inf - inf`` gives ``nan``.

**The final answer the paper's code reports** is the last element of the returned list: the
value of the *last variable that was assigned*. When the final step ran, that is the returned
variable S<T+2> (what the procedure asks for); when the final step was skipped, it is an
earlier variable (S2, the input y, if every step was skipped), and the procedure's own
``Return S<T+2>`` names a variable the code never assigned. :class:`PaperExecution` keeps both
readings apart: ``value``/``variable`` (the last list element, our default "paper"
reference) and ``returned_assigned`` (whether S<T+2> exists at all).

Integers beyond 4,300 digits are a hazard of this semantics: Python 3.11 refuses ``str()`` of
them, which is outside the ``try`` and would stop ``exec_algo``. :data:`MAX_DIGITS` guards the
executor against runaway products; no item of the 55 datasets comes close (see the README).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.stimuli.arithmetic.executor import Number, parse_steps, split_context

MAX_DIGITS = 4300
"""Python's default limit for ``str()`` of an integer (``sys.get_int_max_str_digits``)."""
_MAX_MAGNITUDE = 10**MAX_DIGITS
PAPER_TRUTH_FIELDS = (
    "paper_reference",
    "paper_variable",
    "paper_returned_assigned",
    "paper_skipped",
    "references_differ",
)
"""The truth fields :func:`paper_truth` adds to an item."""


@dataclass(frozen=True)
class PaperExecution:
    """What ``exec_algo`` computes for one procedure.

    Attributes:
        assigned: ``(k, value)`` of every assigned variable S<k>, in assignment order
            (``S1``, ``S2`` first): the list ``exec_algo`` returns, before ``str()``.
        skipped: The step numbers whose evaluation raised (their variables stay unassigned).
        returned: k of the variable the procedure returns (``T + 2``).
    """

    assigned: tuple[tuple[int, Number], ...]
    skipped: tuple[int, ...]
    returned: int

    @property
    def variable(self) -> int:
        """K of the last assigned variable: the one whose value the paper reports."""
        return self.assigned[-1][0]

    @property
    def value(self) -> Number:
        """The last element of the returned list: the paper's reference answer."""
        return self.assigned[-1][1]

    @property
    def returned_assigned(self) -> bool:
        """Whether the returned variable S<T+2> was assigned (its final step ran)."""
        return self.variable == self.returned

    def as_strings(self) -> list[str]:
        """The list exactly as ``exec_algo`` returns it (``str()`` of each value)."""
        return [str(value) for _, value in self.assigned]


def execute_as_paper(procedure: str, x: Number, y: Number) -> PaperExecution:
    """Run a procedure text with the paper's executor semantics (see the module docstring).

    Args:
        procedure: The procedure text (``function(x, y):`` ... ``Final Step: Return S<n>``).
        x: The first input (an ``int`` or a ``float``, as the item states it).
        y: The second input.

    Raises:
        ProcedureError: If the text breaks the grammar the generator writes.
        TracktaleError: If an exact integer grows past :data:`MAX_DIGITS` digits.
    """
    return execute_steps_as_paper(parse_steps(procedure), x, y)


def execute_steps_as_paper(
    steps: list[tuple[int, int, str, int]], x: Number, y: Number
) -> PaperExecution:
    """:func:`execute_as_paper` on steps from :func:`~.executor.parse_steps`."""
    values: list[Number | None] = [None, x, y]  # S<k> is values[k]; None: never assigned
    append = values.append
    skipped: list[int] = []
    for n, i, op, j in steps:
        u, v = values[i], values[j]
        if u is None or v is None:  # exec_algo: a KeyError on the dictionary
            skipped.append(n)
            append(None)
            continue
        try:
            if op == "+":
                result = u + v
            elif op == "-":
                result = u - v
            elif op == "*":
                result = u * v
            else:
                result = u / v
        except (ZeroDivisionError, OverflowError):
            skipped.append(n)
            append(None)
            continue
        if type(result) is int and not -_MAX_MAGNITUDE < result < _MAX_MAGNITUDE:
            raise TracktaleError(
                f"step {n} gives an integer of more than {MAX_DIGITS} digits, which the "
                "paper's executor could not print"
            )
        append(result)
    assigned = tuple((k, value) for k, value in enumerate(values) if value is not None)
    return PaperExecution(assigned, tuple(skipped), len(steps) + 2)


def execute_context_as_paper(context: str) -> PaperExecution:
    """Run the procedure of an item's context on its inputs, as the paper's executor would."""
    procedure, x, y = split_context(context)
    return execute_as_paper(procedure, x, y)


def paper_truth(execution: PaperExecution, ieee_result: Number) -> dict[str, Any]:
    """The item truth fields of the paper's executor, beside our IEEE reference.

    Returns:
        ``paper_reference`` (the reported value, stored like ``reference``), ``paper_variable``
        (k of the variable it belongs to), ``paper_returned_assigned``, ``paper_skipped``
        (step numbers) and ``references_differ``: whether the paper's reported answer is not
        the IEEE reference as scoring compares numbers (rounded to three decimals; ``nan`` equal
        to ``nan``), or belongs to another variable than the returned one.
    """
    from tracktale.stimuli.arithmetic.executor import format_value
    from tracktale.stimuli.arithmetic.scoring import values_match

    value = execution.value
    return {
        "paper_reference": format_value(value),
        "paper_variable": execution.variable,
        "paper_returned_assigned": execution.returned_assigned,
        "paper_skipped": list(execution.skipped),
        "references_differ": not execution.returned_assigned
        or not values_match(value, ieee_result),
    }
