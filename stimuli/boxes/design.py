"""The boxes design: config checks, step counts, and the random worlds instances are drawn from.

A *world* is everything random about an instance: the key inside each box, the order in which
boxes are opened, four synthetic words, the box and key the instructions use as their example,
and one distractor sentence per possible action. World ``k`` of a shot count is the same in every
language, instruction, distractor and prompt-format condition, so conditions are compared on
matched instances (the ``world`` condition field names it).

The number of actions T (Step-1 .. Step-T, the last being the test step) is drawn uniformly from
``max(min_steps, shots)`` to ``max_steps`` like the source paper's, but stratified: across a
cell's instances each allowed T appears equally often (the remainder spread evenly over the
range), so cells are balanced and the size of a set is known before it is generated.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import tracktale.stimuli.boxes.distractors as distractor_bank
from tracktale.errors import TracktaleError
from tracktale.stimuli.boxes.language import sample_synthetic_words, vocabulary
from tracktale.stimuli.boxes.render import Plan
from tracktale.stimuli.boxes.world import Action


@dataclass(frozen=True)
class World:
    """The random draws behind one instance (see the module docstring)."""

    world_id: str
    box_keys: tuple[int, ...]
    order: tuple[int, ...]
    synthetic: Mapping[str, str]
    example_box: int
    example_key: int
    n_steps: int
    stream: str
    """The name of the world's random stream; distractors draw from a stream derived from it."""
    compressed_steps: int = 0
    """k, the actions a compressed version folds into its Step-0 (0: no compression)."""

    def plan(
        self,
        language: str,
        *,
        compressed: bool,
        sentences: Sequence[str] | None,
    ) -> Plan:
        """The plan of one rendering of this world.

        Args:
            language: The language condition.
            compressed: Whether this is the compressed version (start after k actions and run
                the following T) or the normal one (start empty and run all k + T actions).
            sentences: One distractor per world action, or ``None`` without distractors.
        """
        actions = [Action(box, self.box_keys[box]) for box in self.order]
        first = self.compressed_steps if compressed else 0
        last = self.compressed_steps + self.n_steps
        return Plan(
            box_keys=self.box_keys,
            compressed=tuple(actions[:first]),
            actions=tuple(actions[first:last]),
            words=vocabulary(language, self.synthetic),
            example_box=self.example_box,
            example_key=self.example_key,
            distractors=None if sentences is None else tuple(sentences[first:last]),
        )

    def distractors(self, source: str) -> list[str]:
        """One distractor sentence per box (one per possible action), distinct where possible."""
        pool = distractor_bank.sentences(source)
        rng = random.Random(f"{self.stream}|distractors|{source}")
        n_boxes = len(self.box_keys)
        if n_boxes <= len(pool):
            return rng.sample(pool, n_boxes)
        return [rng.choice(pool) for _ in range(n_boxes)]


def sample_world(seed: int, n_boxes: int, shots: int, index: int, n_steps: int) -> World:
    """World ``index`` of the given shot count (independent of every other option)."""
    stream = f"boxes|{seed}|world|{n_boxes}|{shots}|{index}"
    rng = random.Random(stream)
    box_keys = list(range(n_boxes))
    rng.shuffle(box_keys)
    order = list(range(n_boxes))
    rng.shuffle(order)
    synthetic = sample_synthetic_words(rng)
    return World(
        world_id=f"w{shots}.{index:03d}",
        box_keys=tuple(box_keys),
        order=tuple(order),
        synthetic=synthetic,
        example_box=rng.randrange(n_boxes),
        example_key=rng.randrange(n_boxes),
        n_steps=n_steps,
        stream=stream,
    )


def compress_world(world: World, config: Mapping[str, Any], shots: int) -> World:
    """The world with its compressed steps k: the fixed ``--compress``, or drawn per instance.

    ``--compress random`` follows the authors' generator (``--prerun_max_steps`` in their
    ``run.py``): k is uniform on 1 .. min(boxes - shots, ``compress_max``) - 1, and the
    instance's actions stop when the boxes run out, so T becomes min(T, boxes - k).
    """
    k = config["compress"]
    if k != "random":
        return dataclasses.replace(world, compressed_steps=k)
    n_boxes = len(world.box_keys)
    rng = random.Random(f"{world.stream}|compress")
    k = rng.randrange(1, min(n_boxes - shots, config["compress_max"]))
    return dataclasses.replace(world, compressed_steps=k, n_steps=min(world.n_steps, n_boxes - k))


def step_range(config: Mapping[str, Any], shots: int) -> range:
    """The allowed numbers of actions for ``shots``."""
    return range(max(config["min_steps"], shots), config["max_steps"] + 1)


def step_counts(config: Mapping[str, Any], shots: int, seed: int | None) -> list[int]:
    """The number of actions of each instance, balanced over the allowed range.

    With ``seed=None`` the counts come back in sorted order (enough to count items).
    """
    allowed = list(step_range(config, shots))
    n, m = config["instances"], len(allowed)
    remainder = n % m
    counts = allowed * (n // m) + [
        allowed[(2 * j + 1) * m // (2 * remainder)] for j in range(remainder)
    ]
    if seed is None:
        return sorted(counts)
    random.Random(f"boxes|{seed}|steps|{shots}").shuffle(counts)
    return counts


def probe_steps(n_steps: int, probe: str) -> range:
    """The steps an instance with ``n_steps`` actions is probed at."""
    return range(1, n_steps + 1) if probe == "every" else range(n_steps, n_steps + 1)


def check_config(config: Mapping[str, Any]) -> None:
    """Cross-option checks of a resolved config.

    Raises:
        TracktaleError: Naming the options and values that do not fit together.
    """
    for name in ("shots", "language", "instruction", "distractors", "prompt_format"):
        values = list(config[name])
        repeated = sorted({str(v) for v in values if values.count(v) > 1})
        if repeated:
            raise TracktaleError(f"--{name.replace('_', '-')} names {repeated[0]} twice")
    low = min(config["shots"])
    if low < 1:
        raise TracktaleError(
            f"--shots must be at least 1 (Step-0 is the first demonstration), got {low}"
        )
    if config["min_steps"] > config["max_steps"]:
        raise TracktaleError(
            f"--min-steps {config['min_steps']} is more than --max-steps {config['max_steps']}"
        )
    most = max(config["shots"])
    if most > config["max_steps"]:
        raise TracktaleError(
            f"--shots {most} needs at least {most} steps ({most - 1} demonstrated actions and "
            f"the test step), but --max-steps is {config['max_steps']}"
        )
    if config["compress"] == "random":
        _check_random_compression(config)
        return
    opened = config["compress"] + config["max_steps"]
    if opened > config["boxes"]:
        raise TracktaleError(
            f"--compress {config['compress']} and --max-steps {config['max_steps']} open "
            f"{opened} boxes, but there are only {config['boxes']} (--boxes)"
        )
    if "on" in config["distractors"]:
        distractor_bank.sentences(config["distractor_source"])


def _check_random_compression(config: Mapping[str, Any]) -> None:
    if config["probe"] != "final":
        raise TracktaleError(
            "--compress random draws k per instance, so the steps to probe are not known in "
            "advance: use it with --probe final, or a fixed --compress k with --probe every"
        )
    most = max(config["shots"])
    if min(config["boxes"] - most, config["compress_max"]) < 2:
        raise TracktaleError(
            f"--compress random draws k from 1 to min(boxes - shots, --compress-max) - 1, which "
            f"is empty for --boxes {config['boxes']}, --shots {most} and --compress-max "
            f"{config['compress_max']}"
        )
