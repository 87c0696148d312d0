"""Sampled decoding (temperature, seeds per item and sample), beside the default greedy one.

The boxes paper ran ChatGPT with the API's default sampling (temperature 1), so a reproduction
"as the paper ran it" samples; a deterministic variant decodes greedily. Every sample has its
own seed, derived from the run's ``--sampling-seed``, the item and the sample's number, so an
output does not depend on which other prompts share its batch or on the order items run in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tracktale.errors import TracktaleError

if TYPE_CHECKING:
    import torch

    from tracktale.scorer import GenerationRequest


def sample_seed(base_seed: int, item_id: str, sample: int) -> int:
    """The seed of one sample of one item (a 31-bit integer, what every backend accepts)."""
    digest = hashlib.sha256(f"{base_seed}|{item_id}|{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


def check_sampling(temperature: float, num_samples: int) -> None:
    """Refuse settings that cannot be meant.

    Raises:
        TracktaleError: For a negative temperature, fewer than one sample, or several samples
            of greedy decoding (which would all be the same).
    """
    if temperature < 0:
        raise TracktaleError(f"--temperature must be 0 or more, got {temperature}")
    if num_samples < 1:
        raise TracktaleError(f"--num-samples must be at least 1, got {num_samples}")
    if num_samples > 1 and temperature == 0:
        raise TracktaleError(
            f"--num-samples {num_samples} with --temperature 0: greedy decoding gives the same "
            "output every time (give a temperature above 0)"
        )


def row_chooser(
    requests: Sequence[GenerationRequest],
) -> Callable[[torch.Tensor], torch.Tensor] | None:
    """Next-token choice for a batch: greedy rows take the argmax, sampled rows draw.

    Returns:
        ``None`` when every request is greedy (the decoder's own argmax applies); else a
        function from next-token logits (``batch x vocabulary``) to token ids, drawing each
        sampled row from ``softmax(logits / temperature)`` with its own seeded generator.
    """
    if all(request.temperature == 0 for request in requests):
        return None
    import torch

    generators: dict[int, torch.Generator] = {}

    def choose(logits: torch.Tensor) -> torch.Tensor:
        logits = logits.float()
        tokens = logits.argmax(-1)
        for row, request in enumerate(requests):
            if request.temperature == 0:
                continue
            if row not in generators:
                generators[row] = torch.Generator(device=logits.device)
                generators[row].manual_seed(request.seed or 0)
            probabilities = torch.softmax(logits[row] / request.temperature, dim=-1)
            tokens[row] = torch.multinomial(probabilities, 1, generator=generators[row])[0]
        return tokens

    return choose
