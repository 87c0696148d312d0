"""Batch sizes from free GPU memory: how many rows (or prompts) one forward pass may take.

With ``--batch-size`` left out (``auto``), a GPU batch holds as many rows as half of the
device's free memory fits by the estimate below; on a CPU, where memory is plentiful and
larger batches buy nothing, it holds :data:`CPU_BATCH`. The estimate is deliberately
generous (it counts the float32 attention scores an attention kernel may materialise): running
out of memory anyway halves the batch for the rest of the run, as with a fixed batch size.
"""

from __future__ import annotations

from typing import Any

import torch

CPU_BATCH = 16
"""Rows (or prompts) per forward pass on a CPU when the batch size is automatic."""

MAX_BATCH = 1024
"""The largest automatic batch."""

FREE_FRACTION = 0.5
"""Share of the free device memory one batch's activations may take."""


def free_bytes(device: torch.device | str) -> int | None:
    """Free memory of a CUDA device in bytes; ``None`` for any other device."""
    device = torch.device(device)
    if device.type != "cuda" or not torch.cuda.is_available():
        return None
    free, _ = torch.cuda.mem_get_info(device)
    return int(free)


def _dims(config: Any) -> dict[str, int]:
    text = config.get_text_config()
    hidden = int(text.hidden_size)
    heads = int(text.num_attention_heads)
    head_dim = int(getattr(text, "head_dim", None) or hidden // heads)
    return {
        "hidden": hidden,
        "heads": heads,
        "kv_width": int(getattr(text, "num_key_value_heads", None) or heads) * head_dim,
        "intermediate": int(getattr(text, "intermediate_size", None) or 4 * hidden),
        "layers": int(text.num_hidden_layers),
    }


def row_bytes(config: Any, tokens: int, dtype_bytes: int, *, attended: int | None = None) -> int:
    """Activation bytes of one row of ``tokens`` in a forward pass without a kept cache.

    Args:
        config: The model's config.
        tokens: The row's tokens.
        dtype_bytes: Bytes per element of the compute dtype.
        attended: Positions each token may attend to (default ``tokens``).
    """
    d = _dims(config)
    attended = attended or tokens
    # Within one layer: the residual stream and its normed copy, the attention projections and
    # output, the MLP's up, gate and activated tensors; attention scores in float32 (and the
    # mask) where the kernel materialises them.
    per_token = 4 * d["hidden"] + d["hidden"] + 2 * d["kv_width"] + 3 * d["intermediate"]
    scores = d["heads"] * tokens * attended * 4 * 2 + tokens * attended
    return tokens * per_token * dtype_bytes + scores


def cache_bytes(config: Any, positions: int, dtype_bytes: int) -> int:
    """Bytes of one row's key/value cache over ``positions``."""
    d = _dims(config)
    return d["layers"] * 2 * d["kv_width"] * positions * dtype_bytes


def fitting_batch(free: int | None, per_row: int) -> int:
    """Rows that fit in :data:`FREE_FRACTION` of ``free`` bytes (``CPU_BATCH`` without a GPU)."""
    if free is None:
        return CPU_BATCH
    return max(1, min(MAX_BATCH, int(free * FREE_FRACTION) // max(1, per_row)))
