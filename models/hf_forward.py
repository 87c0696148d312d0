"""The tensor work of the transformers backend: prefix-shared scoring, sequences, greedy decoding.

Doing less work is the whole speed-up:

- **Prefix once.** The prefixes of a batch run once (left-padded, with explicit position ids so
  padding does not shift positions); their key/value cache is then repeated for every
  continuation, and only the short continuations run again.
- **Logits only where scored.** The transformer body (``model.base_model``) gives hidden
  states; the LM head (``get_output_embeddings``) is applied only at the positions whose next
  token is scored, in chunks, so no ``batch x length x vocabulary`` tensor is ever built.
- **Batches by length** (done by the caller) keep padding small.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

HEAD_CHUNK = 1024
"""Positions per LM-head call: bounds the ``positions x vocabulary`` logits tensor."""


@dataclass
class ForwardModel:
    """A causal LM prepared for scoring.

    Attributes:
        model: The ``*ForCausalLM`` module (eval mode).
        pad_id: Token id used for padding (never scored, always masked).
        plain_head: Whether ``head(base_model(x))`` equals ``model(x).logits``.
    """

    model: Any
    pad_id: int
    plain_head: bool = True

    def __post_init__(self) -> None:
        self.device = input_device(self.model)
        body = self.model.base_model if self.plain_head else self.model
        self.cache_arg = _cache_argument(body)

    def run(self, ids, mask, positions, cache=None, *, keep_cache: bool = True):
        """One forward pass; returns ``(hidden states or logits, cache)``.

        Args:
            ids: Token ids, ``batch x length``.
            mask: Attention mask over the cached and the new positions.
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

    def logprobs_of(self, states: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Log P(target) at each of ``states`` (hidden states, or logits without a plain head)."""
        head = self.model.get_output_embeddings()
        result = []
        for start in range(0, states.shape[0], HEAD_CHUNK):
            chunk = states[start : start + HEAD_CHUNK]
            logits = (head(chunk) if self.plain_head else chunk).float()
            wanted = targets[start : start + HEAD_CHUNK, None].to(logits.device)
            picked = logits.gather(-1, wanted).squeeze(-1)
            result.append((picked - torch.logsumexp(logits, dim=-1)).to(self.device))
        return torch.cat(result) if result else states.new_zeros(0)

    def next_token(self, states: torch.Tensor) -> torch.Tensor:
        """The greedy next token from the last position's states."""
        return self.next_logits(states).float().argmax(-1).to(self.device)

    def next_logits(self, states: torch.Tensor) -> torch.Tensor:
        """The next-token logits from the last position's states."""
        head = self.model.get_output_embeddings()
        return head(states) if self.plain_head else states


def _cache_argument(module: Any) -> str:
    # transformers 5 renamed ``past_key_values`` to ``cache`` within the 5.x series.
    parameters = inspect.signature(module.forward).parameters
    return "cache" if "cache" in parameters else "past_key_values"


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


def left_pad(sequences: Sequence[Sequence[int]], pad_id: int, device) -> tuple:
    """Left-padded ids, attention mask and position ids (0 at each row's first real token)."""
    width = max(len(row) for row in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, tokens in enumerate(sequences):
        if tokens:
            ids[row, width - len(tokens) :] = torch.tensor(tokens)
            mask[row, width - len(tokens) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids.to(device), mask.to(device), positions.to(device)


def right_pad(sequences: Sequence[Sequence[int]], pad_id: int, device) -> tuple:
    """Right-padded ids and attention mask."""
    width = max(len(row) for row in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, tokens in enumerate(sequences):
        ids[row, : len(tokens)] = torch.tensor(tokens, dtype=torch.long)
        mask[row, : len(tokens)] = 1
    return ids.to(device), mask.to(device)


def shared_length(sequences: Sequence[Sequence[int]]) -> int:
    """Length of the token prefix all sequences share, leaving each at least one own token."""
    shortest = min(len(row) for row in sequences)
    length = 0
    while length < shortest - 1 and all(row[length] == sequences[0][length] for row in sequences):
        length += 1
    return length


@torch.inference_mode()
def score_continuations(
    forward: ForwardModel, prefixes: Sequence[list[int]], continuations: Sequence[list[list[int]]]
) -> list[list[list[float]]]:
    """Per-token log-probabilities of each prefix's continuations; each prefix runs once.

    The tokens all continuations of a prefix start with (``" Later, Ann picked up the key from
    the"``) have the same context in each, so they run once, with the prefix; only the rest of
    each continuation runs on its own, on the prefix's cache.

    Args:
        forward: The prepared model.
        prefixes: Token ids of each prefix (non-empty).
        continuations: For each prefix, its continuations' token ids (each non-empty).

    Returns:
        ``result[i][j][t]``: log P(token t of continuation j | prefix i, earlier tokens).
    """
    common = [shared_length(options) for options in continuations]
    extended = [
        p + options[0][:k] for p, options, k in zip(prefixes, continuations, common, strict=True)
    ]
    ids, mask, positions = left_pad(extended, forward.pad_id, forward.device)
    states, cache = forward.run(ids, mask, positions)
    shared = _score_shared(forward, states, ids, common)
    owner = [i for i, options in enumerate(continuations) for _ in options]
    tails = [tokens[common[i] :] for i, options in enumerate(continuations) for tokens in options]
    index = torch.tensor(owner, device=forward.device)
    # The first token after the shared ones is predicted by the extended prefix's last position.
    first = forward.logprobs_of(
        states[:, -1][index], torch.tensor([tail[0] for tail in tails], device=forward.device)
    )
    rest = _score_after_prefix(forward, cache, mask, positions, index, tails)
    scores = [
        [*shared[i], value, *others]
        for i, value, others in zip(owner, first.tolist(), rest, strict=True)
    ]
    result, cursor = [], 0
    for options in continuations:
        result.append(scores[cursor : cursor + len(options)])
        cursor += len(options)
    return result


def _score_shared(forward, states, ids, common: list[int]) -> list[list[float]]:
    """Log-probabilities of the shared continuation tokens at the end of each (left-padded) row."""
    width = ids.shape[1]
    columns = torch.arange(width, device=ids.device)[None]
    counts = torch.tensor(common, device=ids.device)[:, None]
    is_shared = columns >= width - counts  # the last ``common[i]`` tokens of row i
    predicted = is_shared[:, 1:]
    values = forward.logprobs_of(states[:, :-1][predicted], ids[:, 1:][predicted]).tolist()
    return _split(values, common)


def _split(values: list[float], counts: Sequence[int]) -> list[list[float]]:
    out, cursor = [], 0
    for count in counts:
        out.append(values[cursor : cursor + count])
        cursor += count
    return out


def _score_after_prefix(forward, cache, mask, positions, index, flat) -> list[list[float]]:
    # The last token's own output predicts nothing that is scored: feed all tokens but it.
    inputs = [tokens[:-1] for tokens in flat]
    if not any(inputs):
        return [[] for _ in flat]
    # A CPU index works for cache layers on any device (models split over several GPUs too).
    cache.batch_select_indices(index.cpu())
    cont_ids, cont_mask = right_pad(inputs, forward.pad_id, forward.device)
    targets, _ = right_pad([tokens[1:] for tokens in flat], forward.pad_id, forward.device)
    start = positions[:, -1][index] + 1
    cont_positions = start[:, None] + torch.arange(cont_ids.shape[1], device=forward.device)
    full_mask = torch.cat([mask[index], cont_mask], dim=1)
    states, _ = forward.run(cont_ids, full_mask, cont_positions, cache)
    scored = cont_mask.bool()  # position t predicts token t + 1
    picked = forward.logprobs_of(states[scored], targets[scored])
    return _split(picked.tolist(), scored.sum(-1).tolist())


@torch.inference_mode()
def score_sequences(forward: ForwardModel, sequences: Sequence[list[int]]) -> list[list[float]]:
    """Log P(token t | tokens before t) for t >= 1 of each sequence (right padding)."""
    inputs = [tokens[:-1] for tokens in sequences]  # the last token predicts nothing scored
    if not any(inputs):
        return [[] for _ in sequences]
    ids, mask = right_pad(inputs, forward.pad_id, forward.device)
    targets, _ = right_pad([tokens[1:] for tokens in sequences], forward.pad_id, forward.device)
    positions = torch.arange(ids.shape[1], device=forward.device)[None].expand_as(ids)
    states, _ = forward.run(ids, mask, positions, keep_cache=False)
    scored = mask.bool()
    values = forward.logprobs_of(states[scored], targets[scored]).tolist()
    return _split(values, scored.sum(-1).tolist())


def _prefill(forward: ForwardModel, prompts: Sequence[list[int]]):
    """Run prompts whose shared start (an instruction) runs once; returns states, cache, mask."""
    shared = shared_length(prompts) if len(prompts) > 1 else 0
    ids, mask, positions = left_pad(
        [row[shared:] for row in prompts], forward.pad_id, forward.device
    )
    cache = None
    if shared:
        start = torch.tensor([prompts[0][:shared]], device=forward.device)
        _, cache = forward.run(
            start, torch.ones_like(start), torch.arange(shared, device=forward.device)[None]
        )
        cache.batch_repeat_interleave(len(prompts))
        # The shared tokens, then each prompt's own tokens left-padded: padding sits in between.
        mask = torch.cat([mask.new_ones((len(prompts), shared)), mask], dim=1)
        positions = positions + shared
    states, cache = forward.run(ids, mask, positions, cache)
    return states, cache, mask, positions[:, -1:] + 1


@torch.inference_mode()
def greedy_decode(
    forward: ForwardModel,
    prompts: Sequence[list[int]],
    max_new_tokens: int,
    stop_ids: set[int],
    finished: Callable[[int, list[int]], bool] | None = None,
    choose: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> list[list[int]]:
    """Greedy continuations of a batch of prompts, sharing one cache; stops when all rows stop.

    The tokens every prompt starts with (the task instruction) run once for the whole batch.
    A row stops at a stop token, or when ``finished(row, generated_ids)`` says so (a stop
    string, or the row's own budget). ``choose`` replaces the argmax (sampled decoding: see
    :func:`tracktale.models.sampling.row_chooser`).

    Returns:
        Each prompt's generated ids, without the stop token that ended it.
    """
    states, cache, mask, next_positions = _prefill(forward, prompts)
    generated: list[list[int]] = [[] for _ in prompts]
    done = [False] * len(prompts)
    for step in range(max_new_tokens):
        if choose is None:
            tokens = forward.next_token(states[:, -1])
        else:
            tokens = choose(forward.next_logits(states[:, -1])).to(forward.device)
        for row, token in enumerate(tokens.tolist()):
            if not done[row]:
                done[row] = token in stop_ids
                if not done[row]:
                    generated[row].append(token)
                    done[row] = finished is not None and finished(row, generated[row])
        if all(done) or step == max_new_tokens - 1:
            break
        mask = torch.cat([mask, mask.new_ones((len(prompts), 1))], dim=1)
        states, cache = forward.run(tokens[:, None], mask, next_positions, cache)
        next_positions = next_positions + 1
    return generated
