"""Boxes items: built from a plan and its simulation, and verified by doing both again.

:func:`build_item` is the only place a boxes item is assembled. :func:`verify_item` rebuilds the
plan from the item's ``truth``, re-runs the simulator, compares every stored state table and the
expected answer with the simulation, checks the vocabulary and distractors against their rules,
and re-renders the item to prove that its text is exactly what the plan says.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.item import Item, canonical_json
from tracktale.schema.payloads import BoxesTruth, truth_problems
from tracktale.stimuli.boxes.distractors import SOURCES, bank, mentions_the_task
from tracktale.stimuli.boxes.language import (
    INSTRUCTIONS,
    LANGUAGES,
    NL_WORDS,
    check_synthetic_words,
    negates,
)
from tracktale.stimuli.boxes.render import (
    PROMPT_FORMATS,
    Plan,
    Rendering,
    plan_from_truth,
    plan_to_truth,
    render,
)
from tracktale.stimuli.boxes.world import InconsistentWorld

PARADIGM_NAME = "boxes"
INITIALIZATIONS = ("normal", "compressed")
PROBES = ("final", "every")
ROLES = ("main", "practice")
"""Roles a boxes item may have (``practice``: the human study's practice trials)."""
_CHARS_PER_TOKEN = 1.2
"""A pessimistic characters-per-token ratio (random letter strings split into short pieces)."""


@dataclass(frozen=True)
class Settings:
    """The design factors of one item (its ``condition``, without the derived fields)."""

    shots: int
    language: str
    instruction: str
    distractors: str
    prompt_format: str
    initialization: str
    compressed_steps: int
    probe: str
    probe_step: int
    world: str
    instance: str

    def rendering(self) -> Rendering:
        """How the item presents its plan."""
        return Rendering(self.shots, self.instruction, self.prompt_format, self.probe_step)


def instance_id(plan: Plan, settings: Settings) -> str:
    """The id shared by every probed step of one instance: a hash of its plan and cell.

    Args:
        plan: The instance.
        settings: Its design factors (the probed step and the id itself are left out).
    """
    cell = {
        name: value
        for name, value in settings.__dict__.items()
        if name not in ("probe_step", "instance")
    }
    content = canonical_json({"cell": cell, "plan": plan_to_truth(plan, [])})
    return "i" + hashlib.sha256(content.encode("utf-8")).hexdigest()[:12]


def build_item(
    plan: Plan, settings: Settings, distractor_source: str | None, role: str = "main"
) -> Item:
    """Simulate ``plan``, render the probed step and assemble the item.

    Args:
        plan: The instance (world, actions, vocabulary, example, distractors).
        settings: The item's design factors.
        distractor_source: Where the distractor sentences come from (``None`` without them).
        role: ``main``, or ``practice`` for the human study's practice trials.

    Returns:
        The item with its content id.

    Raises:
        InconsistentWorld: If the plan's actions are not allowed.
    """
    states = plan.states()
    text = render(plan, settings.rendering(), states)
    synthetic = {
        slot: getattr(plan.words, slot)
        for slot, word in NL_WORDS.items()
        if getattr(plan.words, slot) != word
    }
    truth = {
        **plan_to_truth(plan, states),
        "instruction": settings.instruction,
        "negated": negates(settings.instruction),
        "synthetic": synthetic,
        "distractor_source": distractor_source,
        "probe_step": settings.probe_step,
        "queried": text.queried,
        "expected": text.expected,
    }
    return Item.create(
        paradigm=PARADIGM_NAME,
        role=role,
        condition={
            **settings.__dict__,
            "boxes": plan.n_boxes,
            "n_steps": plan.n_steps,
            "n_demonstrations": settings.rendering().n_demonstrations,
            "in_demonstrations": settings.probe_step < settings.shots,
            "final": settings.probe_step == plan.n_steps,
        },
        context=text.context,
        question=text.question,
        answer=text.answer,
        prompt=text.prompt,
        messages=text.messages,
        truth=truth,
        meta={
            "n_states": len(text.queried),
            "prompt_chars": len(text.prompt),
            "max_new_tokens": math.ceil(len(text.answer) / _CHARS_PER_TOKEN) + 16,
        },
    )


def verify_item(item: Item) -> list[str]:
    """Every way ``item`` disagrees with its simulation, its rules or its own rendering.

    Returns:
        Problems as sentences; empty when the item is consistent.
    """
    malformed = truth_problems(item.truth, BoxesTruth)
    if malformed:
        return malformed
    try:
        return _verify(item)
    except TracktaleError as error:
        return [str(error)]
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        return [f"the item's truth or condition is malformed ({type(error).__name__}: {error})"]


def _settings(item: Item) -> Settings:
    condition = item.condition
    # Each factor as the item stores it (str, int or float); the allowed values are
    # checked below.
    values: dict[str, Any] = {name: condition[name] for name in Settings.__dataclass_fields__}
    settings = Settings(**values)
    checks = {
        "language": LANGUAGES,
        "instruction": INSTRUCTIONS,
        "distractors": ("off", "on"),
        "prompt_format": PROMPT_FORMATS,
        "initialization": INITIALIZATIONS,
        "probe": PROBES,
    }
    for name, allowed in checks.items():
        if getattr(settings, name) not in allowed:
            raise TracktaleError(f"condition {name}={getattr(settings, name)!r} is not allowed")
    return settings


def _verify(item: Item) -> list[str]:
    settings = _settings(item)
    truth = item.truth
    plan = plan_from_truth(truth)
    problems = []
    try:
        states = plan.states()
    except InconsistentWorld as error:
        return [f"the actions are not possible in the box world: {error}"]
    stored = truth["states"]
    if len(stored) != len(states):
        problems.append(f"truth has {len(stored)} state tables, the simulation {len(states)}")
    for step, (table, state) in enumerate(zip(stored, states, strict=False)):
        if table != state.to_dict():
            problems.append(f"the state table of Step-{step} differs from the simulation")
    if not 1 <= settings.probe_step <= plan.n_steps:
        problems.append(
            f"probe step {settings.probe_step} is not one of Step-1..Step-{plan.n_steps}"
        )
        return problems
    if settings.shots < 1 or plan.n_steps < settings.shots:
        problems.append(f"{plan.n_steps} steps leave no test step after {settings.shots} shot(s)")
    if settings.compressed_steps != len(plan.compressed) or (
        settings.initialization == "compressed"
    ) != bool(plan.compressed):
        problems.append("the compressed initialization disagrees with the condition")
    problems += _rule_problems(item, plan, settings)
    if settings.instance != instance_id(plan, settings):
        problems.append(f"instance id {settings.instance!r} does not match the instance's plan")
    if not settings.world.startswith(f"w{settings.shots}."):
        problems.append(f"world {settings.world!r} is not a world of {settings.shots} shot(s)")
    if not problems:
        expected = render(plan, settings.rendering(), states).expected
        if truth["expected"] != expected:
            problems.append("the expected answer is not the simulated state of the probed step")
    if not problems:
        problems += _rendering_differences(item, plan, settings)
    return problems


def _rule_problems(item: Item, plan: Plan, settings: Settings) -> list[str]:
    problems = []
    synthetic = {slot: getattr(plan.words, slot) for slot in NL_WORDS}
    uses = {slot for slot, word in NL_WORDS.items() if synthetic[slot] != word}
    wanted = {
        "nl": set(),
        "synthetic": set(NL_WORDS),
        "functor-only": {"box_functor", "key_functor"},
        "argument-only": {"box_name", "key_name"},
    }[settings.language]
    if uses != wanted:
        problems.append(f"the vocabulary does not match language {settings.language!r}")
    elif uses:
        try:
            check_synthetic_words({slot: synthetic[slot] for slot in uses})
        except TracktaleError as error:
            problems.append(str(error))
    source = item.truth["distractor_source"]
    if (settings.distractors == "on") != (plan.distractors is not None) or (
        (source is None) != (plan.distractors is None)
    ):
        problems.append("the distractor sentences disagree with the condition")
    elif plan.distractors is not None:
        if source not in SOURCES or len(plan.distractors) != plan.n_steps:
            problems.append("the distractors need a known source and one sentence per step")
        elif any(mentions_the_task(sentence) for sentence in plan.distractors):
            problems.append("a distractor sentence mentions the task")
        elif source == "bank" and not set(plan.distractors) <= set(bank()):
            problems.append("a distractor sentence is not from the sentence bank")
    n_boxes = plan.n_boxes
    if not (0 <= plan.example_box < n_boxes and 0 <= plan.example_key < n_boxes):
        problems.append("the instruction's example box or key does not exist")
    if item.condition.get("boxes") != n_boxes:
        problems.append(f"condition boxes={item.condition.get('boxes')!r}, the world has {n_boxes}")
    return problems


def _rendering_differences(item: Item, plan: Plan, settings: Settings) -> list[str]:
    role = item.role if item.role in ROLES else "main"
    rebuilt = build_item(plan, settings, item.truth["distractor_source"], role)
    ours, theirs = rebuilt.to_dict(), item.to_dict()
    return [
        f"field {name!r} differs from what the plan renders (edited after generation?)"
        for name in ours
        if name != "item_id" and ours[name] != theirs[name]
    ]
