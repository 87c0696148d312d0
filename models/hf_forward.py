"""The tensor work of the transformers backend: scoring token trees, the model's probes.

Doing less work is the whole speed-up:

- **Every shared beginning once.** The sequences to score (a prefix with each continuation,
  the stories of items that open alike, whole texts) are merged into prefix trees and packed
  into rows (:mod:`tracktale.models.packing`); each row runs as one sequence whose attention
  mask lets a token see exactly its ancestors, with its depth as position id. A prefix and both
  of its continuations are one forward pass; the bad continuation sees the prefix but not the
  good one.
- **Logits only where scored.** The transformer body (``model.base_model``) gives hidden
  states; the LM head (``get_output_embeddings``) is applied only at the positions whose next
  token is scored (once per position, however many continuations branch there), in chunks, so
  no ``batch x length x vocabulary`` tensor is ever built.
- **No padding inside a row**, and rows of a batch have nearly the same length (each is filled
  up to the row budget).

Tree masks need an attention implementation that takes a custom 4D mask (``sdpa``, ``eager``);
whether the loaded model honours one is checked at load time (:func:`tree_attention_works`).
Where it does not (flash attention, flex attention, an architecture that builds its own mask),
each sequence gets a row of its own with a plain padding mask: slower, equally exact. So do
sequences longer than a sliding attention window.

Models whose causal-LM head does more than the output embedding (logit soft-capping or
scaling) are detected at load time (:func:`head_is_plain`) and scored through the full model
instead, at the cost of computing logits at every position.

**Models across devices** (``device_map="auto"``): inputs are built on the device of the input
embedding (:attr:`ForwardModel.device`), which need not be ``model.device``; accelerate's hooks
move activations from layer to layer, and what comes out of the last layer or the head is
brought back to that device before it meets the inputs again (indices, masks, targets).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from tracktale.models.packing import Path, Row

HEAD_ELEMENTS = 1 << 26
"""Logits per LM-head call (256 MiB in float32): bounds the ``positions x vocabulary`` tensor."""

TREE_MASK_FORMATS = {"sdpa": "bool", "eager": "float"}
"""Attention implementations that take a custom 4D mask, and the mask each expects (SDPA a
boolean mask, True = attend; eager an additive one, added to the attention scores)."""


@dataclass
class ForwardModel:
    """A causal LM prepared for scoring.

    Attributes:
        model: The ``*ForCausalLM`` module (eval mode).
        pad_id: Token id used for padding (never scored, always masked).
        plain_head: Whether ``head(base_model(x))`` equals ``model(x).logits``.
        tree_masks: Whether rows may hold token trees (see :func:`tree_attention_works`);
            ``None``: probe the model.
    """

    model: Any
    pad_id: int
    plain_head: bool = True
    tree_masks: bool | None = None
    mask_format: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.device = input_device(self.model)
        body = self.model.base_model if self.plain_head else self.model
        self.cache_arg = _cache_argument(body)
        implementation = getattr(self.model.config, "_attn_implementation", None) or ""
        self.mask_format = TREE_MASK_FORMATS.get(implementation)
        if self.tree_masks is None:
            self.tree_masks = self.mask_format is not None
            self.tree_masks = self.tree_masks and tree_attention_works(self)
        self.sliding_window = _sliding_window(self.model.config)

    def run(self, ids, mask, positions, cache=None, *, keep_cache: bool = True):
        """One forward pass; returns ``(hidden states or logits, cache)``.

        Args:
            ids: Token ids, ``batch x length``.
            mask: Attention mask: 2D over the cached and the new positions, or a 4D tree mask.
            positions: Position ids of the new tokens.
            cache: The key/value cache of earlier positions, extended in place.
            keep_cache: Build a cache (not needed when nothing follows).
        """
        kwargs = {self.cache_arg: cache, "use_cache": keep_cache}
        if self.plain_head:
            out = self.model.base_model(
                input_ids=ids, attention_mask=mask, position_ids=positions, **kwargs
            )
            states = out.last_hidden_state
        else:
            out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, **kwargs)
            states = out.logits
        # The last layer may sit on another GPU than the embedding: index there, not here.
        return states.to(self.device), getattr(out, self.cache_arg, None)

    def logits(self, states: torch.Tensor) -> torch.Tensor:
        """Float32 logits at ``states`` (hidden states, or logits without a plain head)."""
        head = self.model.get_output_embeddings()
        return (head(states) if self.plain_head else states).float().to(self.device)

    def logprobs_at(
        self,
        states: torch.Tensor,
        rows: torch.Tensor,
        targets: torch.Tensor,
        word_starts: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``log P(targets[k] | states[rows[k]])``; each state's logits are computed once.

        Args:
            states: Hidden states (or logits), ``positions x hidden``.
            rows: For each wanted value, the position it is read at (sorted ascending).
            targets: For each wanted value, the token whose log-probability is wanted.
            word_starts: A boolean mask over the vocabulary (the tokens that end the word
                before them, :mod:`tracktale.models.word_boundaries`); with it, also the
                log-probability that the next token is one of them, at each wanted position.

        Returns:
            The log-probabilities, and the masked ones (``None`` without a mask).
        """
        vocabulary = self.model.config.get_text_config().vocab_size
        chunk = max(1, HEAD_ELEMENTS // max(1, vocabulary))
        result = torch.empty(len(rows), device=self.device)
        ends = None if word_starts is None else torch.empty(len(rows), device=self.device)
        starts = torch.arange(0, len(states) + chunk, chunk, device=rows.device)
        bounds = torch.searchsorted(rows, starts)
        for index, start in enumerate(range(0, len(states), chunk)):
            first, last = int(bounds[index]), int(bounds[index + 1])
            if first == last:
                continue
            logits = self.logits(states[start : start + chunk])
            local = rows[first:last] - start
            picked = logits[local, targets[first:last]]
            normalizer = torch.logsumexp(logits, dim=-1)[local]
            result[first:last] = picked - normalizer
            if ends is not None and word_starts is not None:
                masked = logits[local].masked_fill(~word_starts[: logits.shape[-1]], -torch.inf)
                ends[first:last] = torch.logsumexp(masked, dim=-1) - normalizer
        return result, ends


def _cache_argument(module: Any) -> str:
    # transformers 5 renamed ``past_key_values`` to ``cache`` within the 5.x series.
    parameters = inspect.signature(module.forward).parameters
    return "cache" if "cache" in parameters else "past_key_values"


def _sliding_window(config: Any) -> int | None:
    text = config.get_text_config()
    window = getattr(text, "sliding_window", None)
    if getattr(text, "use_sliding_window", True) is False:
        return None
    return int(window) if isinstance(window, int) and window > 0 else None


def head_is_plain(model: Any) -> bool:
    """Whether the causal-LM logits are just the output embedding of the body's hidden states.

    Also ``False`` for a model that accelerate offloaded as a whole (one hook on the top
    module loads its weights): calling the body directly would bypass that hook.
    """
    if model.get_output_embeddings() is None or _offloaded_as_a_whole(model):
        return False
    ids = torch.arange(1, 6, device=input_device(model))[None] % model.config.vocab_size
    with torch.inference_mode():
        full = model(input_ids=ids).logits.float()
        hidden = model.base_model(input_ids=ids).last_hidden_state
        mine = model.get_output_embeddings()(hidden).float().to(full.device)
    return torch.allclose(full, mine, atol=1e-5, rtol=1e-4)


@torch.inference_mode()
def tree_attention_works(forward: ForwardModel) -> bool:
    """Whether a packed token tree gives the same states as its sequences run one by one.

    Two sequences share three tokens and then branch; a second, shorter row pads the batch. An
    attention implementation that ignores the custom mask lets the second branch see the first
    and fails the comparison.
    """
    vocabulary = forward.model.config.get_text_config().vocab_size
    sequences = [[1, 2, 3, 4, 5], [1, 2, 3, 6, 7, 8], [9, 10]]
    sequences = [[token % vocabulary for token in tokens] for tokens in sequences]
    tree, alone = Row(), Row()
    tree.add(0, sequences[0])
    tree.add(1, sequences[1])
    alone.add(2, sequences[2])
    try:
        ids, positions, mask = tree_inputs(forward, [tree, alone])
        states, _ = forward.run(ids, mask, positions, keep_cache=False)
    except (RuntimeError, ValueError, TypeError, IndexError):
        return False
    exact = forward.model.dtype == torch.float32
    placed = [(0, tree.slots[0]), (0, tree.slots[1]), (1, alone.slots[0])]
    for tokens, (row, slots) in zip(sequences, placed, strict=True):
        ids = torch.tensor([tokens], device=forward.device)
        positions = torch.arange(len(tokens), device=forward.device)[None]
        reference, _ = forward.run(ids, torch.ones_like(ids), positions, keep_cache=False)
        reference, mine = reference[0].float(), states[row, slots].float()
        scale = reference.abs().max().clamp(min=1e-6)
        if (mine - reference).abs().max() / scale > (1e-3 if exact else 3e-2):
            return False
    return True


def input_device(model: Any) -> torch.device:
    """Where input ids go: the input embedding's device, which need not be ``model.device``.

    An embedding that accelerate offloaded (to the CPU or the disk) has its weights on the
    ``meta`` device; its inputs go where accelerate runs it (the hook's execution device).
    """
    embedding = model.get_input_embeddings()
    device = embedding.weight.device
    if device.type != "meta":
        return device
    for module in (embedding, model):
        execution = getattr(getattr(module, "_hf_hook", None), "execution_device", None)
        if isinstance(execution, int):  # accelerate names GPUs by index
            return torch.device("cuda", execution)
        if execution is not None:
            return torch.device(execution)
    return torch.device("cpu")


def _offloaded_as_a_whole(model: Any) -> bool:
    placed = getattr(model, "hf_device_map", None) or {}
    return set(placed) == {""} and any(p.device.type == "meta" for p in model.parameters())


def to_device(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """Move a CPU tensor to ``device``; through pinned memory, without waiting, to a GPU."""
    if torch.device(device).type == "cuda" and torch.cuda.is_available():
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


def tree_inputs(forward: ForwardModel, rows: Sequence[Row], past: int = 0) -> tuple:
    """Ids, position ids and attention mask of packed rows (padded to the longest).

    With tree masks the mask is ``rows x 1 x width x (past + width)``: each slot sees its
    ancestors (and ``past`` cached positions before every row, all visible); a padding slot sees
    only itself, so no attention row is empty. Without, each row holds one sequence in order
    and the mask is the plain 2D padding mask.

    Args:
        forward: The prepared model.
        rows: The rows.
        past: Cached positions every row attends to (a shared start); positions count on
            from it.
    """
    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), forward.pad_id, dtype=torch.long)
    positions = torch.zeros((len(rows), width), dtype=torch.long)
    for index, row in enumerate(rows):
        ids[index, : len(row)] = torch.tensor(row.tokens, dtype=torch.long)
        positions[index, : len(row)] = torch.tensor(row.depths, dtype=torch.long) + past
    if not forward.tree_masks:
        mask = torch.zeros((len(rows), past + width), dtype=torch.long)
        mask[:, :past] = 1
        for index, row in enumerate(rows):
            mask[index, past : past + len(row)] = 1
        return (
            to_device(ids, forward.device),
            to_device(positions, forward.device),
            to_device(mask, forward.device),
        )
    sees = np.zeros((len(rows), width, past + width), dtype=bool)
    sees[:, :, :past] = True
    diagonal = np.arange(width)
    sees[:, diagonal, past + diagonal] = True  # padding slots see themselves
    for index, row in enumerate(rows):
        # A slot sees what its parent sees, and itself; parents come first, depth by depth.
        depths, parents = np.asarray(row.depths), np.asarray(row.parents)
        for depth in range(1, int(depths.max()) + 1):
            children = np.flatnonzero(depths == depth)
            sees[index, children, past:] |= sees[index, parents[children], past:]
    mask = to_device(torch.from_numpy(sees[:, None]), forward.device)
    return (
        to_device(ids, forward.device),
        to_device(positions, forward.device),
        _mask_for(forward, mask),
    )


def _mask_for(forward: ForwardModel, sees: torch.Tensor) -> torch.Tensor:
    if forward.mask_format == "bool":
        return sees
    dtype = forward.model.dtype
    return torch.zeros(sees.shape, dtype=dtype, device=sees.device).masked_fill_(
        ~sees, torch.finfo(dtype).min
    )


def score_rows(
    forward: ForwardModel, rows: Sequence[Row], paths: Sequence[Path]
) -> list[list[tuple[int, list[float]]]]:
    """Per-token log-probabilities of every path packed in ``rows``, in one forward pass.

    Args:
        forward: The prepared model.
        rows: Rows from :func:`tracktale.models.packing.pack` over ``paths``.
        paths: The paths (rows refer to them by index).

    Returns:
        For each row, ``(path index, log P of each continuation token)`` of its paths.
    """
    scored = score_rows_with_word_ends(forward, rows, paths, None)
    return [[(index, values) for index, values, _ in row] for row in scored]


@torch.inference_mode()
def score_rows_with_word_ends(
    forward: ForwardModel,
    rows: Sequence[Row],
    paths: Sequence[Path],
    word_starts: torch.Tensor | None,
) -> list[list[tuple[int, list[float], list[float]]]]:
    """:func:`score_rows`, and before each continuation token the log-probability of a word end.

    Args:
        forward: The prepared model.
        rows: Rows from :func:`tracktale.models.packing.pack` over ``paths``.
        paths: The paths (rows refer to them by index).
        word_starts: Boolean mask over the vocabulary (``None``: no word ends, empty lists).

    Returns:
        For each row, ``(path index, log P of each continuation token, log P that the token at
        that position is in ``word_starts``)`` of its paths.
    """
    ids, positions, mask = tree_inputs(forward, rows)
    states, _ = forward.run(ids, mask, positions, keep_cache=False)
    width = ids.shape[1]
    flat: list[int] = []
    targets: list[int] = []
    counts: list[int] = []
    for index, row in enumerate(rows):
        for path_index, slots in zip(row.paths, row.slots, strict=True):
            path = paths[path_index]
            # The slot of token t predicts token t + 1: the last context token predicts the first
            # continuation token.
            reading = slots[len(path.context) - 1 :]
            flat += [index * width + slot for slot in reading]
            targets += path.continuation
            counts.append(len(reading))
    where = torch.tensor(flat)
    unique, inverse = torch.unique(where, sorted=True, return_inverse=True)
    order = torch.argsort(inverse, stable=True)
    picked, ends = forward.logprobs_at(
        states.reshape(-1, states.shape[-1])[unique.to(forward.device)],
        inverse[order].to(forward.device),
        torch.tensor(targets)[order].to(forward.device),
        None if word_starts is None else word_starts.to(forward.device),
    )
    values_list = _unsort(picked, order)
    ends_list = _unsort(ends, order) if ends is not None else []
    result, cursor = [], 0
    paths_iter = iter(counts)
    for row in rows:
        per_row = []
        for path_index in row.paths:
            count = next(paths_iter)
            span = slice(cursor, cursor + count)
            per_row.append((path_index, values_list[span], ends_list[span]))
            cursor += count
        result.append(per_row)
    return result


def _unsort(values: torch.Tensor, order: torch.Tensor) -> list[float]:
    out = torch.empty(len(values))
    out[order] = values.cpu()
    return out.tolist()
