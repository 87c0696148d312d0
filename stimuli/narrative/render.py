"""Text of the narrative paradigm, rendered only from events and lexical choices.

Each sentence is a *frame* over a fixed signature of events (a put, a put and a revelation, a
move, ...); a frame refuses events that do not fit it, so the text cannot say something the
events do not. Nothing here edits text after rendering.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracktale.stimuli.lexicons import Character, Noun, pause_actions
from tracktale.stimuli.narrative.world import Event, InconsistentStory

EXPLICIT_INSTRUCTION = (
    "Follow these instructions:\n"
    "1. Carefully read the story and question to identify the object's final location.\n"
    "2. Your response must contain ONLY the single word for that final location (e.g., if the "
    "final location is 'the red box', respond 'box'; if it's 'the bag', respond 'bag').\n"
    "3. DO NOT include any reasoning, explanations, introductory phrases, sentences, or "
    "punctuation. Your entire response should be just the single location word."
)
"""The explicit task's instruction (the source paper's Appendix C prompt)."""
ELLIPSIS = "\u2026"
"""The probe ends in an ellipsis character, as Appendix D prints it (``The book is in the …``)."""
PROMPT_LAYOUTS = ("story-first", "instructions-first")
"""Where the story goes in the explicit prompt. Appendix C prints the instruction as one block
ending in ``Location:`` with no slot for the story inside it, so ``story-first`` (the default)
puts the story and its question before that block, which then ends the prompt exactly as
printed; ``instructions-first`` puts the instruction first and the story between it and
``Location:``."""


@dataclass(frozen=True)
class Frame:
    """A sentence pattern over a fixed sequence of event kinds."""

    kinds: tuple[str, ...]
    variants: tuple[str, ...]
    same_target: bool = False
    """Whether all events must share their target (a put and a revelation in one container)."""


_MOVE = ("move",)
FRAMES: dict[str, Frame] = {
    "intro": Frame((), ("{name} began tidying up {possessive} room.",)),
    "pause": Frame((), ()),  # variants are the lexicon's pause actions
    "hidden": Frame(("hidden",), ("",)),
    "put_simple": Frame(
        ("put",),
        (
            "{Pronoun} picked up {a0} and put it into the {t0}.",
            "{Pronoun} picked up {a0} and placed it into the {t0}.",
        ),
    ),
    "put_careful": Frame(
        ("put",), ("{Pronoun} picked up {a0} and carefully placed it into the {t0}.",)
    ),
    "put_notice": Frame(
        ("put", "found"),
        (
            "{Pronoun} picked up {a0} and carefully placed it "
            "into the {t0}, where {pronoun} noticed {a1}.",
        ),
        same_target=True,
    ),
    "notice_in": Frame(("found",), ("While organizing, {pronoun} noticed {a0} in the {t0}.",)),
    "move_plain": Frame(_MOVE, ("{Pronoun} moved the {o0} from the {s0} to the {t0}.",)),
    "move_curious": Frame(_MOVE, ("Curious, {pronoun} moved the {o0} from the {s0} to the {t0}.",)),
    "move_then": Frame(_MOVE, ("Then, {pronoun} moved the {o0} from the {s0} to the {t0}.",)),
    "move_named": Frame(_MOVE, ("Then, {name} moved the {o0} from the {s0} to the {t0}.",)),
    "move_and_find": Frame(
        ("move", "found"),
        ("Curious, {pronoun} moved the {o0} to the {t0} and found {a1} there.",),
        same_target=True,
    ),
    "put_back": Frame(_MOVE, ("{Pronoun} put the {o0} into the {t0}.",)),
    "pickup_put": Frame(_MOVE, ("{Pronoun} picked up the {o0} and put it into the {t0}.",)),
}


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a story: a frame, its events and which wording variant it uses."""

    frame: str
    events: tuple[Event, ...] = ()
    variant: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the item's ``truth``."""
        return {
            "frame": self.frame,
            "variant": self.variant,
            "events": [event.to_dict() for event in self.events],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Sentence:
        """Rebuild a sentence from ``truth`` data."""
        if not isinstance(data, Mapping) or not isinstance(data.get("variant"), int):
            raise InconsistentStory(f"not a sentence: {data!r}")
        return cls(
            str(data.get("frame")),
            tuple(Event.from_dict(e) for e in data.get("events", ())),
            data["variant"],
        )


@functools.cache
def container_fields(frame: str) -> frozenset[str]:
    """The container fields (``t0``, ``s1``, ...) a frame's wordings name.

    Some frames leave a source unsaid ("moved the coin to the basket"), so which containers a
    sentence names is read from its wordings, not from its events.
    """
    variants = () if frame == "pause" else FRAMES[frame].variants
    return frozenset(field for text in variants for field in re.findall(r"\{([ts]\d)\}", text))


def named_containers(sentence: Sentence) -> set[str]:
    """The container nouns a rendered sentence names."""
    fields = container_fields(sentence.frame)
    named = set()
    for index, event in enumerate(sentence.events):
        if f"t{index}" in fields:
            named.add(event.target)
        if f"s{index}" in fields and event.source is not None:
            named.add(event.source)
    return named


def variant_count(frame: str) -> int:
    """How many wordings ``frame`` has."""
    return len(pause_actions()) if frame == "pause" else len(FRAMES[frame].variants)


def render_sentence(
    sentence: Sentence, character: Character, nouns: Mapping[str, Noun], mentions: Mapping[str, str]
) -> str:
    """The text of one sentence.

    Args:
        sentence: The frame, events and variant.
        character: The protagonist.
        nouns: Object noun -> lexicon entry (for the indefinite article).
        mentions: Container noun -> how the story names it (``"blue basket"``).

    Raises:
        InconsistentStory: If the events do not fit the frame or the variant does not exist.
    """
    frame = FRAMES.get(sentence.frame)
    if frame is None:
        raise InconsistentStory(f"unknown sentence frame {sentence.frame!r}")
    kinds = tuple(event.kind for event in sentence.events)
    if kinds != frame.kinds:
        raise InconsistentStory(f"frame {sentence.frame!r} takes events {frame.kinds}, got {kinds}")
    if frame.same_target and len({event.target for event in sentence.events}) > 1:
        raise InconsistentStory(f"frame {sentence.frame!r} needs one container for its events")
    variants = pause_actions() if sentence.frame == "pause" else frame.variants
    if not 0 <= sentence.variant < len(variants):
        raise InconsistentStory(f"frame {sentence.frame!r} has no variant {sentence.variant}")
    fields = {
        "name": character.name,
        "Pronoun": character.subject,
        "pronoun": character.pronoun,
        "possessive": character.possessive,
    }
    for index, event in enumerate(sentence.events):
        if event.object not in nouns:
            raise InconsistentStory(f"the {event.object} is not one of the story's objects")
        fields[f"o{index}"] = event.object
        fields[f"a{index}"] = nouns[event.object].indefinite
        fields[f"t{index}"] = mentions[event.target]
        if event.source is not None:
            fields[f"s{index}"] = mentions[event.source]
    return variants[sentence.variant].format(**fields)


def render_story(
    sentences: Sequence[Sentence],
    character: Character,
    nouns: Mapping[str, Noun],
    mentions: Mapping[str, str],
) -> str:
    """The whole story: rendered sentences joined by single spaces (unnarrated ones omitted)."""
    texts = (render_sentence(s, character, nouns, mentions) for s in sentences)
    return " ".join(text for text in texts if text)


def continuation(character: Character, obj: str, source: str, target: str) -> str:
    """An implicit-task continuation, with its leading space (containers by bare noun)."""
    return (
        f" Later, {character.name} picked up the {obj} from the {source} and placed it into "
        f"the {target}."
    )


def explicit_question(obj: str) -> str:
    """The explicit probe as people see it, to be completed with a location word."""
    return f"The {obj} is in the"


def explicit_prompt(story: str, question: str, layout: str = "story-first") -> str:
    """The explicit task's model prompt: story, question and the instruction ending in the cue.

    Args:
        story: The story text.
        question: The probe (``The key is in the``).
        layout: One of :data:`PROMPT_LAYOUTS`.

    Raises:
        InconsistentStory: For an unknown layout.
    """
    probe = f"{story}\nQ: {question} {ELLIPSIS}"
    if layout == "story-first":
        return f"{probe}\n\n{EXPLICIT_INSTRUCTION}\nLocation:"
    if layout == "instructions-first":
        return f"{EXPLICIT_INSTRUCTION}\n\n{probe}\nLocation:"
    raise InconsistentStory(f"unknown prompt layout {layout!r}")
