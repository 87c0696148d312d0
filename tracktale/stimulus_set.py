"""The stimulus-set contract: items as JSONL plus a manifest, written atomically.

On disk a set is a folder with ``items.jsonl`` (one canonical JSON item a line, in generation
order) and ``manifest.json`` (generator and version, seed, the full resolved config, counts per
design cell and the sha256 of ``items.jsonl``). Every stage reads sets through
:func:`read_stimulus_set`; its ``sha256`` identifies the set in results and trial records. The
item and the manifest are declared in :mod:`tracktale.schema.stimulus`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.item import Item, canonical_json, item_from_dict
from tracktale.schema.derive import build_record
from tracktale.schema.stimulus import FORMAT as FORMAT
from tracktale.schema.stimulus import Manifest as Manifest

ITEMS_FILE = "items.jsonl"
MANIFEST_FILE = "manifest.json"


@dataclass(frozen=True)
class StimulusSet:
    """A list of items plus the manifest describing them."""

    manifest: Manifest
    items: tuple[Item, ...]
    _by_id: dict[str, Item] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_id: dict[str, Item] = {}
        for item in self.items:
            if item.item_id in by_id:
                raise TracktaleError(f"item {item.item_id} appears twice in the stimulus set")
            by_id[item.item_id] = item
        object.__setattr__(self, "_by_id", by_id)

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @property
    def sha256(self) -> str:
        """The sha256 of ``items.jsonl``: the set's identity in results and trial records."""
        return self.manifest.items_sha256

    def get(self, item_id: str) -> Item:
        """The item with ``item_id``.

        Raises:
            TracktaleError: If the set has no such item.
        """
        try:
            return self._by_id[item_id]
        except KeyError:
            raise TracktaleError(f"no item {item_id!r} in this stimulus set") from None

    def select(self, role: str | None = None, **condition: Any) -> list[Item]:
        """Items with the given role and condition values, in set order."""
        return [
            item
            for item in self.items
            if (role is None or item.role == role)
            and all(item.condition.get(key) == value for key, value in condition.items())
        ]


def items_jsonl(items: Iterable[Item]) -> bytes:
    """The exact bytes of ``items.jsonl`` for ``items``."""
    return "".join(_lines(items)).encode("utf-8")


def _lines(items: Iterable[Item]) -> Iterator[str]:
    for item in items:
        yield item.to_json()
        yield "\n"


def _items_sha256(items: Iterable[Item]) -> str:
    """sha256 of :func:`items_jsonl`, hashed line by line (no copy of the whole file)."""
    digest = hashlib.sha256()
    for item in items:
        digest.update(item.to_json().encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def build_stimulus_set(
    items: Iterable[Item],
    *,
    paradigm: str,
    protocol: str,
    generator: str,
    generator_version: str,
    seed: int,
    config: Mapping[str, Any],
    design_cell: Callable[[Item], str],
) -> StimulusSet:
    """Assemble a set and its manifest from freshly generated items.

    Args:
        items: The items in generation order.
        paradigm: The paradigm's registry name.
        protocol: The protocol preset.
        generator: The generating module.
        generator_version: tracktale's version and the generator's revision.
        seed: The generation seed.
        config: The full resolved config.
        design_cell: Names the design cell of an item, for the manifest's counts.

    Returns:
        The stimulus set.
    """
    items = tuple(items)
    counts = Counter(design_cell(item) for item in items)
    manifest = Manifest(
        paradigm=paradigm,
        protocol=protocol,
        generator=generator,
        generator_version=generator_version,
        seed=seed,
        config=json.loads(canonical_json(config)),
        counts=dict(sorted(counts.items())),
        n_items=len(items),
        items_sha256=_items_sha256(items),
    )
    return StimulusSet(manifest=manifest, items=items)


def write_stimulus_set(
    stimulus_set: StimulusSet, directory: str | os.PathLike[str], *, overwrite: bool = False
) -> Path:
    """Write a set so that ``directory`` holds the whole old set or the whole new one.

    Both files are written into a temporary sibling folder, which is then renamed into place.

    Args:
        stimulus_set: The set to write.
        directory: The destination folder (created with its parents).
        overwrite: Replace an existing stimulus set in ``directory``.

    Returns:
        The destination folder.

    Raises:
        TracktaleError: If the folder is not writable, or holds files and ``overwrite`` is off
            (or holds something other than a stimulus set).
    """
    target = Path(directory)
    occupied = target.exists() and (not target.is_dir() or any(target.iterdir()))
    if occupied and not overwrite:
        raise TracktaleError(f"{target} already exists and is not empty (use --overwrite)")
    if occupied and not (target / MANIFEST_FILE).is_file():
        raise TracktaleError(f"{target} holds files that are not a stimulus set; not replacing it")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    except OSError as error:
        raise TracktaleError(f"cannot write a stimulus set to {target}: {error.strerror}") from None
    try:
        # Line by line: a large set is not copied whole into memory to be written.
        _write_synced(
            staging / ITEMS_FILE, (line.encode("utf-8") for line in _lines(stimulus_set.items))
        )
        _write_synced(staging / MANIFEST_FILE, [stimulus_set.manifest.to_json().encode("utf-8")])
        os.chmod(staging, 0o755)
        _swap_into_place(staging, target)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise TracktaleError(f"cannot write a stimulus set to {target}: {error.strerror}") from None
    return target


def _write_synced(path: Path, chunks: Iterable[bytes]) -> None:
    with open(path, "wb", buffering=1 << 20) as handle:
        for chunk in chunks:
            handle.write(chunk)
        handle.flush()
        os.fsync(handle.fileno())


def _swap_into_place(staging: Path, target: Path) -> None:
    if not target.exists() or (target.is_dir() and not any(target.iterdir())):
        os.replace(staging, target)
        return
    retired = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    os.rmdir(retired)
    os.rename(target, retired)
    try:
        os.rename(staging, target)
    except OSError:
        os.rename(retired, target)
        raise
    shutil.rmtree(retired, ignore_errors=True)


@dataclass(frozen=True)
class LineReport:
    """One line of ``items.jsonl`` as read: the item, or why it could not be read."""

    line_number: int
    item: Item | None
    problem: str | None
    item_id: str | None


def read_manifest(directory: str | os.PathLike[str]) -> Manifest:
    """Read and check ``manifest.json``.

    Raises:
        TracktaleError: If the folder, the manifest or one of its fields is missing or invalid.
    """
    folder = Path(directory)
    path = folder / MANIFEST_FILE
    if not folder.is_dir():
        raise TracktaleError(f"{folder} is not a folder (expected a stimulus set)")
    if not path.is_file():
        raise TracktaleError(f"{folder} has no {MANIFEST_FILE}: not a stimulus set")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise TracktaleError(f"{path} is not valid JSON ({error})") from None
    names = {manifest_field.name for manifest_field in fields(Manifest)}
    if not isinstance(data, dict) or set(data) != names:
        raise TracktaleError(f"{path} does not have the manifest fields {sorted(names)}")
    if data["format"] != FORMAT:
        raise TracktaleError(f"{path} has format {data['format']!r}; this tracktale reads {FORMAT}")
    try:
        manifest: Manifest = build_record(Manifest, data, what="manifest field")
        return manifest
    except TracktaleError as error:
        raise TracktaleError(f"{path}: {error}") from None


def read_lines(directory: str | os.PathLike[str]) -> tuple[Manifest, list[LineReport], str]:
    """Read every line of a set, collecting problems instead of stopping at the first.

    Returns:
        The manifest, one report per line, and the actual sha256 of ``items.jsonl``.
    """
    manifest = read_manifest(directory)
    path = Path(directory) / ITEMS_FILE
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise TracktaleError(f"cannot read {path}: {error.strerror}") from None
    reports = []
    for number, line in enumerate(
        raw.split(b"\n")[:-1] if raw.endswith(b"\n") else raw.split(b"\n"), start=1
    ):
        reports.append(_read_line(number, line))
    return manifest, reports, hashlib.sha256(raw).hexdigest()


def _read_line(number: int, line: bytes) -> LineReport:
    item_id = None
    try:
        text = line.decode("utf-8")
        data = json.loads(text)
        if isinstance(data, dict) and isinstance(data.get("item_id"), str):
            item_id = data["item_id"]
        item = item_from_dict(data)  # checks the id and keeps the item's canonical line
        if text != item.to_json():
            raise TracktaleError("line is not in canonical form (edited by hand?)")
        return LineReport(number, item, None, item.item_id)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return LineReport(number, None, f"not valid JSON ({error})", None)
    except TracktaleError as error:
        return LineReport(number, None, str(error), item_id)


def read_stimulus_set(directory: str | os.PathLike[str]) -> StimulusSet:
    """Read a set, refusing anything corrupted, edited or inconsistent with its manifest.

    Args:
        directory: The set's folder.

    Returns:
        The stimulus set.

    Raises:
        TracktaleError: Naming the first problem (file, line and item id where there is one).
    """
    manifest, reports, actual_sha = read_lines(directory)
    items_path = Path(directory) / ITEMS_FILE
    for report in reports:
        if report.problem:
            where = f" (item {report.item_id})" if report.item_id else ""
            raise TracktaleError(f"{items_path} line {report.line_number}{where}: {report.problem}")
    if actual_sha != manifest.items_sha256:
        raise TracktaleError(
            f"{items_path} does not match the sha256 in its manifest (corrupted or edited)"
        )
    if len(reports) != manifest.n_items:
        raise TracktaleError(
            f"{items_path} has {len(reports)} items; the manifest says {manifest.n_items}"
        )
    return StimulusSet(manifest=manifest, items=tuple(r.item for r in reports if r.item))


def is_stimulus_set(directory: str | os.PathLike[str]) -> bool:
    """Whether ``directory`` looks like a stimulus set (has a manifest)."""
    with contextlib.suppress(OSError):
        return (Path(directory) / MANIFEST_FILE).is_file()
    return False
