"""The arithmetic study for people: a procedure and its inputs, and a box for the result.

The source paper (Panda et al., "When LLMs Stop Following Steps") tests models only; the whole
human version is ours (README, "Where the papers are silent or we differ"):

- **Items** come from the paradigm's ``human`` protocol: integer inputs 1-10, addition or
  subtraction, look-back 1 or 3, 5, 10 or 15 steps; 4 procedures per cell (12 cells).
- **Trials.** A short "get ready" screen (its limit is ``reading_ms``) names the procedure's
  length; then the procedure and its inputs appear, exactly as the models read them, with an
  answer box (``jsPsychArithmeticProcedure``, limit ``response_ms``). What the person types
  is read by :func:`~tracktale.stimuli.arithmetic.typed.parse_typed_answer` and scored by the
  paradigm's model scorer (:func:`~tracktale.stimuli.arithmetic.typed.score_typed_answer`),
  so ``correct`` is the paper's FAA for people too; the typed text is stored as given.
- **Lists.** List ``L1..L4`` (version v) shows procedure ``(c + v) mod 4`` of cell c (cells in
  dataset x horizon order): each participant sees every cell once (12 trials), and across four
  lists every procedure is seen. Main trials come in a new random order for each participant.
- **Practice.** ``practice_per_format`` 3-step practice procedures first (block 0), with the
  server's verdict and the correct value as feedback.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.experiment.paradigms.single_task import SingleTaskStudy, served, simulated_request
from tracktale.experiment.simulation.run import lognormal_ms
from tracktale.experiment.study.design import LIST_IDS, DesignConfig, PlannedTrial
from tracktale.experiment.study.instructions import session_screens
from tracktale.experiment.study.scoring import ScoredResponse
from tracktale.item import Item
from tracktale.stimuli.arithmetic.executor import Number, parse_value
from tracktale.stimulus_set import StimulusSet

TASK = "explicit"
"""The paradigm's explicit task: the returned value, typed."""
PLUGIN = "jsPsychArithmeticProcedure"
BASE_LOGIT = 3.3
"""Simulated people: log-odds of a correct result before any step (a typing slip aside)."""
STEP_SLOPE = 0.13
"""... what each step takes off (5 steps: 93%, 10: 88%, 15: 81% for an average person)."""
LOOKBACK_SHIFT = 0.5
"""... and what reaching three variables back (look-back 3) takes off."""
INATTENTIVE_ACCURACY = 0.03
UNPARSEABLE_RATE = 0.02
"""Share of a simulated person's wrong answers typed as something that is not a number."""


def cells(stimulus_set: StimulusSet) -> dict[tuple[str, int], list[Item]]:
    """The main items by (dataset, horizon), each cell's items in their example order."""
    found: dict[tuple[str, int], list[Item]] = {}
    for item in stimulus_set.select(role="main"):
        key = (str(item.condition["dataset"]), int(item.condition["horizon"]))
        found.setdefault(key, []).append(item)
    for items in found.values():
        items.sort(key=lambda item: int(item.meta["example"]))
    return dict(sorted(found.items()))


def list_items(stimulus_set: StimulusSet, list_id: str) -> list[Item]:
    """The main items of a list: procedure ``(c + v) mod n`` of cell c for list version v.

    Raises:
        TracktaleError: For an unknown list, or cells of unequal size.
    """
    if list_id not in LIST_IDS:
        raise TracktaleError(f"unknown list {list_id!r} (choose from {', '.join(LIST_IDS)})")
    by_cell = cells(stimulus_set)
    sizes = {len(items) for items in by_cell.values()}
    if len(sizes) != 1:
        raise TracktaleError(
            f"every (dataset, horizon) cell needs the same number of procedures, got {sizes}"
        )
    version = LIST_IDS.index(list_id)
    return [items[(c + version) % len(items)] for c, items in enumerate(by_cell.values())]


def ready_text(item: Item) -> str:
    """The get-ready screen before a procedure."""
    steps = int(item.condition["horizon"])
    kind = "practice procedure" if item.role == "practice" else "procedure"
    return f"The next {kind} has {steps} steps. Have your pen and paper ready."


def procedure_text(item: Item) -> tuple[str, str]:
    """The procedure lines and the inputs line of an item's context, as the models read them.

    Raises:
        TracktaleError: If the context is not ``Procedure:`` ... ``Inputs:`` ``x = .., y = ..``.
    """
    lines = (item.context or "").split("\n")
    if len(lines) < 4 or lines[0] != "Procedure:" or lines[-2] != "Inputs:":
        raise TracktaleError(f"item {item.item_id} is not an arithmetic procedure")
    return "\n".join(lines[1:-2]), lines[-1]


class ArithmeticStudy(SingleTaskStudy):
    """Arithmetic procedures for people (see the module docstring)."""

    paradigm = "arithmetic"
    task = TASK
    order_stream = "|arithmetic"
    missing_practice_hint = " (use the arithmetic human protocol)"
    study_id = "arithmetic-procedures"
    title = "Following step-by-step calculations"
    timing = {"reading_ms": 30_000, "response_ms": 240_000, "feedback_ms": 15_000}
    duration_minutes = 25
    scripts = ("plugins/arithmetic-procedure.js",)
    trial_plugins = {TASK: PLUGIN}
    trial_noun = "Calculation"
    asks_probe_values = True
    reading_prompt = "Press SPACE or click Continue when you are ready for the calculation."
    documents = {
        "consent": "arithmetic_consent",
        "information": "arithmetic_information",
        "debrief": "arithmetic_debrief",
    }

    def item_problem(self, item: Item) -> str | None:
        """An item without its reference (one whose procedure does not parse raises)."""
        if not isinstance(item.truth, Mapping) or "reference" not in item.truth:
            return "has no arithmetic reference"
        procedure_text(item)
        return None

    def main_items(
        self, stimulus_set: StimulusSet, list_id: str, design: DesignConfig
    ) -> list[Item]:
        """The list's main items (:func:`list_items`)."""
        return list_items(stimulus_set, list_id)

    def served_content(self, item: Item, planned: PlannedTrial) -> dict[str, Any]:
        """The get-ready text, and the procedure with its inputs (never the result)."""
        procedure, inputs = procedure_text(item)
        parameters = {"procedure": procedure, "inputs": inputs}
        return served(item, planned, ready_text(item), parameters)

    def probe_variables(self, item: Item, count: int) -> list[str]:
        """``count`` variables assigned at evenly spaced steps before the last (ours).

        Step ``round(i * H / (count + 1))`` for i = 1..count of an H-step procedure, each
        step once; the returned variable is never asked for (that is the answer).
        """
        procedure, _ = procedure_text(item)
        assigned = re.findall(r"^Step \d+: (\w+) =", procedure, re.MULTILINE)
        steps = len(assigned)
        chosen = sorted({round(i * steps / (count + 1)) for i in range(1, count + 1)})
        return [assigned[step - 1] for step in chosen if 1 <= step < steps]

    def score_answer(self, item: Item, response: str) -> ScoredResponse:
        """FAA of the typed value, by the paradigm's model scorer."""
        from tracktale.stimuli.arithmetic.typed import score_typed_answer
        from tracktale.stimuli.registry import get_paradigm

        correct = bool(score_typed_answer(get_paradigm(self.paradigm), item, response)["correct"])
        return ScoredResponse(response, correct, correct)

    def instructions(self, reading_ms: int, response_ms: int, source: str) -> dict[str, Any]:
        """Plain-language instructions (see :func:`instruction_texts`)."""
        return instruction_texts(reading_ms, response_ms)

    def behave(
        self,
        rng: random.Random,
        person: Any,
        item: Item,
        shown: Mapping[str, Any],
        timing: Mapping[str, int],
    ) -> dict[str, Any]:
        """A simulated person: right less often, and slower, the longer the procedure."""
        steps = int(item.condition["horizon"])
        ready = lognormal_ms(rng, 2500 * person.speed, 0.35)
        response_ms = lognormal_ms(rng, (6000 + 7000 * steps) * person.speed, 0.35)
        correct = rng.random() < p_correct(person, item)
        # The typed answer is drawn only when it is given (the stream's order matters).
        timed_out = response_ms >= timing["response_ms"]
        response = None if timed_out else typed_answer(rng, item, correct)
        return simulated_request(rng, person, shown, timing, (response, ready, response_ms))


def p_correct(person: Any, item: Item) -> float:
    """A simulated person's chance of the right result (falls with steps and look-back)."""
    if not person.attentive:
        return INATTENTIVE_ACCURACY
    steps = int(item.condition["horizon"])
    logit = BASE_LOGIT - STEP_SLOPE * steps + person.ability
    if int(item.condition["lookback"]) > 1:
        logit -= LOOKBACK_SHIFT
    return 1 / (1 + math.exp(-logit))


def typed_answer(rng: random.Random, item: Item, correct: bool) -> str:
    """What a simulated person types: the result, or a near miss, now and then not a number.

    The result sometimes comes with a thousands separator; a near miss is a slip by a small
    amount or a sign error.
    """
    value: Number = parse_value(str(item.truth["paper_reference"]))
    if not correct:
        if rng.random() < UNPARSEABLE_RATE:
            return rng.choice(("?", "no idea", "S7"))
        slip = rng.choice((-10, -2, -1, 1, 2, 10))
        value = -value if value and rng.random() < 0.15 else value + slip
    if isinstance(value, int) and abs(value) >= 1000 and rng.random() < 0.5:
        return f"{value:,}"
    return str(value)


def instruction_texts(reading_ms: int, response_ms: int) -> dict[str, Any]:
    """Every instruction screen of the arithmetic study, in words for people."""
    ready, response = _seconds(reading_ms), _minutes(response_ms)
    return {
        "welcome": [
            "In this study you will work through short step-by-step calculations, one at a "
            "time, and type the value each one ends with.",
            "Each calculation starts from two numbers, x and y (S1 = x and S2 = y). Every step "
            "makes a new value from two earlier ones: 'Step 1: S3 = S1 + S2' means: add S1 "
            "and S2 and call the result S3. Later steps may use any earlier value, not only "
            "the last one, so keep track of them all. The last line tells you which value is "
            "the answer ('Return S7').",
            "Please use pen and paper for your working if you like, but no calculator, no "
            "phone, no other people and no AI tools (such as ChatGPT): we want to know how "
            "people do this by hand. Keep this window open and in the foreground.",
        ],
        TASK: [
            f"Before each calculation a short screen tells you how many steps it has "
            f"(at most {ready}; press SPACE or click Continue when you are ready).",
            f"Then the calculation appears with a box for your answer. You have up to "
            f"{response} for each. Type the final value as a number (for example 42 or -7) "
            "and press ENTER or click Submit.",
            "You will first do two short practice calculations and see whether you were right.",
        ],
        "main_start": [
            "The practice is over. The real calculations start now; there is no feedback from "
            "here on. Take them one at a time and work carefully.",
        ],
        **session_screens(),
    }


def _seconds(milliseconds: int) -> str:
    value = f"{milliseconds / 1000:g}"
    return f"{value} second" if value == "1" else f"{value} seconds"


def _minutes(milliseconds: int) -> str:
    if milliseconds % 60_000:
        return _seconds(milliseconds)
    value = milliseconds // 60_000
    return f"{value} minute" if value == 1 else f"{value} minutes"


STUDY = ArithmeticStudy()
