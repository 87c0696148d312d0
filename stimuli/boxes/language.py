"""The state language: functors, arguments, the synthetic vocabulary and the instructions.

A state is written ``FUNCTOR(ARGUMENT-i)=True``. Natural language (NL) uses ``OPENED(BOX-i)`` and
``OBTAINED(KEY-i)``; synthetic language (SL) replaces the functors, the argument names or both
with random strings of ASCII letters whose length is drawn from U(1, 10), fresh for every
instance and explained in the instructions (the source paper's robustness check).

Instruction variants (the source paper's Figure 1):

- ``normal``: ``=True`` means opened/obtained.
- ``flipped-truth`` (the paper's "counterintuitive output format", Example 2): the truth values
  are switched, ``=False`` means opened and ``=True`` means not opened.
- ``counterintuitive-language`` (Example 3): the same mapping stated through negated language,
  ``=True`` means "has not been opened". The paper's Example 3 prints "not opened" for both truth
  values, which defines no mapping at all; we follow the authors' released generator, whose
  second sentence reads ``=False`` means "has been opened".

Under both counterintuitive variants every answer value is the negation of the world state.
"""

from __future__ import annotations

import random
import string
from collections.abc import Mapping
from dataclasses import dataclass

from tracktale.errors import TracktaleError

LANGUAGES = ("nl", "synthetic", "functor-only", "argument-only")
"""``nl``: natural functors and arguments; ``synthetic``: both synthetic; ``functor-only`` and
``argument-only``: only the functors, or only the argument names, synthetic."""
INSTRUCTIONS = ("normal", "flipped-truth", "counterintuitive-language")
NL_WORDS = {
    "box_functor": "OPENED",
    "key_functor": "OBTAINED",
    "box_name": "BOX",
    "key_name": "KEY",
}
SYNTHETIC_SLOTS = tuple(NL_WORDS)
_SYNTHETIC_PARTS = {
    "nl": (),
    "synthetic": SYNTHETIC_SLOTS,
    "functor-only": ("box_functor", "key_functor"),
    "argument-only": ("box_name", "key_name"),
}
_RESERVED = {word.lower() for word in NL_WORDS.values()} | {
    "true",
    "false",
    "step",
    "question",
    "answer",
    "instructions",
}
MAX_SYNTHETIC_LENGTH = 10


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The four words an instance's states are written with."""

    box_functor: str
    key_functor: str
    box_name: str
    key_name: str

    def box(self, index: int) -> str:
        """The argument naming box ``index`` (``BOX-3``)."""
        return f"{self.box_name}-{index}"

    def key(self, index: int) -> str:
        """The argument naming key ``index`` (``KEY-3``)."""
        return f"{self.key_name}-{index}"

    def state_names(self, n_boxes: int) -> list[str]:
        """Every state in query order (``OPENED(BOX-0)``, ..., ``OBTAINED(KEY-9)``)."""
        return [f"{self.box_functor}({self.box(i)})" for i in range(n_boxes)] + [
            f"{self.key_functor}({self.key(i)})" for i in range(n_boxes)
        ]


def sample_synthetic_words(rng: random.Random) -> dict[str, str]:
    """Four synthetic words: letters only, lengths from U(1, 10), pairwise distinct.

    The words differ from each other and from the NL words and answer keywords even ignoring
    case, so a case-insensitive parse of an answer can never confuse two of them.
    """
    words: dict[str, str] = {}
    taken = set(_RESERVED)
    for slot in SYNTHETIC_SLOTS:
        while True:
            length = rng.randint(1, MAX_SYNTHETIC_LENGTH)
            word = "".join(rng.choice(string.ascii_letters) for _ in range(length))
            if word.lower() not in taken:
                break
        taken.add(word.lower())
        words[slot] = word
    return words


def check_synthetic_words(words: Mapping[str, str]) -> None:
    """Check stored synthetic words against the rules :func:`sample_synthetic_words` follows.

    Args:
        words: Synthetic words by slot (all four slots, or the ones a language condition uses).

    Raises:
        TracktaleError: Naming the first word that breaks a rule.
    """
    if not set(words) <= set(SYNTHETIC_SLOTS):
        raise TracktaleError(f"synthetic words must name some of {', '.join(SYNTHETIC_SLOTS)}")
    lowered = [str(word).lower() for word in words.values()]
    for slot, word in words.items():
        if not (
            isinstance(word, str)
            and 1 <= len(word) <= MAX_SYNTHETIC_LENGTH
            and all(c in string.ascii_letters for c in word)
        ):
            raise TracktaleError(f"synthetic {slot} {word!r} is not 1-10 ASCII letters")
        if word.lower() in _RESERVED or lowered.count(word.lower()) > 1:
            raise TracktaleError(f"synthetic {slot} {word!r} is not distinct from the other words")


def vocabulary(language: str, synthetic: Mapping[str, str]) -> Vocabulary:
    """The vocabulary of ``language``, taking synthetic words from ``synthetic``.

    Raises:
        TracktaleError: For an unknown language condition.
    """
    if language not in _SYNTHETIC_PARTS:
        raise TracktaleError(f"unknown language {language!r} (choose from {', '.join(LANGUAGES)})")
    parts = _SYNTHETIC_PARTS[language]
    return Vocabulary(
        **{slot: synthetic[slot] if slot in parts else NL_WORDS[slot] for slot in NL_WORDS}
    )


def negates(instruction: str) -> bool:
    """Whether answers under ``instruction`` write the negation of the world state.

    Raises:
        TracktaleError: For an unknown instruction variant.
    """
    if instruction not in INSTRUCTIONS:
        raise TracktaleError(
            f"unknown instruction {instruction!r} (choose from {', '.join(INSTRUCTIONS)})"
        )
    return instruction != "normal"


def instruction_text(
    instruction: str, words: Vocabulary, n_boxes: int, example_box: int, example_key: int
) -> str:
    """The instructions paragraph: the quest, the world's size, the names and the value mapping.

    Args:
        instruction: One of :data:`INSTRUCTIONS`.
        words: The instance's vocabulary.
        n_boxes: Number of boxes (and keys).
        example_box: The box the value explanations use as their example.
        example_key: The key they use.
    """
    box = f"{words.box_functor}({words.box(example_box)})"
    key = f"{words.key_functor}({words.key(example_key)})"
    opened = f"means that {words.box(example_box)} has been opened."
    not_opened = f"means that {words.box(example_box)} has not been opened."
    obtained = f"means that {words.key(example_key)} has been obtained."
    not_obtained = f"means that {words.key(example_key)} has not been obtained."
    if instruction == "normal":
        explained = (
            f"{box}=True {opened} {key}=True {obtained} "
            f"{box}=False {not_opened} {key}=False {not_obtained}"
        )
    elif instruction == "flipped-truth":
        explained = (
            f"{box}=False {opened} {key}=False {obtained} "
            f"{box}=True {not_opened} {key}=True {not_obtained}"
        )
    elif instruction == "counterintuitive-language":
        explained = (
            f"{box}=True {not_opened} {key}=True {not_obtained} "
            f"{box}=False {opened} {key}=False {obtained}"
        )
    else:
        negates(instruction)  # raises the one-line error
    boxes = "1 box" if n_boxes == 1 else f"{n_boxes} boxes"
    keys = "1 key" if n_boxes == 1 else f"{n_boxes} keys"
    verb = "is" if n_boxes == 1 else "are"
    return (
        "As an agent, you need to find the way to go out of this quest. Currently, there are "
        "several boxes in front of you and there is a key inside each box. You can use only one "
        "of these keys to open the door and finish this quest. "
        f"There {verb} {boxes} and {keys} here. Boxes are identified as {words.box_name}-X and "
        f"Keys are identified as {words.key_name}-X. {explained}"
    )
