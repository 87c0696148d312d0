"""Every protocol of every paradigm, generated with a fixed seed, is byte-identical to before.

Item ids are content hashes of the canonical JSON, so any change to how an item or a manifest
is serialised (a schema refactor, a new default, a reordered key) changes these bytes. The
committed hashes (``data/protocol_sha256.json``) are of the files :func:`write_stimulus_set`
writes; the manifest is hashed with tracktale's own release number masked, so that a release
bump alone does not count (the paradigm generator's revision does). After an intended change
to the generators, regenerate the hashes with
``.venv/bin/python -m tests.tracktale.test_byte_identity`` and say why in the commit.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import tracktale
from tracktale.stimuli.registry import get_paradigm, paradigm_names
from tracktale.stimulus_set import ITEMS_FILE, MANIFEST_FILE, write_stimulus_set

HASHES = Path(__file__).parent / "data" / "protocol_sha256.json"
SEED = 20240501
RELEASE_MASK = b"tracktale <release>"
# Over ten seconds each here (the 55,000-item arithmetic set takes about 40 s).
LARGE = {("arithmetic", "model"), ("boxes", "probing"), ("boxes", "languages")}


def _protocols() -> list[tuple[str, str]]:
    return [
        (name, protocol) for name in paradigm_names() for protocol in get_paradigm(name).protocols
    ]


def _file_hashes(paradigm: str, protocol: str, folder: Path) -> dict[str, str]:
    stimulus_set = get_paradigm(paradigm).generate_set(protocol, SEED)
    write_stimulus_set(stimulus_set, folder)
    manifest = (folder / MANIFEST_FILE).read_bytes()
    release = f"tracktale {tracktale.__version__}".encode()
    return {
        ITEMS_FILE: hashlib.sha256((folder / ITEMS_FILE).read_bytes()).hexdigest(),
        MANIFEST_FILE: hashlib.sha256(manifest.replace(release, RELEASE_MASK)).hexdigest(),
    }


def _expected() -> dict[str, dict[str, str]]:
    return json.loads(HASHES.read_text(encoding="utf-8"))


def _cases() -> list:
    marks = {case: [pytest.mark.slow] for case in LARGE}
    return [
        pytest.param(*case, marks=marks.get(case, []), id="-".join(case)) for case in _protocols()
    ]


def test_every_protocol_has_a_committed_hash():
    assert sorted(_expected()) == sorted(f"{p}/{q}" for p, q in _protocols())


@pytest.mark.parametrize(("paradigm", "protocol"), _cases())
def test_generated_files_are_byte_identical(paradigm, protocol, tmp_path):
    actual = _file_hashes(paradigm, protocol, tmp_path / "set")
    assert actual == _expected()[f"{paradigm}/{protocol}"]


def _update(folder: Path) -> None:
    hashes = {}
    for paradigm, protocol in _protocols():
        target = folder / f"{paradigm}-{protocol}"
        hashes[f"{paradigm}/{protocol}"] = _file_hashes(paradigm, protocol, target)
        print(paradigm, protocol, hashes[f"{paradigm}/{protocol}"][ITEMS_FILE], flush=True)
    HASHES.write_text(json.dumps(hashes, indent=2, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        _update(Path(scratch))
