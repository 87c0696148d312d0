"""Narrative items: rendered from a plan, and verified against the world simulator.

:func:`render_item` is the only place narrative text is produced. :func:`verify_item` replays
an item's events, checks the answer and both continuations against the simulation, checks the
story's containers, and re-renders the item to prove its text is exactly what the events say.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.item import ChoicePair, Item
from tracktale.schema.payloads import NarrativeStory, truth_problems
from tracktale.stimuli.lexicons import Character, Noun
from tracktale.stimuli.narrative.design import STRUCTURES, parse_cell
from tracktale.stimuli.narrative.pairs import mention_flags, pair_problems
from tracktale.stimuli.narrative.render import (
    Sentence,
    continuation,
    explicit_prompt,
    explicit_question,
    named_containers,
    render_sentence,
    render_story,
)
from tracktale.stimuli.narrative.world import InconsistentStory, simulate

PARADIGM_NAME = "narrative"


def _parts(
    plan: Mapping[str, Any],
) -> tuple[Character, dict[str, Noun], dict[str, str], list[Sentence]]:
    try:
        character = Character(plan["character"]["name"], plan["character"]["pronoun"])
        character.possessive  # noqa: B018 - rejects an unknown pronoun early
        nouns = {o["noun"]: Noun(o["noun"], o["article"], o.get("kind")) for o in plan["objects"]}
        mentions = {
            c["noun"]: f"{c['adjective']} {c['noun']}" if c["adjective"] else c["noun"]
            for c in plan["containers"]
        }
        sentences = [Sentence.from_dict(s) for s in plan["sentences"]]
    except (KeyError, TypeError) as error:
        raise InconsistentStory(f"the item's truth is incomplete ({error!r} missing)") from None
    return character, nouns, mentions, sentences


def render_item(
    plan: Mapping[str, Any],
    *,
    cell: str,
    template: str,
    answer: str,
    minimal_pair: bool,
    pairs: str = "chained",
    prompt_layout: str = "story-first",
    role: str = "main",
) -> Item:
    """Render every text field of an item from its plan.

    Args:
        plan: The story plan (becomes the item's ``truth``).
        cell: The design cell, e.g. ``"C3.F1"``.
        template: The object template.
        answer: The declared final location of the focus object.
        minimal_pair: Whether the continuations differ only in their "from" container.
        pairs: The pair structure (``chained`` or ``independent``).
        prompt_layout: Where the explicit prompt puts the story (see ``PROMPT_LAYOUTS``).
        role: ``main`` or ``practice``.

    Returns:
        The item with its content id.
    """
    level, focus = parse_cell(cell)
    character, nouns, mentions, sentences = _parts(plan)
    story = render_story(sentences, character, nouns, mentions)
    neutral = render_sentence(sentences[0], character, nouns, mentions)
    focus_object = plan["focus_object"]
    good, bad = plan["continuations"]["good"], plan["continuations"]["bad"]
    question = explicit_question(focus_object)
    prompt = explicit_prompt(story, question, prompt_layout)
    spoken = [s for s in sentences if s.frame != "hidden"]
    described = {c["noun"] for c in plan["containers"] if c["adjective"]}
    return Item.create(
        paradigm=PARADIGM_NAME,
        role=role,
        condition={
            "cell": cell,
            "complexity": level,
            "focus": focus,
            "template": template,
            "lure": plan["lure"],
            "pairs": "minimal" if minimal_pair else pairs,
            "minimal_pair": minimal_pair,
        },
        context=story,
        question=question,
        answer=answer,
        choice=ChoicePair(
            prefix=story,
            good=continuation(character, focus_object, good["source"], good["target"]),
            bad=continuation(character, focus_object, bad["source"], bad["target"]),
            neutral_prefix=neutral,
        ),
        prompt=prompt,
        messages=({"role": "user", "content": prompt},),
        truth=plan,
        meta={
            "n_words": len(story.split()),
            "n_sentences": len(spoken),
            "adjective_sentences": sum(bool(named_containers(s) & described) for s in spoken),
            "sentences_since_focus": _sentences_since(sentences, focus_object),
            "story_key": plan["story_key"],
            "prompt_layout": prompt_layout,
            **mention_flags(plan),
        },
    )


def _sentences_since(sentences: list[Sentence], obj: str) -> int:
    """How many rendered sentences follow the last one that mentions ``obj`` (recency)."""
    spoken = [s for s in sentences if s.frame != "hidden"]
    last = max(i for i, s in enumerate(spoken) if any(e.object == obj for e in s.events))
    return len(spoken) - 1 - last


def verify_item(item: Item) -> list[str]:
    """Every way ``item`` disagrees with its simulation or its own rendering.

    Returns:
        Problems as sentences; empty when the item is consistent.
    """
    malformed = truth_problems(item.truth, NarrativeStory)
    if malformed:
        return malformed
    try:
        return _verify(item)
    except (InconsistentStory, TracktaleError) as error:
        return [str(error)]
    except (KeyError, TypeError, IndexError, AttributeError) as error:
        return [f"the item's truth is malformed ({type(error).__name__}: {error})"]


def _verify(item: Item) -> list[str]:
    plan = item.truth
    problems = []
    nouns = [c["noun"] for c in plan["containers"]]
    shared = sorted({noun for noun in nouns if nouns.count(noun) > 1})
    if shared:
        problems.append(f"two containers in the story share the noun {shared[0]!r}")
    level, focus = parse_cell(str(item.condition.get("cell")))
    frames = [s["frame"] for s in plan["sentences"]]
    if frames != [frame for frame, _ in STRUCTURES[level].sentences]:
        problems.append(f"the sentences do not follow the structure of complexity {level}")
    if plan["objects"][focus]["noun"] != plan["focus_object"]:
        problems.append(f"the focus object is not object F{focus}")
    _, _, _, sentences = _parts(plan)
    try:
        simulation = simulate([e for s in sentences for e in s.events], nouns)
    except InconsistentStory as error:
        return [*problems, str(error)]
    final = simulation.final_locations.get(plan["focus_object"])
    if item.answer != final:
        problems.append(
            f"answer {item.answer!r} is not the simulated final location of the "
            f"{plan['focus_object']} ({final!r})"
        )
    good, bad = plan["continuations"]["good"], plan["continuations"]["bad"]
    if good["source"] != final:
        problems.append(
            f"the good continuation takes the {plan['focus_object']} from the "
            f"{good['source']}, but the simulation has it in the {final}"
        )
    if bad["source"] == final:
        problems.append(
            f"the bad continuation takes the {plan['focus_object']} from the "
            f"{final}, where it really is"
        )
    minimal = bool(item.condition.get("minimal_pair"))
    problems.extend(pair_problems(plan, _pairs_of(item), minimal))
    if not problems:
        problems.extend(_rendering_differences(item))
    return problems


def _pairs_of(item: Item) -> str:
    pairs = str(item.condition.get("pairs"))
    return "independent" if pairs == "minimal" else pairs


def _rendering_differences(item: Item) -> list[str]:
    rendered = render_item(
        item.truth,
        cell=str(item.condition["cell"]),
        template=str(item.condition["template"]),
        answer=item.answer,
        minimal_pair=bool(item.condition["minimal_pair"]),
        pairs=_pairs_of(item),
        prompt_layout=str(item.meta.get("prompt_layout")),
        role=item.role,
    )
    ours, theirs = rendered.to_dict(), item.to_dict()
    return [
        f"field {name!r} differs from what the events render (edited after generation?)"
        for name in ours
        if name != "item_id" and ours[name] != theirs[name]
    ]
