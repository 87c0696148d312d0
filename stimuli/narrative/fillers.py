"""Filler trials: short stories of another structure with a question about one detail.

Fillers keep participants from searching every story for object locations. Like main items they
are rendered from explicit facts, and :func:`verify_filler` re-renders them and checks that the
answer is the asked fact and the distractor appears nowhere in the story.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tracktale.item import ChoicePair, Item
from tracktale.schema.payloads import NarrativeFiller, truth_problems
from tracktale.stimuli import lexicons
from tracktale.stimuli.lexicons import Character

# frame -> (story template, {asked fact: question}); facts ending in a digit share a slot pool.
# Ten frames, one per filler of the human protocol: each a different kind of scene with its own
# sentence structure (the paper's "10 filler trials with structurally distinct narratives").
FILLER_FRAMES: dict[str, tuple[str, dict[str, str]]] = {
    "errand": (
        "{name} walked to the {shop} on a {weather} morning. {Pronoun} bought a {purchase0} and "
        "a {purchase1}. On the way home, {pronoun} met {possessive} {relative}, who was wearing "
        "a {colour} coat. They chatted for a few minutes before {pronoun} went inside.",
        {
            "shop": "Where did {name} walk to?",
            "purchase0": "What did {name} buy first?",
            "colour": "What colour was the coat?",
        },
    ),
    "garden": (
        "{name} spent the afternoon in the garden. {Pronoun} planted {plant0} seeds along the "
        "fence and watered the {plant1} bed. Later, a {animal} wandered in and sat under the "
        "{tree} tree. {Pronoun} watched it for a while.",
        {
            "animal": "Which animal wandered into the garden?",
            "tree": "Under which tree did the animal sit?",
            "plant0": "What did {name} plant along the fence?",
        },
    ),
    "kitchen": (
        "{name} decided to bake a {cake} cake for {possessive} {relative}. There was no "
        "{ingredient} left, so {pronoun} borrowed some from the flat next door. The cake was "
        "ready in the late afternoon, and the whole kitchen smelled of it.",
        {
            "cake": "What kind of cake did {name} bake?",
            "ingredient": "What did {name} borrow?",
            "relative": "Who was the cake for?",
        },
    ),
    "train": (
        "On {day}, {name} took the early train to the coast. The carriage was almost empty, so "
        "{pronoun} read a book about {topic} all the way. When the train stopped, {pronoun} "
        "could already hear the {sound}.",
        {
            "day": "On which day did {name} take the train?",
            "topic": "What was the book about?",
            "sound": "What could {name} hear when the train stopped?",
        },
    ),
    "library": (
        "The library was quiet when {name} arrived. {Pronoun} returned a novel and asked the "
        "librarian for a guide to {city}. While waiting, {pronoun} noticed a poster for a "
        "{instrument} concert and wrote down the date.",
        {
            "city": "Which city was the guide about?",
            "instrument": "What kind of concert was on the poster?",
        },
    ),
    "party": (
        "{name} organised a surprise party for {possessive} {relative}. Everyone hid behind the "
        "sofa until the door opened. The room was full of {colour} balloons, and the first song "
        "was played on a {instrument}.",
        {
            "colour": "What colour were the balloons?",
            "relative": "Who was the party for?",
            "instrument": "What was the first song played on?",
        },
    ),
    "painting": (
        "On a {weather} afternoon, {name} stayed at home and painted. The picture showed a "
        "{animal} in a field of {flower}s. When it was dry, {pronoun} hung it in the {room}.",
        {
            "animal": "Which animal was in the picture?",
            "room": "Where did {name} hang the picture?",
            "flower": "Which flowers were in the picture?",
        },
    ),
    "lake": (
        "{name} and {possessive} {relative} cycled to the lake. They rented a small boat and "
        "rowed out to the island, where a {bird} was resting on a rock. On the way back, the "
        "wind grew {wind}, and they were glad to reach the shore.",
        {
            "bird": "Which bird was resting on the rock?",
            "relative": "Who cycled to the lake with {name}?",
        },
    ),
    "phone": (
        "In the evening, {name}'s phone rang. It was an old friend who had just moved to "
        "{city} to work as a {job}. They talked for an hour and agreed to meet in {month}.",
        {
            "city": "Where had the friend moved to?",
            "job": "What was the friend's new job?",
            "month": "When did they agree to meet?",
        },
    ),
    "cinema": (
        "After work, {name} went to the cinema to see a film about a {film}. The hall was "
        "nearly full, so {pronoun} sat in the front row with a bag of {snack}. Afterwards "
        "{pronoun} walked home through the park.",
        {
            "film": "What was the film about?",
            "snack": "What did {name} eat during the film?",
        },
    ),
}


@functools.cache
def slot_words() -> dict[str, tuple[str, ...]]:
    """Slot name -> the words a filler fact of that slot can take."""
    pools: dict[str, list[str]] = {}
    for slot, word in lexicons.read_rows("filler_slots.tsv"):
        pools.setdefault(slot, []).append(word)
    return {slot: tuple(words) for slot, words in pools.items()}


def _slot(fact: str) -> str:
    return fact.rstrip("0123456789")


def sample_filler(
    rng: random.Random, index: int, characters: Sequence[Character] | None = None
) -> dict[str, Any]:
    """Draw filler number ``index``: frame, character, facts, the asked fact and a distractor.

    Frames rotate with ``index`` (ten fillers use ten different frames); the asked fact rotates
    with the index too, so a set of fillers asks about different kinds of detail.

    Args:
        rng: The fillers' random stream.
        index: The filler's number.
        characters: The protagonists to draw from (default: the default pool).
    """
    frames = sorted(FILLER_FRAMES)
    frame = frames[index % len(frames)]
    template, questions = FILLER_FRAMES[frame]
    facts: dict[str, str] = {}
    for fact in sorted(set(re.findall(r"\{(\w+)\}", template)) - _CHARACTER_FIELDS):
        pool = [w for w in slot_words()[_slot(fact)] if w not in facts.values()]
        facts[fact] = rng.choice(pool)
    asked = sorted(questions)[(index + index // len(frames)) % len(questions)]
    distractor = rng.choice([w for w in slot_words()[_slot(asked)] if w not in facts.values()])
    character = rng.choice(tuple(characters or lexicons.characters()))
    return {
        "frame": frame,
        "character": {"name": character.name, "pronoun": character.pronoun},
        "facts": facts,
        "asked": asked,
        "distractor": distractor,
    }


_CHARACTER_FIELDS = {"name", "Pronoun", "pronoun", "possessive"}


def render_filler(plan: Mapping[str, Any]) -> Item:
    """Render a filler item from its plan."""
    template, questions = FILLER_FRAMES[plan["frame"]]
    character = Character(plan["character"]["name"], plan["character"]["pronoun"])
    people = {
        "name": character.name,
        "Pronoun": character.subject,
        "pronoun": character.pronoun,
        "possessive": character.possessive,
    }
    story = template.format(**people, **plan["facts"])
    question = questions[plan["asked"]].format(**people)
    answer = plan["facts"][plan["asked"]]
    return Item.create(
        paradigm="narrative",
        role="filler",
        condition={
            "cell": f"filler.{plan['frame']}",
            "template": "filler",
            "asked": _slot(plan["asked"]),
        },
        context=story,
        question=question,
        answer=answer,
        choice=ChoicePair(
            prefix=f"{story}\nQ: {question}\nA:",
            good=f" {answer}",
            bad=f" {plan['distractor']}",
            question=question,
        ),
        prompt=f"{story}\nQ: {question}\nA:",
        messages=None,
        truth=dict(plan),
        meta={"n_words": len(story.split())},
    )


def verify_filler(item: Item) -> list[str]:
    """Every way a filler disagrees with its facts or its own rendering."""
    plan = item.truth
    malformed = truth_problems(plan, NarrativeFiller)
    if malformed:
        return malformed
    try:
        rendered = render_filler(plan)
    except (KeyError, TypeError, ValueError) as error:
        return [f"the filler's truth is incomplete ({error!r})"]
    problems = []
    if item.answer != plan["facts"].get(plan["asked"]):
        problems.append("the answer is not the asked fact")
    distractor = plan["distractor"]
    if distractor == item.answer or re.search(rf"\b{re.escape(distractor)}\b", item.context):
        problems.append(f"the distractor {distractor!r} occurs in the story or is the answer")
    ours, theirs = rendered.to_dict(), item.to_dict()
    problems.extend(
        f"field {name!r} differs from what the facts render (edited after generation?)"
        for name in ours
        if name != "item_id" and ours[name] != theirs[name]
    )
    return problems
