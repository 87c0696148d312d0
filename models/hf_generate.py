"""Batched decoding for the transformers backend.

What a loop of ``model.generate()`` calls does again for every prompt is done once here:

- **The shared start once per call.** Every explicit prompt of a paradigm begins with the same
  instruction (and, with a chat template, the same header). Its key/value cache is computed
  once for all prompts of a call (:func:`run_shared_start`) and copied into every batch.
- **One cache, written in place.** Where transformers has a static cache for the architecture,
  the batch decodes into one preallocated cache; a growing cache would copy every key and value
  at every step (on a CPU that copy cost more than the step itself).
- **Logits only at the last position**, and only the rows' last states go through the head.
- **Stop early.** A row stops at a stop token, its own budget or a stop string
  (``finished``); the batch stops as soon as every row has.
- **Say how far it is.** Every :data:`TOKEN_BLOCK` tokens the batch reports the share of its
  budget used (:mod:`tracktale.models.progress`): a long generation moves the bar as it goes.

The next token is chosen by ``pick`` (greedy by default): a sampling option plugs in there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from tracktale.models import packing, progress
from tracktale.models.hf_forward import ForwardModel, to_device, tree_inputs

TOKEN_BLOCK = 32
"""Generated tokens between two progress reports of a batch (:func:`progress.batch_share`)."""

Pick = Callable[[torch.Tensor], torch.Tensor]
"""Chooses each row's next token from float32 logits (``rows x vocabulary`` -> ``rows``)."""


def greedy(logits: torch.Tensor) -> torch.Tensor:
    """The most probable token of each row (the first one on a tie, as ``generate()``)."""
    return logits.argmax(-1)


@dataclass(frozen=True)
class SharedStart:
    """The tokens every prompt of a call starts with, and their keys and values (one row).

    Attributes:
        tokens: The shared tokens.
        layers: Per layer, the keys and values of those tokens (batch of one).
    """

    tokens: tuple[int, ...]
    layers: tuple[tuple[torch.Tensor, torch.Tensor], ...]


def shared_length(sequences: Sequence[Sequence[int]]) -> int:
    """Length of the token prefix all sequences share, leaving each at least one own token."""
    shortest = min(len(row) for row in sequences)
    length = 0
    while length < shortest - 1 and all(row[length] == sequences[0][length] for row in sequences):
        length += 1
    return length


@torch.inference_mode()
def run_shared_start(forward: ForwardModel, prompts: Sequence[list[int]]) -> SharedStart | None:
    """Run the start all prompts share once; ``None`` when they share nothing."""
    length = shared_length(prompts) if len(prompts) > 1 else 0
    if forward.sliding_window is not None and length >= forward.sliding_window:
        length = 0  # a sliding layer would keep only the window's end of it
    if not length:
        return None
    tokens = list(prompts[0][:length])
    ids = to_device(torch.tensor([tokens]), forward.device)
    _, cache = forward.run(ids, torch.ones_like(ids), torch.arange(length, device=ids.device)[None])
    return SharedStart(tuple(tokens), tuple((keys, values) for keys, values, *_ in cache))


def _new_cache(forward: ForwardModel, length: int) -> Any:
    """A static cache of ``length`` positions where transformers has one for the model."""
    from transformers import DynamicCache, StaticCache

    config = forward.model.config
    if getattr(forward.model, "_can_compile_fullgraph", False):
        return StaticCache(config=config, max_cache_len=length)
    return DynamicCache(config=config)


def _prefill(forward: ForwardModel, prompts, start: SharedStart | None, budget: int):
    """Run the prompts after their shared start; returns last states, cache, mask, positions.

    With tree masks the prompts' own tokens are packed into token trees (prompts that tell the
    same story opening run it once) and each prompt's keys and values are then gathered into
    the decoding cache; otherwise they run left-padded.
    """
    longest = max(len(prompt) for prompt in prompts)
    window = forward.sliding_window
    if forward.tree_masks and (window is None or longest + budget <= window):
        return _prefill_trees(forward, prompts, start, budget)
    return _prefill_padded(forward, prompts, start, budget)


def _start_cache(forward: ForwardModel, start: SharedStart | None, rows: int):
    """A growing cache holding the shared start for ``rows`` rows."""
    from transformers import DynamicCache

    cache = DynamicCache(config=forward.model.config)
    for layer, (keys, values) in enumerate(start.layers if start else ()):
        cache.update(keys.expand(rows, -1, -1, -1), values.expand(rows, -1, -1, -1), layer)
    return cache


def _prefill_trees(forward: ForwardModel, prompts, start: SharedStart | None, budget: int):
    shared = len(start.tokens) if start else 0
    own = [prompt[shared:] for prompt in prompts]
    # Rows no longer than the longest prompt: the batch is padded to its longest row, so two
    # short prompts may share a row only where they fit beside each other within that width.
    rows = packing.pack(own, budget=max(len(tokens) for tokens in own))
    ids, positions, tree_mask = tree_inputs(forward, rows, past=shared)
    states, tree_cache = forward.run(
        ids, tree_mask, positions, _start_cache(forward, start, len(rows))
    )
    width = max(len(tokens) for tokens in own)
    row_of = torch.zeros(len(own), dtype=torch.long)
    # Cache columns of each prompt, left-padded: the shared start, padding (pointing at column
    # 0, never seen), then its own tokens' slots in the tree.
    columns = torch.zeros((len(own), shared + width), dtype=torch.long)
    columns[:, :shared] = torch.arange(shared)
    last = torch.zeros(len(own), dtype=torch.long)
    for index, row in enumerate(rows):
        for prompt, slots in zip(row.paths, row.slots, strict=True):
            row_of[prompt] = index
            columns[prompt, shared + width - len(slots) :] = shared + torch.tensor(slots)
            last[prompt] = slots[-1]
    cache = _new_cache(forward, shared + width + budget)
    for layer, (keys, values, *_) in enumerate(tree_cache):
        where = (row_of[:, None].to(keys.device), slice(None), columns.to(keys.device))
        # Advanced indices on either side of a slice put their dimensions first: B x C x H x D.
        cache.update(keys[where].transpose(1, 2), values[where].transpose(1, 2), layer)
    mask = torch.ones((len(own), shared + width + budget), dtype=torch.long)
    for prompt, tokens in enumerate(own):
        mask[prompt, shared : shared + width - len(tokens)] = 0
    lengths = torch.tensor([shared + len(tokens) for tokens in own])
    device = forward.device
    last_states = states[row_of.to(device), last.to(device)]
    return last_states, cache, to_device(mask, device), to_device(lengths[:, None], device)


def _prefill_padded(forward: ForwardModel, prompts, start: SharedStart | None, budget: int):
    shared = len(start.tokens) if start else 0
    own = [prompt[shared:] for prompt in prompts]
    width = max(len(tokens) for tokens in own)
    ids = torch.full((len(own), width), forward.pad_id, dtype=torch.long)
    mask = torch.zeros((len(own), shared + width + budget), dtype=torch.long)
    mask[:, :shared] = 1
    mask[:, shared + width :] = 1  # generated tokens; causality hides those not yet written
    lengths = torch.tensor([len(tokens) for tokens in own])
    for row, tokens in enumerate(own):
        ids[row, width - len(tokens) :] = torch.tensor(tokens, dtype=torch.long)
        mask[row, shared + width - len(tokens) : shared + width] = 1
    positions = (torch.arange(width)[None] - (width - lengths)[:, None]).clamp(min=0) + shared
    cache = _new_cache(forward, shared + width + budget)
    for layer, (keys, values) in enumerate(start.layers if start else ()):
        cache.update(keys.expand(len(own), -1, -1, -1), values.expand(len(own), -1, -1, -1), layer)
    ids, mask, positions = (to_device(t, forward.device) for t in (ids, mask, positions))
    states, cache = forward.run(ids, mask[:, : shared + width], positions, cache)
    return states[:, -1], cache, mask, positions[:, -1:] + 1


@torch.inference_mode()
def decode(
    forward: ForwardModel,
    prompts: Sequence[list[int]],
    max_new_tokens: int,
    stop_ids: set[int],
    finished: Callable[[int, list[int]], bool] | None = None,
    *,
    pick: Pick = greedy,
    start: SharedStart | None = None,
) -> list[list[int]]:
    """Continuations of a batch of prompts, sharing one cache; stops when all rows stop.

    Args:
        forward: The prepared model.
        prompts: Each prompt's token ids; all begin with ``start.tokens`` when ``start`` is
            given.
        max_new_tokens: The largest budget of the batch.
        stop_ids: Tokens that end a row (not part of its output).
        finished: ``finished(row, generated_ids)``: whether a row is done (its own budget, or
            a stop string).
        pick: Chooses the next tokens from the logits (greedy by default).
        start: The prompts' shared start, already run (:func:`run_shared_start`).

    Returns:
        Each prompt's generated ids, without the stop token that ended it.
    """
    last, cache, mask, next_positions = _prefill(forward, prompts, start, max_new_tokens)
    length = mask.shape[1] - max_new_tokens
    generated: list[list[int]] = [[] for _ in prompts]
    done = [False] * len(prompts)
    for step in range(max_new_tokens):
        tokens = pick(forward.logits(last))
        for row, token in enumerate(tokens.tolist()):
            if not done[row]:
                done[row] = token in stop_ids
                if not done[row]:
                    generated[row].append(token)
                    done[row] = finished is not None and finished(row, generated[row])
        if all(done) or step == max_new_tokens - 1:
            break
        if (step + 1) % TOKEN_BLOCK == 0:
            # A long generation moves the bar per block of tokens, not only when it ends.
            progress.batch_share((step + 1) / max_new_tokens)
        length += 1
        states, cache = forward.run(tokens[:, None], mask[:, :length], next_positions, cache)
        last = states[:, -1]
        next_positions = next_positions + 1
    return generated
