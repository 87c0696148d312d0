"""The boxes paradigm: situational state tracking in a box/key world (explicit task only).

Reproduces the environment of *Can You Follow Me? Testing Situational Understanding in ChatGPT*
(Yang & Ettinger, 2023): N boxes with one key inside each; every step opens a box and retrieves
its key; after instructions and n demonstrated steps (Step-0, "do nothing", gives the initial
states) and further undemonstrated steps, the model enumerates all 2N states after the test
step. Conditions: shots, natural or synthetic language (in full, functors only, arguments
only), normal or counterintuitive instructions, distractor sentences, single-turn or faked
multi-round chat prompts, probing the final step or every step, and compressed initialization.
Every item is simulated, rendered, verified and re-rendered before it is yielded.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.item import Item
from tracktale.stimuli.boxes import design
from tracktale.stimuli.boxes.distractors import SOURCES
from tracktale.stimuli.boxes.items import PROBES, Settings, build_item, instance_id, verify_item
from tracktale.stimuli.boxes.language import INSTRUCTIONS, LANGUAGES
from tracktale.stimuli.boxes.render import PROMPT_FORMATS
from tracktale.stimuli.boxes.scoring import (
    DEFAULT_RULES,
    BoxesJudgement,
    ScoringRules,
    parse_answer,
    state_scores,
)
from tracktale.stimuli.paradigm import Option, Paradigm

PRACTICE_WORLDS = 900
"""World index of the first practice instance (far from the main worlds' 0, 1, ...)."""
_TABLE1 = {
    "boxes": 10,
    "shots": [2, 3, 5],
    "min_steps": 1,
    "max_steps": 9,
    "instances": 50,
    "language": ["nl", "synthetic"],
    "instruction": list(INSTRUCTIONS),
    "distractors": ["off"],
    "distractor_source": "bank",
    "prompt_format": ["single-turn"],
    "probe": "final",
    "compress": 0,
    "compress_max": 10,
    "practice": 0,
}


class GenerationError(TracktaleError):
    """The generator produced an item its own checks reject (a bug, never silently skipped)."""


class BoxesParadigm(Paradigm):
    """Situational state tracking: enumerate every box and key state after a series of steps."""

    name = "boxes"
    version = "1"
    description = "box/key world state tracking with State-EM and Step-EM (shots, SL, flips)"
    max_new_tokens = 576
    """Covers the 20 states of the default 10 boxes in every language condition (random
    synthetic words split into many short tokens); each item's ``meta["max_new_tokens"]`` holds
    a budget for its own answer, for runners that budget per item."""
    stop_sequences = ("\nStep-", "\nQuestion:")
    """Where a base model continuing the pattern has finished the answer."""
    judgement = BoxesJudgement
    options = (
        Option(
            "boxes", int, "Number of boxes (and keys, one inside each box).", minimum=1, maximum=100
        ),
        Option(
            "shots",
            int,
            "Demonstrated steps, Step-0 included, e.g. 2,3,5 (comma-separated).",
            multiple=True,
            minimum=1,
        ),
        Option("min_steps", int, "Fewest actions (Step-1..Step-T) in an instance.", minimum=1),
        Option(
            "max_steps",
            int,
            "Most actions in an instance; T is drawn from max(min-steps, shots) to this.",
            minimum=1,
        ),
        Option("instances", int, "Instances per design cell.", minimum=1),
        Option(
            "language",
            str,
            "Language conditions: nl, synthetic, functor-only, argument-only (comma-separated).",
            choices=LANGUAGES,
            multiple=True,
            minimum=1,
        ),
        Option(
            "instruction",
            str,
            "Instruction variants (comma-separated).",
            choices=INSTRUCTIONS,
            multiple=True,
            minimum=1,
        ),
        Option(
            "distractors",
            str,
            "Append an unrelated sentence to each step: off, on or off,on.",
            choices=("off", "on"),
            multiple=True,
            minimum=1,
        ),
        Option(
            "distractor_source",
            str,
            "Distractor sentences: our own bank, or NLTK's Brown corpus if installed.",
            choices=SOURCES,
        ),
        Option(
            "prompt_format",
            str,
            "single-turn prompt, multi-round faked chat, or both (comma-separated).",
            choices=PROMPT_FORMATS,
            multiple=True,
            minimum=1,
        ),
        Option(
            "probe",
            str,
            "Query the final step only, or every step (intermediate state probing).",
            choices=PROBES,
        ),
        Option(
            "compress",
            int,
            "Compressed initialization: k > 0 gives every instance twice, from the empty "
            "world (k + T steps) and from the state after its first k steps (T steps); "
            "'random' draws k per instance as the authors' generator did.",
            minimum=0,
            words=("random",),
        ),
        Option(
            "practice",
            int,
            "Practice instances for the human study (role practice): the fewest shots, a test "
            "step right after the demonstrations, the conditions taken in turn.",
            minimum=0,
        ),
        Option(
            "compress_max",
            int,
            "With --compress random: k is drawn from 1 to min(boxes - shots, this) - 1, the "
            "authors' prerun_max_steps.",
            minimum=2,
        ),
    )
    protocols = {
        "model": _TABLE1,
        "languages": {**_TABLE1, "language": list(LANGUAGES)},
        "probing": {
            **_TABLE1,
            "shots": [2, 5],
            "instruction": ["normal", "flipped-truth"],
            "probe": "every",
        },
        "compressed": {
            **_TABLE1,
            "shots": [2, 5],
            "instruction": ["normal"],
            "compress": "random",
        },
        "distractors": {
            **_TABLE1,
            "shots": [2, 5],
            "instruction": ["normal"],
            "distractors": ["off", "on"],
        },
        "formats": {
            **_TABLE1,
            "instruction": ["normal"],
            "prompt_format": list(PROMPT_FORMATS),
        },
        "human": {
            **_TABLE1,
            "boxes": 6,
            "shots": [3, 5],
            "max_steps": 6,
            "instances": 8,
            "instruction": ["normal", "flipped-truth"],
            "practice": 2,
        },
        "smoke": {
            **_TABLE1,
            "boxes": 3,
            "shots": [2],
            "max_steps": 3,
            "instances": 2,
            "instruction": ["normal", "flipped-truth"],
            "probe": "every",
        },
    }

    def resolve_config(
        self, protocol: str, overrides: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """As :meth:`Paradigm.resolve_config`; ``practice`` is left out when it is 0.

        The model protocols have no practice items, and leaving the option out keeps their
        configs, manifests and item ids byte-identical to the sets made before it existed.
        """
        resolved = super().resolve_config(protocol, overrides)
        if not resolved["practice"]:
            del resolved["practice"]
        return resolved

    def check_config(self, config: Mapping[str, Any]) -> None:
        """Shots against steps, compression against boxes, repeated values, distractor source."""
        design.check_config(config)
        if config.get("practice") and config["compress"]:
            raise TracktaleError("--practice items are made without --compress; use one of them")

    def expected_count(self, config: Mapping[str, Any]) -> int:
        """Items per instance (one per probed step, twice with compression) times the cells."""
        renderings = 1
        for name in ("language", "instruction", "distractors", "prompt_format"):
            renderings *= len(config[name])
        k = config["compress"]
        total = 0
        for shots in config["shots"]:
            for n_steps in design.step_counts(config, shots, seed=None):
                if k == "random":  # final step only (checked): one item per version
                    total += 2
                    continue
                total += len(design.probe_steps(k + n_steps, config["probe"]))
                if k:
                    total += len(design.probe_steps(n_steps, config["probe"]))
        return total * renderings + config.get("practice", 0)

    def generate(self, config: Mapping[str, Any], seed: int) -> Iterator[Item]:
        """Yield items cell by cell (shots, language, instruction, distractors, format, init)."""
        initializations = ["normal", "compressed"] if config["compress"] else ["normal"]
        source = config["distractor_source"]
        for shots in config["shots"]:
            counts = design.step_counts(config, shots, seed)
            worlds = [
                design.compress_world(
                    design.sample_world(seed, config["boxes"], shots, index, n_steps),
                    config,
                    shots,
                )
                for index, n_steps in enumerate(counts)
            ]
            sentences = {}
            if "on" in config["distractors"]:
                sentences = {world.world_id: world.distractors(source) for world in worlds}
            factors = itertools.product(
                config["language"],
                config["instruction"],
                config["distractors"],
                config["prompt_format"],
                initializations,
            )
            for language, instruction, distractors, prompt_format, initialization in factors:
                cell = Settings(
                    shots=shots,
                    language=language,
                    instruction=instruction,
                    distractors=distractors,
                    prompt_format=prompt_format,
                    initialization=initialization,
                    compressed_steps=0,
                    probe=config["probe"],
                    probe_step=0,
                    world="",
                    instance="",
                )
                for world in worlds:
                    yield from self._instance_items(
                        config, cell, world, sentences.get(world.world_id)
                    )
        yield from self._practice_items(config, seed)

    def _practice_items(self, config: Mapping[str, Any], seed: int) -> Iterator[Item]:
        """The human study's practice instances (role ``practice``), after the main items.

        Each is a world of its own (world ids from ``w<shots>.900``) with the fewest shots and
        the test step right after the demonstrations; practice instance j takes the condition
        (language x instruction) j(R - 1) mod R of the R in the config, so two practice
        trials show the first and the last (``nl`` + ``normal``, ``synthetic`` + a
        counterintuitive instruction), and R of them show every condition once.
        """
        shots = min(config["shots"])
        n_steps = max(config["min_steps"], shots)
        renderings = list(itertools.product(config["language"], config["instruction"]))
        stride = max(1, len(renderings) - 1)
        for index in range(config.get("practice", 0)):
            language, instruction = renderings[(index * stride) % len(renderings)]
            world = design.sample_world(
                seed, config["boxes"], shots, PRACTICE_WORLDS + index, n_steps
            )
            cell = Settings(
                shots=shots,
                language=language,
                instruction=instruction,
                distractors="off",
                prompt_format=config["prompt_format"][0],
                initialization="normal",
                compressed_steps=0,
                probe="final",
                probe_step=0,
                world="",
                instance="",
            )
            yield from self._instance_items(config, cell, world, None, role="practice")

    def _instance_items(
        self,
        config: Mapping[str, Any],
        cell: Settings,
        world: design.World,
        sentences: list[str] | None,
        role: str = "main",
    ) -> Iterator[Item]:
        with_distractors = cell.distractors == "on"
        compressed = cell.initialization == "compressed"
        plan = world.plan(
            cell.language,
            compressed=compressed,
            sentences=sentences if with_distractors else None,
        )
        placed = dataclasses.replace(
            cell,
            world=world.world_id,
            compressed_steps=world.compressed_steps if compressed else 0,
        )
        instance = instance_id(plan, placed)
        for step in design.probe_steps(plan.n_steps, cell.probe):
            settings = dataclasses.replace(placed, probe_step=step, instance=instance)
            item = build_item(
                plan, settings, config["distractor_source"] if with_distractors else None, role
            )
            problems = verify_item(item)
            if problems:
                raise GenerationError(
                    f"generated boxes item {item.item_id} is inconsistent: {problems[0]}"
                )
            yield item

    def verify(self, item: Item) -> list[str]:
        """Re-simulate, check the rules and re-render the item."""
        if item.paradigm != self.name:
            return [f"item belongs to paradigm {item.paradigm!r}, not {self.name!r}"]
        return verify_item(item)

    def design_cell(self, item: Item) -> str:
        """``main/2-shot/synthetic+flipped-truth+single-turn`` (+distractors, +compressed-k)."""
        condition = item.condition
        parts = [str(condition["language"]), str(condition["instruction"])]
        if condition["distractors"] == "on":
            parts.append("distractors")
        parts.append(str(condition["prompt_format"]))
        if condition["initialization"] == "compressed":
            parts.append(f"compressed-{condition['compressed_steps']}")
        return f"{item.role}/{condition['shots']}-shot/{'+'.join(parts)}"

    def score_response(
        self, item: Item, response: str, rules: ScoringRules = DEFAULT_RULES
    ) -> BoxesJudgement:
        """Parse the states in ``response`` and score them (see :mod:`.scoring`).

        Garbage, empty or non-text responses score as unparsed (``parsed`` False, State-EM 0),
        never as an error. ``correct`` is Step-EM. ``rules`` choose between our scoring and
        the authors' code where they differ.

        Raises:
            TracktaleError: If ``item`` is not a boxes item with its ground truth.
        """
        try:
            words, n_boxes, expected = (
                item.truth["words"],
                item.truth["n_boxes"],
                item.truth["expected"],
            )
        except (KeyError, TypeError):
            raise TracktaleError(f"item {item.item_id} has no boxes ground truth") from None
        return state_scores(expected, parse_answer(response, words, n_boxes, rules))


PARADIGM = BoxesParadigm()
