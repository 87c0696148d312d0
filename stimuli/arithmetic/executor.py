"""The reference executor: parses a rendered procedure and runs it, never calling ``eval``.

The grammar is exactly what :mod:`.render` writes, line by line::

    function(x, y):
    Let S1 = x
    Let S2 = y
    Step 1: S3 = S1 + S2            (Step n assigns S<n+2>; operands are earlier variables)
    ...
    Final Step: Return S<n+2>

and a context adds ``Procedure:`` above it and ``Inputs:`` / ``x = 5, y = 8`` below. Anything
else is a :class:`ProcedureError` naming the line.

Arithmetic follows Python's numbers, as the paper's executor did (it ran each step with
``eval``), with every IEEE-754 edge case made explicit instead of raising:

- an input written as an integer (``7``) is an exact integer, one with a decimal point
  (``7.0``) a binary64 float; ``+``, ``-`` and ``*`` keep two integers exact, ``/`` is true
  division (correctly rounded) and anything involving a float is binary64 arithmetic;
- division by zero gives ``inf`` or ``-inf`` (sign of dividend times sign of the zero) and
  ``0 / 0`` or ``nan / 0`` gives ``nan``;
- overflow gives ``inf`` (a float beyond binary64's range, an integer beyond it, or an
  integer quotient too large for a float);
- ``nan`` and ``inf`` then propagate by IEEE rules (``inf - inf`` is ``nan``, ``x / inf`` is 0).

Each step where such a case arises is recorded in :attr:`Execution.flags`.
"""

from __future__ import annotations

import math
import operator
import re
import sys
from dataclasses import dataclass, field
from typing import NoReturn, cast

from tracktale.errors import TracktaleError

Number = int | float

HEADER = ("function(x, y):", "Let S1 = x", "Let S2 = y")
_HEADER_TEXT = "\n".join(HEADER) + "\n"
_NUMBER = r"([1-9]\d{0,8})"  # no leading zeros; longer ones are nonsense for a procedure
_STEP = re.compile(rf"Step {_NUMBER}: S{_NUMBER} = S{_NUMBER} ([-+*/]) S{_NUMBER}")
_INPUTS = re.compile(r"x = (-?\d+(?:\.\d+)?), y = (-?\d+(?:\.\d+)?)")
_INT_LITERAL = re.compile(r"-?\d+")
_PARSED_LINES: dict[str, tuple[int, int, str, int]] = {}
"""Step lines already matched against the grammar, with their ``(n, i, op, j)``."""
_MAX_REMEMBERED = 1_000_000
_COUNT = list(range(10_001))
_step_number = operator.itemgetter(0)
_LIMIT = int(sys.float_info.max)
"""The largest integer a binary64 float can hold; beyond it an exact integer overflows."""
_INTEGRAL = 2.0**52
"""From this magnitude on, every binary64 float is a whole number."""

FLAG_NAMES = ("division_by_zero", "overflow", "invalid")
"""Per-step IEEE edge cases. ``division_by_zero``: the divisor is zero (whatever the dividend).
``overflow``: finite operands, infinite result, divisor not zero. ``invalid``: operands not NaN,
result NaN (``inf - inf``, ``0 * inf``, ``inf / inf``, ``0 / 0``)."""


class ProcedureError(TracktaleError):
    """A procedure text that does not follow the grammar."""


@dataclass(frozen=True)
class Execution:
    """What running a procedure gives.

    Attributes:
        values: Every variable's value, ``values[0]`` being S1 (so S<k> is ``values[k - 1]``).
        returned: The index (k of S<k>) of the returned variable.
        flags: For each name in :data:`FLAG_NAMES`, the step numbers where it arose.
    """

    values: tuple[Number, ...]
    returned: int
    flags: dict[str, list[int]] = field(default_factory=dict)

    @property
    def result(self) -> Number:
        """The returned value: the reference answer."""
        return self.values[self.returned - 1]


def parse_literal(text: str) -> Number:
    """An input as written in a procedure's inputs line: ``8`` is an int, ``8.0`` a float.

    Raises:
        ProcedureError: If ``text`` is not a plain decimal literal.
    """
    if not re.fullmatch(r"-?\d+(?:\.\d+)?", text):
        raise ProcedureError(f"input {text!r} is not a decimal number")
    return int(text) if _INT_LITERAL.fullmatch(text) else float(text)


def format_value(value: Number) -> str:
    """A value as stored in an item's truth: ``13``, ``13.0``, ``0.1``, ``inf``, ``nan``.

    Integers print exactly and floats as Python's shortest round-tripping repr (``repr`` does
    both), so :func:`parse_value` restores the same number of the same type.
    """
    return repr(value)


def round3(value: Number) -> Number:
    """``round(value, 3)``, the paper's r(x), without its slow path for large floats.

    A float of magnitude 2**52 or more has no fractional part, so rounding leaves it as it is
    (``round`` would still convert it to decimal digits first, ~16 us for 1e190).
    """
    if type(value) is float and not -_INTEGRAL < value < _INTEGRAL:
        return value  # also inf and nan, which round() returns unchanged
    return round(value, 3)


def parse_value(text: str) -> Number:
    """Inverse of :func:`format_value`.

    Raises:
        ProcedureError: If ``text`` is not a stored value.
    """
    if _INT_LITERAL.fullmatch(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        raise ProcedureError(f"{text!r} is not a stored value") from None


def split_context(context: str) -> tuple[str, Number, Number]:
    """The procedure text and the two inputs of an item's context.

    Raises:
        ProcedureError: If the context is not ``Procedure:``, the procedure, ``Inputs:`` and
            the inputs line.
    """
    head, _, rest = context.partition("\n")
    procedure, marker, inputs = rest.rpartition("\nInputs:\n")
    if head != "Procedure:" or not marker:
        raise ProcedureError("the context is not 'Procedure:', the procedure, 'Inputs:', inputs")
    match = _INPUTS.fullmatch(inputs)
    if not match:
        raise ProcedureError(f"the inputs line {inputs!r} is not 'x = <number>, y = <number>'")
    return procedure, parse_literal(match[1]), parse_literal(match[2])


def parse_procedure(text: str) -> tuple[list[tuple[int, str, int]], int]:
    """The steps of a procedure and the index of the returned variable.

    Step n is returned as ``(i, op, j)``: S<n+2> = S<i> op S<j>.

    Raises:
        ProcedureError: Naming the first line that breaks the grammar.
    """
    steps = _parse(text)
    return [(i, op, j) for _, i, op, j in steps], len(steps) + 2


def _parse(text: str) -> list[tuple[int, int, str, int]]:
    """Every step as ``(n, i, op, j)``, the grammar checked in full.

    Each distinct step line is matched against the grammar once and remembered (procedures
    share most of their lines: there are at most 4 k (k - 1) lines per step number), so a
    long procedure costs a dictionary lookup per line; any line that does not match, and any
    numbering or return line out of place, sends the text to :func:`_diagnose`.
    """
    if not text.startswith(_HEADER_TEXT):
        _diagnose(text)
    lines = text[len(_HEADER_TEXT) :].split("\n")
    step_lines = lines[:-1]
    steps = list(map(_PARSED_LINES.get, step_lines))
    if None in steps:
        steps = [step or _parse_line(line) for step, line in zip(steps, step_lines, strict=True)]
        if None in steps:
            _diagnose(text)
    # No None is left (_diagnose raised): a cast, not a copy, on this path of every reader.
    parsed = cast("list[tuple[int, int, str, int]]", steps)
    n = len(parsed)
    numbers = _COUNT[1 : n + 1] if n < len(_COUNT) else list(range(1, n + 1))
    if n < 1 or list(map(_step_number, parsed)) != numbers or lines[-1] != _return(n):
        _diagnose(text)
    return parsed


def _parse_line(line: str) -> tuple[int, int, str, int] | None:
    match = _STEP.fullmatch(line)
    if not match or int(match[2]) != int(match[1]) + 2:
        return None
    step = (int(match[1]), int(match[3]), match[4], int(match[5]))
    if len(_PARSED_LINES) < _MAX_REMEMBERED:
        _PARSED_LINES[line] = step
    return step


def _return(n_steps: int) -> str:
    return f"Final Step: Return S{n_steps + 2}"


def _diagnose(text: str) -> NoReturn:
    """Raise a :class:`ProcedureError` naming the first line of ``text`` that is wrong."""
    lines = text.split("\n")
    for number, expected in enumerate(HEADER, start=1):
        line = lines[number - 1] if number <= len(lines) else ""
        if line != expected:
            raise ProcedureError(f"procedure line {number} is {_clip(line)}, expected {expected!r}")
    if len(lines) <= len(HEADER) + 1:
        raise ProcedureError("the procedure has no steps")
    for n, line in enumerate(lines[len(HEADER) : -1], start=1):
        match = _STEP.fullmatch(line)
        if not match:
            raise ProcedureError(
                f"procedure line {n + 3} {_clip(line)} is not a step 'Step n: ...'"
            )
        if (match[1], match[2]) != (str(n), str(n + 2)):
            raise ProcedureError(
                f"procedure line {n + 3} should be 'Step {n}: S{n + 2} = ...', "
                f"found Step {match[1]} assigning S{match[2]}"
            )
    expected = f"Final Step: Return S{len(lines) - len(HEADER) + 1}"
    if lines[-1] != expected:
        raise ProcedureError(
            f"the last procedure line is {_clip(lines[-1])}, expected {expected!r}"
        )
    for n, line in enumerate(lines[len(HEADER) : -1], start=1):
        for operand in _STEP.fullmatch(line).group(3, 5):  # type: ignore[union-attr]
            if int(operand) > n + 1:
                raise ProcedureError(f"Step {n} uses S{operand}, which is not defined yet")
    raise ProcedureError("the procedure does not parse")  # pragma: no cover - unreachable


def _clip(line: str, limit: int = 60) -> str:
    """A line quoted for a message, shortened if long."""
    return repr(line) if len(line) <= limit else repr(line[:limit]) + "..."


def execute(procedure: str, x: Number, y: Number) -> Execution:
    """Parse and run a procedure text on inputs ``x`` and ``y``.

    Raises:
        ProcedureError: If the text breaks the grammar or a step uses a variable that is not
            defined yet.
    """
    return run_steps(_parse(procedure), x, y)


def parse_steps(procedure: str) -> list[tuple[int, int, str, int]]:
    """Every step of a procedure text as ``(n, i, op, j)`` (S<n+2> = S<i> op S<j>).

    Raises:
        ProcedureError: Naming the first line that breaks the grammar.
    """
    return _parse(procedure)


def run_steps(steps: list[tuple[int, int, str, int]], x: Number, y: Number) -> Execution:
    """:func:`execute` on steps already parsed by :func:`parse_steps`.

    Raises:
        ProcedureError: If a step uses a variable that is not defined yet.
    """
    values: list[Number] = [math.nan, x, y]  # S<k> is values[k]
    flags: dict[str, list[int]] = {name: [] for name in FLAG_NAMES}
    append = values.append
    exact = type(x) is int or type(y) is int  # only then can a step give an integer
    try:
        for _, i, op, j in steps:
            # An undefined operand (S<k>, k past the last variable) is past the end of values.
            u = values[i]
            v = values[j]
            if op == "+":
                result = u + v
            elif op == "-":
                result = u - v
            elif op == "*":
                result = u * v
            else:
                result = divide(u, v)
            if exact and type(result) is int and (result > _LIMIT or result < -_LIMIT):
                result = math.inf if result > 0 else -math.inf
            if result - result:  # only inf and nan are not zero minus themselves
                _classify(flags, len(values) - 2, u, op, v, result)
            append(result)
    except IndexError:
        n, i, _, j = steps[len(values) - 3]
        raise ProcedureError(
            f"Step {n} uses S{i if i > n + 1 else j}, which is not defined yet"
        ) from None
    return Execution(tuple(values[1:]), len(steps) + 2, flags)


def execute_context(context: str) -> Execution:
    """Run the procedure of an item's context on the inputs it states."""
    procedure, x, y = split_context(context)
    return execute(procedure, x, y)


def divide(u: Number, v: Number) -> Number:
    """True division with IEEE results where Python would raise."""
    try:
        return u / v
    except ZeroDivisionError:
        if u != u or u == 0:
            return math.nan
        return math.copysign(math.inf, math.copysign(1.0, u) * math.copysign(1.0, v))
    except OverflowError:  # an integer quotient beyond binary64's range
        return math.inf if (u > 0) == (v > 0) else -math.inf


def _classify(
    flags: dict[str, list[int]], step: int, u: Number, op: str, v: Number, result: Number
) -> None:
    if op == "/" and v == 0:
        flags["division_by_zero"].append(step)
        if result != result and u == u:
            flags["invalid"].append(step)
    elif result != result:
        if u == u and v == v:
            flags["invalid"].append(step)
    elif not (u - u or v - v):  # both operands finite, the result infinite
        flags["overflow"].append(step)
