"""The Hugging Face transformers backend: any causal LM, from a hub id or a local folder.

Hub ids, local folders and revisions all load through ``from_pretrained`` (the revision pinned
to its commit first, see :mod:`tracktale.models.hub`), with PyTorch's scaled-dot-product
attention (SDPA) where the architecture has it. Scoring requests become token trees packed into
rows (:mod:`tracktale.models.packing`), run by :mod:`tracktale.models.hf_forward`; generation is
batched decoding (:mod:`tracktale.models.hf_generate`). A batch holds ``batch_size`` rows (or
prompts); left automatic, as many as half the free GPU memory fits, 16 on a CPU
(:mod:`tracktale.models.memory`). When a batch runs out of memory, the batch size is halved for
the rest of the run and the scorer says so; at batch size 1 it gives up with one line.

A model larger than one GPU is loaded with ``device_map="auto"`` (accelerate): with ``device``
``auto`` on a machine with several GPUs, or whenever ``max_memory`` gives per-device budgets
(:mod:`tracktale.models.devices`). The scoring code is the same: inputs go to the device of the
input embedding and every result is brought back there, wherever the last layers sit.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import platform
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

import tracktale
from tracktale.errors import TracktaleError
from tracktale.models import (
    gguf,
    hf_forward,
    hf_generate,
    memory,
    packing,
    progress,
    sampling,
    word_boundaries,
)
from tracktale.models.devices import format_max_memory, parse_max_memory
from tracktale.models.hub import ResolvedModel, prepare, resolve_model
from tracktale.models.packing import Path
from tracktale.models.tokens import (
    TextEncoder,
    cut_at_stop,
    has_chat_template,
    resolve_bos,
    tokenizer_adds_bos,
)
from tracktale.scorer import (
    ChoiceRequest,
    Generation,
    GenerationRequest,
    ModelInfo,
    Scorer,
    SequenceRequest,
    TokenScores,
)

logger = logging.getLogger("tracktale.models")

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

GENERATION_ROOM = 256
"""Cache positions an automatic generation batch keeps free for the answer (and a chat header)."""


class HFScorer(Scorer):
    """A transformers causal LM that answers the :class:`~tracktale.scorer.Scorer` requests.

    Args:
        model_id: Hub id or local folder.
        revision: Branch, tag or commit of a hub model (``step1000``); ``None``: default branch.
        dtype: ``float32`` (default; exact enough for equality checks), ``bfloat16`` or
            ``float16`` (for GPUs).
        device: ``auto`` (a GPU when there is one, else the CPU), ``cpu``, ``cuda``, ``cuda:N``.
        batch_size: Packed rows (or prompts) per forward pass; ``None``: from the free memory
            of a GPU, 16 on a CPU. Halved on out-of-memory.
        bos: BOS policy, see :mod:`tracktale.models.tokens`.
        notify: Called with one line when the scorer changes something on its own (batch size).
        max_memory: Per-device budgets (``{0: "70GiB", 1: "70GiB"}`` or ``"0=70GiB,1=70GiB"``);
            loads with ``device_map="auto"`` across them (``device`` must be ``auto``).
        offload_folder: Where accelerate may put layers that fit in no budget (slow; for a
            model that does not fit at all).
        gguf_file: A GGUF file inside the folder ``model_id`` (a ``.gguf`` model id or the
            default model's name needs none); converted once, see :mod:`tracktale.models.gguf`.
    """

    name = "hf"

    def __init__(
        self,
        model_id: str,
        *,
        revision: str | None = None,
        dtype: str = "float32",
        device: str = "auto",
        batch_size: int | None = None,
        bos: str = "auto",
        notify: Callable[[str], None] | None = None,
        max_memory: Mapping[int | str, str] | str | None = None,
        offload_folder: str | None = None,
        gguf_file: str | None = None,
    ) -> None:
        if dtype not in DTYPES:
            raise TracktaleError(f"--dtype: {dtype!r} is not one of {', '.join(DTYPES)}")
        if batch_size is not None and batch_size < 1:
            raise TracktaleError(f"--batch-size must be at least 1, got {batch_size}")
        self.batch_size = batch_size
        self.row_tokens = packing.ROW_TOKENS
        self.notify = notify or logger.warning
        self.max_memory = parse_max_memory(max_memory)
        self.device_map = _device_map(device, self.max_memory)
        model_id = gguf.canonical_model_id(model_id)  # "default" is stored under one id
        resolved = resolve_model(model_id, revision, gguf_file)
        resolved, self.provenance = prepare(resolved, self.notify)
        placement: dict[str, Any] = {"device_map": self.device_map}
        if self.max_memory is not None:
            placement["max_memory"] = dict(self.max_memory)  # accelerate rewrites it in place
        if offload_folder is not None:
            placement["offload_folder"] = str(offload_folder)
        self.tokenizer, self.model = _load(resolved, DTYPES[dtype], placement)
        self.encoder = TextEncoder(self.tokenizer, resolve_bos(self.tokenizer, bos, model_id))
        self.forward = hf_forward.ForwardModel(
            self.model, _pad_id(self.tokenizer), hf_forward.head_is_plain(self.model)
        )
        self.stop_ids = _stop_ids(self.model, self.tokenizer)
        self.info = ModelInfo(
            model_id=model_id,
            revision=revision,
            resolved_sha=resolved.resolved_sha,
            backend=self.name,
            dtype=dtype,
            device=_device_name(self.model),
            bos_policy="add" if self.encoder.add_bos else "none",
            details=self._details(bos),
        )

    @staticmethod
    def check(model_id: str, revision: str | None, gguf_file: str | None = None) -> None:
        """Check that the model and revision exist (locally or on the hub) without loading.

        Raises:
            TracktaleError: For an unknown model or revision, or no network and no cache.
        """
        resolve_model(model_id, revision, gguf_file)

    def _details(self, bos: str) -> dict[str, Any]:
        import tokenizers
        import transformers

        return {
            "n_parameters": sum(p.numel() for p in self.model.parameters()),
            "has_chat_template": has_chat_template(self.tokenizer),
            "bos_requested": bos,
            "model_class": type(self.model).__name__,
            "attn_implementation": getattr(self.model.config, "_attn_implementation", None),
            "lm_head_shortcut": self.forward.plain_head,
            "tree_attention": self.forward.tree_masks,
            "device_map": self.device_map,
            "max_memory": format_max_memory(self.max_memory),
            "max_context": _max_context(self.model),
            "torch_version": torch.__version__,
            "transformers_version": transformers.__version__,
            "tokenizers_version": tokenizers.__version__,
            "tracktale_version": tracktale.__version__,
            "python_version": platform.python_version(),
            **self.provenance,
        }

    def conditional_score(self, requests: Sequence[ChoiceRequest]) -> list[list[TokenScores]]:
        """Per-token log-probabilities of each continuation; every shared beginning runs once."""
        encoded = [self.encoder.choice(r.prefix, r.continuations) for r in requests]
        paths, groups = [], []
        for group, e in enumerate(encoded):
            for continuation in e.continuations:
                paths.append(Path(tuple(e.prefix), tuple(continuation)))
                groups.append(group)
        values = iter(self._score_paths(paths, groups))
        return [
            [
                self._token_scores(ids, next(values), merged=merged)
                for ids, merged in zip(e.continuations, e.merged, strict=True)
            ]
            for e in encoded
        ]

    def sequence_score(self, requests: Sequence[SequenceRequest]) -> list[TokenScores]:
        """Per-token log-probabilities of whole texts, with each token's character offset.

        A request with ``word_ends`` is scored after the document start
        (:func:`~tracktale.models.word_boundaries.document_start`) and gets the probability of a
        word end at each position, read off the same forward pass.
        """
        wants_ends = any(r.word_ends for r in requests)
        start = self.document_start if wants_ends else None
        encoded = [
            self.encoder.text_after(r.text, start) if r.word_ends else self.encoder.text(r.text)
            for r in requests
        ]
        # A text of one token without a start token has nothing to score.
        scorable = [i for i, e in enumerate(encoded) if len(e.ids) > 1]
        paths = []
        for i in scorable:
            ids = encoded[i].ids
            # A placeholder target after the last token makes its position read too: the
            # word-end probability after the text. Its own log-probability is dropped.
            extra = (ids[-1],) if requests[i].word_ends else ()
            paths.append(Path(tuple(ids[:1]), tuple(ids[1:]) + extra))
        mask = self._word_start_tensor() if wants_ends else None
        scores: list[tuple[list[float], list[float]]] = [([], []) for _ in encoded]
        for index, scored in zip(scorable, self._score_paths_ends(paths, mask), strict=True):
            scores[index] = scored
        results = []
        for request, e, (values, ends) in zip(requests, encoded, scores, strict=True):
            # Without a start token the text's first token has no context and is not scored.
            offsets = tuple(first for first, _ in e.offsets[e.n_unscored :])
            scored_ids = e.ids[1:]
            if not request.word_ends:
                results.append(self._token_scores(scored_ids, values, offsets=offsets))
                continue
            starts = self._word_start_list()
            results.append(
                dataclasses.replace(
                    self._token_scores(scored_ids, values[: len(scored_ids)], offsets=offsets),
                    word_ends=tuple(ends),
                    word_starts=tuple(starts[token] for token in scored_ids),
                    start_token=None if e.n_unscored else self._token_name(e.ids[0]),
                )
            )
        return results

    @property
    def document_start(self) -> int | None:
        """The token texts are scored after for word surprisal (``None``: none)."""
        if not hasattr(self, "_document_start"):
            adds = tokenizer_adds_bos(self.tokenizer)
            requested = str(self.info.details.get("bos_requested", "auto"))
            self._document_start = word_boundaries.document_start(self.tokenizer, requested, adds)
        return self._document_start

    def _word_start_list(self) -> list[bool]:
        if not hasattr(self, "_word_starts"):
            size = self.model.config.get_text_config().vocab_size
            self._word_starts = word_boundaries.word_start_mask(self.tokenizer, size)
        return self._word_starts

    def _word_start_tensor(self) -> torch.Tensor:
        return torch.tensor(self._word_start_list(), dtype=torch.bool)

    def _token_name(self, token: int) -> str:
        return str(self.tokenizer.convert_ids_to_tokens(token))

    def _score_paths(self, paths: list[Path], groups: list[int] | None = None) -> list[list[float]]:
        """Log-probabilities of each path's continuation, from packed token trees."""
        if not paths:
            return []
        rows = self._pack(paths, groups)
        per_row = self._batched(
            [len(row) for row in rows],
            lambda batch: hf_forward.score_rows(self.forward, [rows[i] for i in batch], paths),
            kind="scoring",
        )
        values: list[list[float]] = [[] for _ in paths]
        for row in per_row:
            for index, scores in row:
                values[index] = scores
        return values

    def _score_paths_ends(
        self, paths: list[Path], word_starts: torch.Tensor | None
    ) -> list[tuple[list[float], list[float]]]:
        """:meth:`_score_paths` with the word-end log-probability at each read position."""
        if word_starts is None:
            return [(values, []) for values in self._score_paths(paths)]
        if not paths:
            return []
        rows = self._pack(paths, None)
        per_row = self._batched(
            [len(row) for row in rows],
            lambda batch: hf_forward.score_rows_with_word_ends(
                self.forward, [rows[i] for i in batch], paths, word_starts
            ),
            kind="scoring",
        )
        values: list[tuple[list[float], list[float]]] = [([], []) for _ in paths]
        for row in per_row:
            for index, scores, ends in row:
                values[index] = (scores, ends)
        return values

    def _pack(self, paths: list[Path], groups: list[int] | None) -> list[packing.Row]:
        window = self.forward.sliding_window
        share = bool(self.forward.tree_masks) and (
            window is None or max(len(p.fed) for p in paths) <= window
        )
        return packing.pack([p.fed for p in paths], groups, budget=self.row_tokens, share=share)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """Greedy (or sampled) completions; ``messages`` go through the chat template."""
        return [generation.text for generation in self.generate_detailed(requests)]

    def generate_detailed(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        """Completions with why each stopped (``length``: its budget ran out; else ``stop``).

        A budget past the model's context (its ``max_position_embeddings``) is cut to what the
        context leaves after the prompt. Rows with a temperature above 0 are sampled, each with
        its own seeded generator (:mod:`tracktale.models.sampling`).
        """
        prompts = []
        for request in requests:
            if request.messages is not None and not has_chat_template(self.tokenizer):
                raise TracktaleError(
                    f"the tokenizer of {self.info.model_id} has no chat template, so chat "
                    "messages cannot be rendered (use --prompt-format plain)"
                )
            prompts.append(
                self.encoder.prompt(request.prompt, request.messages, request.messages is not None)
            )
        if not prompts:
            return []
        context = self.info.details.get("max_context")
        requests = [
            r
            if not context or r.max_new_tokens + len(p) <= context
            else dataclasses.replace(r, max_new_tokens=max(1, context - len(p)))
            for r, p in zip(requests, prompts, strict=True)
        ]
        # The instruction every prompt starts with runs once for the whole call.
        start = hf_generate.run_shared_start(self.forward, prompts)

        def run(batch: list[int]) -> list[list[int]]:
            budget = max(requests[i].max_new_tokens for i in batch)
            chosen = [requests[i] for i in batch]
            return hf_generate.decode(
                self.forward,
                [prompts[i] for i in batch],
                budget,
                self.stop_ids,
                self._finished_check(chosen),
                pick=self._picker(chosen),
                start=start,
            )

        outputs = self._batched([len(p) for p in prompts], run, kind="generation")
        generations = []
        for request, ids in zip(requests, outputs, strict=True):
            full = self.tokenizer.decode(ids[: request.max_new_tokens], skip_special_tokens=True)
            text = cut_at_stop(full, request.stop)
            ran_out = len(ids) >= request.max_new_tokens and text == full
            generations.append(Generation(text, finish_reason="length" if ran_out else "stop"))
        return generations

    def _picker(self, requests: Sequence[GenerationRequest]) -> hf_generate.Pick:
        """How the next token of a batch is chosen: the argmax, or each sampled row's own draw."""
        return sampling.row_chooser(requests) or hf_generate.greedy

    def _finished_check(
        self, requests: Sequence[GenerationRequest]
    ) -> Callable[[int, list[int]], bool]:
        """Whether a row of a batch is done: its own budget spent, or a stop string generated."""
        # A stop string can only have appeared within the last few tokens: decode just those.
        tails = [max((len(stop) for stop in r.stop), default=0) + 4 for r in requests]

        def finished(row: int, ids: list[int]) -> bool:
            request = requests[row]
            if len(ids) >= request.max_new_tokens:
                return True
            if not request.stop:
                return False
            tail = self.tokenizer.decode(ids[-tails[row] :], skip_special_tokens=True)
            if not any(stop in tail for stop in request.stop):
                return False
            # A newline before the first word ends nothing (cut_at_stop): check the whole text.
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            return cut_at_stop(text, request.stop) != text

        return finished

    def close(self) -> None:
        """Free the model's memory (the scorer cannot be used afterwards)."""
        del self.forward, self.model
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def _token_scores(self, ids, values, *, merged=False, offsets=()) -> TokenScores:
        return TokenScores(
            tokens=self.encoder.token_strings(ids),
            logprobs=tuple(values),
            offsets=tuple(offsets),
            ids=tuple(ids),
            boundary_merged=merged,
        )

    def _batched(
        self, lengths: Sequence[int], run: Callable[[list[int]], list], *, kind: str
    ) -> list:
        """Run ``run`` over batches of similar length, longest first; back off on OOM."""
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        results: list[Any] = [None] * len(lengths)
        cursor = 0
        while cursor < len(order):
            size = self._batch_for(kind, lengths[order[cursor]])
            batch = order[cursor : cursor + size]
            try:
                with progress.in_batch(cursor, len(batch), len(order)):
                    outputs = run(batch)
            except Exception as error:  # noqa: BLE001 - only out-of-memory is handled
                if not is_out_of_memory(error):
                    raise
                self._back_off(lengths[batch[0]], size)
                continue
            for index, output in zip(batch, outputs, strict=True):
                results[index] = output
            cursor += len(batch)
            progress.batch_done(cursor, len(order))  # the progress bar moves per batch
        return results

    def _batch_for(self, kind: str, length: int) -> int:
        """The batch size: the set (or backed-off) one, else what free memory fits."""
        if self.batch_size is not None:
            return self.batch_size
        config, dtype_bytes = self.model.config, self.model.dtype.itemsize
        if kind == "generation":
            # The prompt's own tokens are prefilled; the cache holds the prompt and the answer.
            per_row = memory.row_bytes(config, length, dtype_bytes) + memory.cache_bytes(
                config, length + GENERATION_ROOM, dtype_bytes
            )
        else:
            per_row = memory.row_bytes(config, length, dtype_bytes)
        return memory.fitting_batch(memory.free_bytes(self.forward.device), per_row)

    def _back_off(self, length: int, size: int) -> None:
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        if size == 1:
            raise TracktaleError(
                f"out of memory on {self.info.device} at batch size 1 ({length} tokens) with "
                f"{self.info.model_id}: use a smaller --dtype, a bigger device or shorter items"
            )
        smaller = max(1, size // 2)
        self.notify(
            f"out of memory on {self.info.device} at batch size {size}; "
            f"continuing with batch size {smaller}"
        )
        self.batch_size = smaller


def is_out_of_memory(error: BaseException) -> bool:
    """Whether an exception is torch running out of (GPU or CPU) memory."""
    if isinstance(error, torch.OutOfMemoryError):
        return True
    message = str(error)
    return isinstance(error, RuntimeError) and (
        "out of memory" in message or "can't allocate memory" in message
    )


def _device_map(device: str, max_memory: Mapping[int | str, str] | None = None) -> str:
    if max_memory is not None:
        if device != "auto":
            raise TracktaleError(
                f"--max-memory places the model across devices: use it with --device auto, "
                f"not --device {device}"
            )
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        for index in (key for key in max_memory if isinstance(key, int)):
            if index >= gpus:
                raise TracktaleError(
                    f"--max-memory: there is no GPU {index} here ({gpus} CUDA devices)"
                )
        return "auto"
    if device == "auto":
        if not torch.cuda.is_available():
            return "cpu"
        return "auto" if torch.cuda.device_count() > 1 else "cuda:0"
    if device == "cuda":
        device = "cuda:0"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise TracktaleError(f"--device {device}: no CUDA device is available here")
    if device != "cpu" and not device.startswith("cuda:"):
        raise TracktaleError(f"--device: {device!r} is not auto, cpu, cuda or cuda:N")
    return device


def _device_name(model: Any) -> str:
    placed = getattr(model, "hf_device_map", None)  # accelerate's placement, offloading included
    if placed:
        devices = sorted({_named(device) for device in placed.values()})
    else:
        devices = sorted({str(p.device) for p in model.parameters()})
    return devices[0] if len(devices) == 1 else "auto:" + ",".join(devices)


def _named(device: Any) -> str:
    return f"cuda:{device}" if isinstance(device, int) else str(device)


def _load(
    resolved: ResolvedModel, dtype: torch.dtype, placement: dict[str, Any]
) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    where = resolved.model_id + (f"@{resolved.revision}" if resolved.revision else "")
    source = resolved.load_path or resolved.model_id
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, revision=resolved.load_revision)
        model = AutoModelForCausalLM.from_pretrained(
            source, revision=resolved.load_revision, dtype=dtype, **placement
        )
    except Exception as error:  # noqa: BLE001 - every loading failure becomes one line
        if is_out_of_memory(error):
            raise TracktaleError(
                f"out of memory loading {where} on {placement['device_map']} as {dtype}"
            ) from None
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise TracktaleError(f"cannot load {where}: {first_line}") from None
    model.eval()
    return tokenizer, model


def _max_context(model: Any) -> int | None:
    """The positions the model was trained for (``max_position_embeddings``), if it says."""
    value = getattr(model.config, "max_position_embeddings", None)
    return int(value) if isinstance(value, int) and value > 0 else None


def _pad_id(tokenizer: Any) -> int:
    for candidate in (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.bos_token_id):
        if candidate is not None:
            return int(candidate)
    return 0


def _stop_ids(model: Any, tokenizer: Any) -> set[int]:
    config = getattr(model, "generation_config", None)
    configured = getattr(config, "eos_token_id", None)
    if configured is None:
        configured = tokenizer.eos_token_id
    if configured is None:
        return set()
    return set(configured) if isinstance(configured, list | tuple) else {int(configured)}
