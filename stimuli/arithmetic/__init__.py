"""Arithmetic procedural execution, after Panda et al., "When LLMs Stop Following Steps".

A model reads a step-wise procedure over two inputs (``Step 1: S3 = S1 + S2`` ...) in the
paper's Appendix B prompt and must return the last variable's value inside
``<answer>...</answer>``. Complexity grows with the number of steps (the horizon) and the
look-back depth; the paper's 55 datasets cross five input settings, five operation variants and
look-back 1..7 (see :mod:`.datasets`). Every item's reference value comes from executing its own
rendered text twice: with the paper's own executor (:mod:`.paper_executor`: a step that raises
is skipped) and with ours (:mod:`.executor`: IEEE edge cases kept and flagged); outputs are
scored with the paper's FAA, CAA, PAR, AP and SFB against both (:mod:`.scoring`).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.item import Item
from tracktale.stimuli.arithmetic.datasets import ALL, PAPER_DATASETS, Dataset, expand_datasets
from tracktale.stimuli.arithmetic.executor import Number, parse_value
from tracktale.stimuli.arithmetic.items import build_item, sample_inputs, sample_steps, verify_item
from tracktale.stimuli.arithmetic.paper_executor import execute_context_as_paper
from tracktale.stimuli.arithmetic.render import (
    MAX_STEPS,
    PROMPT_VERSIONS,
    render_context,
    render_procedure,
)
from tracktale.stimuli.arithmetic.scoring import ArithmeticJudgement, score_output
from tracktale.stimuli.paradigm import Option, Paradigm

HORIZONS = tuple(range(5, 96, 10))
"""The paper's procedure lengths: 5, 15, ..., 95 steps."""
PAPER_MAX_NEW_TOKENS = 32_768
"""The paper's generation limit (it reran at the model's full context when that was hit)."""
TOKENS_PER_STEP = 40
"""Generation budget per procedure step (ours): a step written out with its values, ``Step 7:
S9 = S7 * S8 = 0.25 * 3.5 = 0.875``, takes 20-35 tokens with digits tokenized one by one."""
ANSWER_ROOM = 128
"""Generation budget beyond the steps (ours): a preamble and the ``<answer>`` line."""
HUMAN_DATASETS = ("int_1-10_add_lb1", "int_1-10_sub_lb1", "int_1-10_add_lb3", "int_1-10_sub_lb3")
"""The human protocol's datasets (ours): the paper's integer [1, 10] inputs, addition and
subtraction (a person can do them without a calculator), look-back 1 and 3."""
HUMAN_HORIZONS = (5, 10, 15)
"""The human protocol's horizons (ours): the paper's 5 and 15 steps, and 10 between them."""
PRACTICE_HORIZON = 3
"""Steps of a practice procedure (ours; the paper has no human study)."""
PRACTICE = "practice_procedures"
"""The option counting practice procedures (not ``practice``: the narrative paradigm's option
of that name means other items, and the CLI shows one help text per option name)."""
_MAX_DRAWS = 1000


class ArithmeticParadigm(Paradigm):
    """Arithmetic procedural execution over long step-wise procedures."""

    name = "arithmetic"
    version = "2"
    description = "step-wise arithmetic procedures (55 datasets, 5-95 steps, look-back 1-7)"
    max_new_tokens = 4096
    """The most any item gets: room for a 95-step trace with its values (about 2,000-3,000
    tokens); each item gets what its own trace needs (:meth:`item_budget`). The paper allowed
    32,768 (:data:`PAPER_MAX_NEW_TOKENS`), which the scoring command's option and the shipped
    plan ``arithmetic-table1`` restore."""
    judgement = ArithmeticJudgement
    options = (
        Option(
            "datasets",
            str,
            "Datasets <setting>_<operation>_lb<k> (e.g. int_1-10_add_lb1, float_0-1_mixed_lb7) "
            f"or '{ALL}' for the paper's 55 (comma-separated).",
            multiple=True,
            minimum=1,
        ),
        Option(
            "horizons",
            int,
            "Procedure lengths in steps (comma-separated).",
            multiple=True,
            minimum=1,
            maximum=MAX_STEPS,
        ),
        Option("per_horizon", int, "Procedures per dataset and horizon.", minimum=1),
        Option(
            "practice_procedures",
            int,
            f"Practice procedures of {PRACTICE_HORIZON} steps, cycling through the datasets "
            "(for people; ours).",
            minimum=0,
        ),
        Option(
            "prompt_version",
            str,
            "Appendix B prompt as published ('paper') or with its missing correct example "
            "<answer>42</answer> restored ('completed').",
            choices=PROMPT_VERSIONS,
        ),
    )
    protocols = {
        "model": {
            "datasets": [ALL],
            "horizons": list(HORIZONS),
            "per_horizon": 100,
            "prompt_version": "paper",
        },
        "pilot": {
            "datasets": [ALL],
            "horizons": list(HORIZONS),
            "per_horizon": 2,
            "prompt_version": "paper",
        },
        "human": {
            "datasets": list(HUMAN_DATASETS),
            "horizons": list(HUMAN_HORIZONS),
            "per_horizon": 4,
            "practice_procedures": 2,
            "prompt_version": "paper",
        },
    }

    def resolve_config(
        self, protocol: str, overrides: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The config, with ``practice_procedures`` only where the protocol or the caller names it.

        The model and pilot protocols predate practice items; leaving the key out keeps their
        manifests (and so their files) byte-identical.
        """
        overrides = dict(overrides or {})
        if PRACTICE in self.protocols.get(protocol, {}) or PRACTICE in overrides:
            return super().resolve_config(protocol, overrides)
        resolved = super().resolve_config(protocol, {**overrides, PRACTICE: 0})
        del resolved[PRACTICE]
        return resolved

    def check_config(self, config: Mapping[str, Any]) -> None:
        """Check dataset names and horizons."""
        expand_datasets(config["datasets"])
        horizons = config["horizons"]
        if any(horizon < 1 for horizon in horizons):
            raise TracktaleError(f"--horizons must be positive, got {horizons}")
        if len(set(horizons)) != len(horizons):
            raise TracktaleError(f"--horizons names a horizon twice: {horizons}")

    def expected_count(self, config: Mapping[str, Any]) -> int:
        """Datasets x horizons x per-horizon procedures."""
        datasets = expand_datasets(config["datasets"])
        main = len(datasets) * len(config["horizons"]) * config["per_horizon"]
        return main + config.get(PRACTICE, 0)

    def generate(self, config: Mapping[str, Any], seed: int) -> Iterator[Item]:
        """Yield items dataset by dataset, horizon by horizon.

        Each (dataset, horizon) has its own random stream, so a cell's items do not depend on
        which other cells are generated, and a smaller ``per_horizon`` gives a prefix of a
        larger one. Items are distinct within a cell: a repeated draw is drawn again.
        """
        for dataset in expand_datasets(config["datasets"]):
            for horizon in config["horizons"]:
                rng = random.Random(f"arithmetic|{seed}|{dataset.name}|{horizon}")
                seen: set[str] = set()
                for example in range(config["per_horizon"]):
                    inputs, steps, context = _distinct_draw(rng, dataset, horizon, seen)
                    yield build_item(
                        dataset,
                        horizon,
                        example,
                        inputs,
                        steps,
                        config["prompt_version"],
                        context=context,
                    )
        yield from self._practice(config, seed)

    def _practice(self, config: Mapping[str, Any], seed: int) -> Iterator[Item]:
        """Short procedures for people to practise on, cycling through the datasets."""
        datasets = expand_datasets(config["datasets"])
        for example in range(config.get(PRACTICE, 0)):
            dataset = datasets[example % len(datasets)]
            rng = random.Random(f"arithmetic|{seed}|practice|{example}")
            inputs = sample_inputs(rng, dataset)
            steps = sample_steps(rng, dataset, PRACTICE_HORIZON)
            yield build_item(
                dataset,
                PRACTICE_HORIZON,
                example,
                inputs,
                steps,
                config["prompt_version"],
                role="practice",
            )

    def verify(self, item: Item) -> list[str]:
        """Check the item's dataset, inputs and look-back rule, then re-render and re-execute."""
        if item.paradigm != self.name:
            return [f"item belongs to paradigm {item.paradigm!r}, not {self.name!r}"]
        return verify_item(item)

    def item_budget(self, item: Item) -> int:
        """Room for the item's trace: ``TOKENS_PER_STEP`` a step and ``ANSWER_ROOM`` more.

        A 5-step procedure gets 328 tokens, a 95-step one 3,928 (at most 4,096): a model that does
        not stop no longer runs for thousands of tokens on a short procedure (ours; the paper
        gave every item 32,768).
        """
        steps = int(item.condition.get("horizon", MAX_STEPS))
        return min(self.max_new_tokens, ANSWER_ROOM + TOKENS_PER_STEP * steps)

    def design_cell(self, item: Item) -> str:
        """``main/h05/int_1-10_add_lb1``: the role, the horizon, then the dataset."""
        return f"{item.role}/h{item.condition['horizon']:02d}/{item.condition['dataset']}"

    def score_response(self, item: Item, response: str) -> ArithmeticJudgement:
        """The paper's FAA (``correct``), CAA, PAR, AP and SFB for one output.

        FAA and CAA are scored against the paper's executor's answer (the columns without a
        suffix) and against our IEEE reference (``_ieee``); see
        :func:`tracktale.stimuli.arithmetic.scoring.score_output`.
        """
        truth = item.truth
        if "paper_reference" in truth:
            paper = parse_value(truth["paper_reference"])
        else:  # an item written before the paper's executor was stored: run it now
            paper = execute_context_as_paper(item.context or "").value
        return score_output(
            response,
            paper,
            int(item.condition["horizon"]),
            ieee_reference=parse_value(truth["reference"]),
        )


def _distinct_draw(
    rng: random.Random, dataset: Dataset, horizon: int, seen: set[str]
) -> tuple[tuple[Number, Number], list[str], str]:
    for _ in range(_MAX_DRAWS):
        inputs = sample_inputs(rng, dataset)
        steps = sample_steps(rng, dataset, horizon)
        context = render_context(render_procedure(steps), *inputs)
        if context not in seen:
            seen.add(context)
            return inputs, steps, context
    raise TracktaleError(
        f"cannot draw another distinct procedure for {dataset.name} with {horizon} steps; "
        "ask for fewer per horizon"
    )


PARADIGM = ArithmeticParadigm()
"""The paradigm instance the registry hands out."""

__all__ = [
    "HUMAN_DATASETS",
    "HUMAN_HORIZONS",
    "PAPER_DATASETS",
    "PAPER_MAX_NEW_TOKENS",
    "PARADIGM",
    "ArithmeticParadigm",
]
