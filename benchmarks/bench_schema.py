"""Read and validate the largest item set (arithmetic model protocol, 55,000 items) five ways.

Issue 16 asks for one declared schema library, pydantic v2 unless msgspec's speed matters for
the 55,000-item sets. This script times, on the same ``items.jsonl``:

- ``tracktale``: the reader in use (:func:`read_stimulus_set`: JSON decoding, the declared
  item schema (:mod:`tracktale.schema.stimulus`), the content-hash and canonical-form checks);
- ``item``: only the schema's part: ``json.loads`` and ``item_from_dict`` (the strict
  ``ItemData`` validation and building the item; no id or canonical check);
- ``payload``: the arithmetic payload check the verifier starts with
  (:func:`~tracktale.schema.payloads.truth_problems` with ``ArithmeticTruth``), on every item;
- ``pydantic``: the same item shape declared as a strict pydantic v2 model, validated from
  each line's bytes (``model_validate_json``);
- ``msgspec``: the same shape as a ``msgspec.Struct``, decoded and validated per line.

The last two are decoding plus type validation only; the hashing stays ours either way.
Prints the best of ``--repeats`` runs; nothing is asserted.
Run: .venv/bin/python benchmarks/bench_schema.py [--folder SET] [--repeats 2]
(msgspec is in the ``bench`` extra; without a folder the set is generated first, ~40 s).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import msgspec
import pydantic

from tracktale.item import item_from_dict
from tracktale.schema.payloads import ArithmeticTruth, truth_problems
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import ITEMS_FILE, read_stimulus_set, write_stimulus_set

Scalar = str | int | float | bool


class PydanticChoice(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(strict=True, extra="forbid", frozen=True)
    prefix: str
    good: str
    bad: str
    neutral_prefix: str | None = None
    question: str | None = None


class PydanticMessage(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(strict=True, extra="forbid", frozen=True)
    role: str
    content: str


class PydanticItem(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(strict=True, extra="forbid", frozen=True)
    item_id: str
    paradigm: str
    role: Literal["main", "filler", "practice"]
    condition: dict[str, Scalar]
    context: str
    question: str | None = None
    answer: str
    choice: PydanticChoice | None = None
    prompt: str | None = None
    messages: list[PydanticMessage] | None = None
    truth: dict[str, Any] = {}
    meta: dict[str, Any] = {}


class StructChoice(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    prefix: str
    good: str
    bad: str
    neutral_prefix: str | None = None
    question: str | None = None


class StructMessage(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    role: str
    content: str


class StructItem(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    item_id: str
    paradigm: str
    role: Literal["main", "filler", "practice"]
    condition: dict[str, Scalar]
    context: str
    answer: str
    question: str | None = None
    choice: StructChoice | None = None
    prompt: str | None = None
    messages: list[StructMessage] | None = None
    truth: dict[str, Any] = {}
    meta: dict[str, Any] = {}


def _lines(folder: Path) -> list[bytes]:
    return (folder / ITEMS_FILE).read_bytes().splitlines()


def _tracktale(folder: Path) -> int:
    return len(read_stimulus_set(folder))


def _item(folder: Path) -> int:
    return len([item_from_dict(json.loads(line), check_id=False) for line in _lines(folder)])


def _payload(folder: Path) -> int:
    truths = [json.loads(line)["truth"] for line in _lines(folder)]
    start = time.perf_counter()
    problems = sum(len(truth_problems(truth, ArithmeticTruth)) for truth in truths)
    _payload_seconds.append(time.perf_counter() - start)
    if problems:
        raise SystemExit(f"{problems} arithmetic truths do not have the declared shape")
    return len(truths)


_payload_seconds: list[float] = []
"""The payload check's own time (without decoding the lines), one entry per run."""


def _pydantic(folder: Path) -> int:
    validate = PydanticItem.model_validate_json
    return len([validate(line) for line in _lines(folder)])


def _msgspec(folder: Path) -> int:
    decode = msgspec.json.Decoder(StructItem).decode
    return len([decode(line) for line in _lines(folder)])


def _best(run: Callable[[Path], int], folder: Path, repeats: int) -> tuple[float, int]:
    timings, count = [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        count = run(folder)
        timings.append(time.perf_counter() - start)
    return min(timings), count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, help="an arithmetic model set already written")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.folder
        if folder is None:
            folder = Path(scratch) / "arithmetic-model"
            write_stimulus_set(get_paradigm("arithmetic").generate_set("model", 0), folder)
        size = (folder / ITEMS_FILE).stat().st_size
        print(f"{folder / ITEMS_FILE}: {size / 1e6:,.0f} MB")
        print(f"pydantic {pydantic.VERSION}, msgspec {msgspec.__version__}")
        for name, run in (
            ("tracktale", _tracktale),
            ("item", _item),
            ("payload", _payload),
            ("pydantic", _pydantic),
            ("msgspec", _msgspec),
        ):
            seconds, count = _best(run, folder, args.repeats)
            if run is _payload:
                seconds = min(_payload_seconds)  # the check alone, not the decoding
            print(
                f"{name:10s} {count:,} items in {seconds:6.2f} s ({count / seconds:,.0f} items/s)"
            )


if __name__ == "__main__":
    main()
