"""Rendering a boxes item from its plan: the only place the paradigm's text is produced.

A plan holds the world (the key in each box, the actions folded into the initialization, the
instance's actions), the vocabulary, the instruction's example box and key, and the distractor
sentences. The simulator turns it into a state table per step; the text and the expected answer
are rendered from those tables, never edited afterwards.

Layout (the source paper's Example 1; the test step's answer is what the model generates)::

    Instructions: As an agent, ...
    Step-0: Initialization. Do nothing.
    Question: OPENED(BOX-0)=? ... OBTAINED(KEY-9)=?
    Answer: OPENED(BOX-0)=False, ..., OBTAINED(KEY-9)=False
    Step-1: Open BOX-3 and retrieve KEY-7.
    Question: ...
    Answer: ...
    Step-2: Open BOX-5 and retrieve KEY-1.
    Question: ...
    Answer:

States are queried box by box, then key by key; questions separate them with a space, answers
with a comma and a space (the paper's Example 4). The faked multi-round chat (its Appendix C)
gives each demonstration as a user turn (step and question) and an assistant turn (its answer);
the instructions open the first user turn rather than forming a turn of their own, because many
chat templates refuse two user turns in a row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracktale.stimuli.boxes.language import Vocabulary, instruction_text, negates
from tracktale.stimuli.boxes.world import Action, State, encode, simulate

SYSTEM_MESSAGE = "You are a helpful assistant."
"""The system turn of the paper's chat requests (Appendix C)."""
PROMPT_FORMATS = ("single-turn", "multi-round")
STEP_ZERO = "Step-0: Initialization. Do nothing."


@dataclass(frozen=True)
class Plan:
    """Everything an item's text is rendered from (stored in its ``truth``)."""

    box_keys: tuple[int, ...]
    compressed: tuple[Action, ...]
    actions: tuple[Action, ...]
    words: Vocabulary
    example_box: int
    example_key: int
    distractors: tuple[str, ...] | None

    @property
    def n_boxes(self) -> int:
        """Number of boxes (and keys)."""
        return len(self.box_keys)

    @property
    def n_steps(self) -> int:
        """Number of actions after Step-0; the last one is the instance's test step."""
        return len(self.actions)

    def states(self) -> list[State]:
        """The simulated state after Step-0 (the compressed actions applied) and each action.

        Raises:
            InconsistentWorld: If an action is not allowed.
        """
        start = simulate(self.box_keys, self.compressed)[-1]
        return simulate(self.box_keys, self.actions, start)


@dataclass(frozen=True)
class Rendering:
    """How one item presents a plan."""

    shots: int
    instruction: str
    prompt_format: str
    probe_step: int

    @property
    def n_demonstrations(self) -> int:
        """Demonstrated steps (Step-0 included): the shots, or fewer inside their window."""
        return min(self.shots, self.probe_step)


@dataclass(frozen=True)
class RenderedText:
    """The text fields of an item."""

    context: str
    question: str
    answer: str
    prompt: str
    messages: tuple[dict[str, str], ...]
    queried: list[str]
    expected: list[bool]


def step_line(plan: Plan, step: int) -> str:
    """``Step-3: Open BOX-5 and retrieve KEY-1.`` (with its distractor sentence, if any)."""
    if step == 0:
        return STEP_ZERO
    action = plan.actions[step - 1]
    line = (
        f"Step-{step}: Open {plan.words.box(action.box)} and retrieve {plan.words.key(action.key)}."
    )
    if plan.distractors is not None:
        line += " " + plan.distractors[step - 1]
    return line


def question_line(names: Sequence[str]) -> str:
    """``Question: OPENED(BOX-0)=? OPENED(BOX-1)=? ...``."""
    return "Question: " + " ".join(f"{name}=?" for name in names)


def answer_text(names: Sequence[str], values: Sequence[bool]) -> str:
    """``OPENED(BOX-0)=False, OPENED(BOX-1)=True, ...`` (without the ``Answer:`` label)."""
    return ", ".join(f"{name}={value}" for name, value in zip(names, values, strict=True))


def encoded(state: State, negated: bool) -> list[bool]:
    """The truth values an answer writes for ``state``."""
    return [encode(value, negated) for value in state.values()]


def render(plan: Plan, rendering: Rendering, states: Sequence[State] | None = None) -> RenderedText:
    """Render the prompt of ``rendering.probe_step`` and its expected answer.

    Args:
        plan: The instance.
        rendering: Shots, instruction, prompt format and the probed step.
        states: ``plan.states()``, when the caller has it already.

    Returns:
        The text fields; ``queried`` and ``expected`` are the probed states and their values.
    """
    states = plan.states() if states is None else states
    negated = negates(rendering.instruction)
    names = plan.words.state_names(plan.n_boxes)
    question = question_line(names)
    instructions = "Instructions: " + instruction_text(
        rendering.instruction, plan.words, plan.n_boxes, plan.example_box, plan.example_key
    )
    demonstrations = [
        (step_line(plan, step), "Answer: " + answer_text(names, encoded(states[step], negated)))
        for step in range(rendering.n_demonstrations)
    ]
    pending = [
        step_line(plan, step)
        for step in range(rendering.n_demonstrations, rendering.probe_step + 1)
    ]
    lines = [instructions]
    for step, answer in demonstrations:
        lines += [step, question, answer]
    lines += pending
    context = "\n".join(lines)
    prompt = f"{context}\n{question}\nAnswer:"
    expected = encoded(states[rendering.probe_step], negated)
    if rendering.prompt_format == "single-turn":
        messages: tuple[dict[str, str], ...] = (
            {"role": "system", "content": SYSTEM_MESSAGE},
            {"role": "user", "content": prompt},
        )
    else:
        messages = _multi_round(instructions, demonstrations, pending, question)
    return RenderedText(
        context=context,
        question=question,
        answer=answer_text(names, expected),
        prompt=prompt,
        messages=messages,
        queried=names,
        expected=expected,
    )


def _multi_round(
    instructions: str, demonstrations: list[tuple[str, str]], pending: list[str], question: str
) -> tuple[dict[str, str], ...]:
    turns = [{"role": "system", "content": SYSTEM_MESSAGE}]
    opening = [instructions]
    for step, answer in demonstrations:
        turns.append({"role": "user", "content": "\n".join([*opening, step, question])})
        turns.append({"role": "assistant", "content": answer})
        opening = []
    turns.append({"role": "user", "content": "\n".join([*opening, *pending, question])})
    return tuple(turns)


def plan_to_truth(plan: Plan, states: Sequence[State]) -> dict[str, Any]:
    """The plan and its simulated state tables as plain data for the item's ``truth``."""
    return {
        "n_boxes": plan.n_boxes,
        "box_keys": list(plan.box_keys),
        "compressed": [action.to_dict() for action in plan.compressed],
        "actions": [action.to_dict() for action in plan.actions],
        "words": {
            "box_functor": plan.words.box_functor,
            "key_functor": plan.words.key_functor,
            "box_name": plan.words.box_name,
            "key_name": plan.words.key_name,
        },
        "example": {"box": plan.example_box, "key": plan.example_key},
        "distractors": None if plan.distractors is None else list(plan.distractors),
        "states": [state.to_dict() for state in states],
    }


def plan_from_truth(truth: Mapping[str, Any]) -> Plan:
    """Rebuild the plan stored in an item's ``truth``.

    Raises:
        KeyError, TypeError, ValueError, InconsistentWorld: If the truth is malformed.
    """
    distractors = truth["distractors"]
    return Plan(
        box_keys=tuple(truth["box_keys"]),
        compressed=tuple(Action.from_dict(a) for a in truth["compressed"]),
        actions=tuple(Action.from_dict(a) for a in truth["actions"]),
        words=Vocabulary(**truth["words"]),
        example_box=truth["example"]["box"],
        example_key=truth["example"]["key"],
        distractors=None if distractors is None else tuple(distractors),
    )
