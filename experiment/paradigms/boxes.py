"""The boxes study for people: the steps as text, then a True/False grid of every state.

The source paper (Yang & Ettinger 2023) tests models only; everything about the human version
is ours (README, "Where the papers are silent or we differ"):

- **Trials.** A trial shows the item's own text (the instructions with their meaning of the
  functors, Step-0 and the demonstrated steps with their answers, the undemonstrated steps and
  the test step), without its ``Question:`` lines: they only list the queried states, which
  the response grid lists again. The grid (``jsPsychBoxesGrid``) has one row per queried
  state, in the item's order, each answered ``True`` or ``False``; the page sends one letter
  per state (``T``/``F``), and the server writes them out in exactly the model's answer format
  (``OPENED(BOX-0)=True, ...``) and scores that text with the paradigm's ``score_response``:
  ``correct`` is Step-EM, and State-EM is recomputed from the stored text by the analysis.
- **Lists.** Every main instance (world) exists in each condition (language x instruction);
  list ``L1..L4`` shows world k of each shot count in condition ``(k + list) mod R`` (the
  conditions' order shuffled once by the design seed), so each participant sees every world
  once, every condition equally often, and across four lists every world in every condition.
  Main trials come in a new random order for each participant.
- **Practice.** ``practice_per_format`` practice trials first (the set's practice items, in
  order), with feedback: how many states were right and the correct answer.
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
from tracktale.experiment.study.instructions import _seconds as seconds_text
from tracktale.experiment.study.instructions import instructions
from tracktale.experiment.study.scoring import ScoredResponse
from tracktale.item import Item
from tracktale.stimulus_set import StimulusSet

TASK = "explicit"
"""The paradigm's explicit task: every state typed out (as a grid), scored like a model's."""
GRID_PLUGIN = "jsPsychBoxesGrid"
STATE_ERROR_LOGIT = -4.2
"""Simulated people: log-odds of getting one state wrong after one step, normal NL items."""
STEP_SLOPE = 0.35
"""... and how much each further step adds (accuracy falls with the number of steps)."""
CONDITION_SHIFT = {"flipped-truth": 0.6, "counterintuitive-language": 0.6, "synthetic": 0.3}


def answer_from_grid(item: Item, code: str) -> str:
    """The model-format answer for a grid response (one ``T``/``F`` per queried state).

    Raises:
        TracktaleError: If ``code`` is not one letter per queried state.
    """
    queried = list(item.truth["queried"])
    if not re.fullmatch(f"[TF]{{{len(queried)}}}", code):
        raise TracktaleError(
            f"a boxes answer is one T or F per queried state ({len(queried)}), got {code!r}"
        )
    return ", ".join(
        f"{name}={'True' if letter == 'T' else 'False'}"
        for name, letter in zip(queried, code, strict=True)
    )


def grid_from_answer(item: Item, values: list[bool]) -> str:
    """The grid response that gives ``values`` (the inverse of :func:`answer_from_grid`)."""
    if len(values) != len(item.truth["queried"]):
        raise TracktaleError(f"item {item.item_id} queries {len(item.truth['queried'])} states")
    return "".join("T" if value else "F" for value in values)


def shown_text(item: Item) -> str:
    """The item's text as people read it: its context without the ``Question:`` lines."""
    return "\n".join(line for line in item.context.split("\n") if not line.startswith("Question:"))


def renderings(stimulus_set: StimulusSet, seed: int) -> list[tuple[str, str]]:
    """The conditions (language, instruction) the lists rotate through, in design order."""
    found: list[tuple[str, str]] = []
    for item in stimulus_set.select(role="main"):
        key = (str(item.condition["language"]), str(item.condition["instruction"]))
        if key not in found:
            found.append(key)
    random.Random(f"design|{seed}|boxes-conditions").shuffle(found)
    return found


def list_items(stimulus_set: StimulusSet, list_id: str, seed: int) -> list[Item]:
    """The main items of a list: world k of each shot count in condition (k + list) mod R.

    Raises:
        TracktaleError: For an unknown list or a world missing a condition.
    """
    if list_id not in LIST_IDS:
        raise TracktaleError(f"unknown list {list_id!r} (choose from {', '.join(LIST_IDS)})")
    conditions = renderings(stimulus_set, seed)
    worlds: dict[tuple[Any, ...], dict[tuple[str, str], Item]] = {}
    for item in stimulus_set.select(role="main"):
        condition = item.condition
        world = (condition["shots"], condition["world"], condition["probe_step"])
        key = (str(condition["language"]), str(condition["instruction"]))
        worlds.setdefault(world, {})[key] = item
    chosen = []
    version = LIST_IDS.index(list_id)
    by_shots: dict[Any, int] = {}
    for world in sorted(worlds, key=lambda w: (int(w[0]), str(w[1]), int(w[2]))):
        k = by_shots.get(world[0], 0)
        by_shots[world[0]] = k + 1
        wanted = conditions[(k + version) % len(conditions)]
        if wanted not in worlds[world]:
            raise TracktaleError(f"world {world[1]} has no item in condition {'+'.join(wanted)}")
        chosen.append(worlds[world][wanted])
    return chosen


class BoxesStudy(SingleTaskStudy):
    """Box/key state tracking for people (see the module docstring)."""

    paradigm = "boxes"
    task = TASK
    study_id = "boxes-state-tracking"
    title = "Keeping track of boxes and keys"
    timing = {"reading_ms": 150_000, "response_ms": 90_000, "feedback_ms": 15_000}
    duration_minutes = 30
    trial_noun = "Puzzle"
    reading_prompt = "Press SPACE or click Continue when you have read the puzzle."
    scripts = ("plugins/boxes-grid.js",)
    trial_plugins = {TASK: GRID_PLUGIN}
    documents = {
        "consent": "boxes_consent",
        "information": "boxes_information",
        "debrief": "boxes_debrief",
    }

    def item_problem(self, item: Item) -> str | None:
        """An item without boxes ground truth, or probing a step before the last."""
        if not isinstance(item.truth, Mapping) or "queried" not in item.truth:
            return "has no boxes ground truth"
        if item.condition.get("probe_step") != item.condition.get("n_steps"):
            return (
                "probes an intermediate step; the human study asks after the last step only "
                "(--probe final)"
            )
        return None

    def main_items(
        self, stimulus_set: StimulusSet, list_id: str, design: DesignConfig
    ) -> list[Item]:
        """The list's main items (:func:`list_items`)."""
        return list_items(stimulus_set, list_id, design.seed)

    def served_content(self, item: Item, planned: PlannedTrial) -> dict[str, Any]:
        """The steps to read, and the grid's parameters (the queried states, in order)."""
        last = item.condition["probe_step"]
        parameters = {
            "states": list(item.truth["queried"]),
            "prompt": f"After Step-{last}: set every statement to True or False, "
            "exactly as the instructions define them.",
        }
        return served(item, planned, shown_text(item), parameters)

    def score_answer(self, item: Item, response: str) -> ScoredResponse:
        """Write the grid out in the model's answer format and score it (Step-EM)."""
        from tracktale.stimuli.registry import get_paradigm

        text = answer_from_grid(item, response)
        correct = get_paradigm(self.paradigm).score_response(item, text).correct
        return ScoredResponse(text, correct, correct)

    def practice_feedback(
        self, item: Item, planned: PlannedTrial, correct: bool, timed_out: bool
    ) -> dict[str, Any]:
        """The verdict, and the correct state of every statement."""
        return {
            "correct": correct,
            "timed_out": timed_out,
            "answer": item.answer,
            "detail": "The statements after the last step were: " + item.answer + ".",
        }

    def instructions(self, reading_ms: int, response_ms: int, source: str) -> dict[str, Any]:
        """Plain-language instructions for the box/key task (the common screens as narrative's)."""
        reading, response = seconds_text(reading_ms), seconds_text(response_ms)
        common = instructions(reading_ms, response_ms, source=source)
        del common["implicit"]
        return {
            **common,
            "welcome": [
                "In this study you will follow what happens to boxes and keys, one short "
                "puzzle at a time, and then say which statements about them are true.",
                "Each puzzle starts with instructions that define its statements: for example "
                "OPENED(BOX-3)=True may mean that BOX-3 has been opened. Read the definitions "
                "carefully in every puzzle: in some puzzles the names are made-up strings of "
                "letters, and in some the meaning of True and False is switched.",
                "Then come the steps (Step-1, Step-2, ...), each opening a box and taking "
                "the key inside. The first steps come with their answer, as examples; the "
                f"later ones do not. You can read for at most {reading}; press the SPACE bar "
                "or click Continue when you are ready.",
                "Please work from memory and the text alone: no notes, no other people, no "
                "AI tools. Keep this window open and in the foreground until the end.",
            ],
            TASK: [
                "After the steps, a list of statements appears, one for each box (opened?) "
                "and each key (obtained?). Set every statement to True or False as it holds "
                "after the last step, using the definitions of that puzzle.",
                f"You have {response} to answer. Click Submit when every statement is set.",
            ],
            "main_start": [
                "The practice is over. The real puzzles start now; there is no feedback from "
                "here on.",
            ],
        }

    def behave(
        self,
        rng: random.Random,
        person: Any,
        item: Item,
        shown: Mapping[str, Any],
        timing: Mapping[str, int],
    ) -> dict[str, Any]:
        """A simulated person: each state wrong with a chance that grows with the steps."""
        n_steps = int(item.condition["n_steps"])
        expected = list(item.truth["expected"])
        reading = lognormal_ms(rng, (len(shown["story"].split()) * 120 + 4000) * person.speed, 0.3)
        response_ms = lognormal_ms(rng, (4000 + 1500 * len(expected)) * person.speed, 0.3)
        error = p_state_error(person, item, n_steps)
        values = [value != (rng.random() < error) for value in expected]
        grid = grid_from_answer(item, values)
        return simulated_request(rng, person, shown, timing, (grid, reading, response_ms))


def p_state_error(person: Any, item: Item, n_steps: int) -> float:
    """A simulated person's chance of getting one state wrong (0.5: inattentive guessing)."""
    if not person.attentive:
        return 0.5
    logit = STATE_ERROR_LOGIT + STEP_SLOPE * (n_steps - 1) - person.ability
    logit += CONDITION_SHIFT.get(str(item.condition["instruction"]), 0.0)
    logit += CONDITION_SHIFT.get(str(item.condition["language"]), 0.0)
    return 1 / (1 + math.exp(-logit))


STUDY = BoxesStudy()
