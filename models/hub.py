"""The Hugging Face hub: resolving a model id and revision, listing revisions, clear errors.

A model is a local folder or a hub id. For a hub id the revision (branch, tag, ``step1000``,
commit) is resolved to its commit sha with :meth:`huggingface_hub.HfApi.resolve_revision`, which
asks the hub and falls back to the ``refs/`` folder of the local cache (``HF_HUB_CACHE``) when the
hub cannot be reached or ``HF_HUB_OFFLINE=1`` is set. The same resolved revision is then passed to
``from_pretrained`` for the weights and the tokenizer, so both come from one commit. Every failure
becomes one :class:`~tracktale.errors.TracktaleError` line that says what to do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.errors import TracktaleError
from tracktale.models.revisions import revision_sort_key

if TYPE_CHECKING:
    from tracktale.models.gguf import GGUFSource


@dataclass(frozen=True)
class ResolvedModel:
    """Where a model's files come from.

    Attributes:
        model_id: As given (hub id or local path).
        revision: As asked for (``None``: the default branch).
        load_revision: What to pass to ``from_pretrained`` (pins the commit for hub ids).
        resolved_sha: The commit the revision resolved to; ``None`` for a local folder.
        local: Whether ``model_id`` is a local folder (or file).
        gguf: The GGUF file the model id names (:mod:`tracktale.models.gguf`), or ``None``.
        load_path: Where to load from when not ``model_id`` (a GGUF file's converted folder).
    """

    model_id: str
    revision: str | None
    load_revision: str | None
    resolved_sha: str | None
    local: bool
    gguf: GGUFSource | None = None
    load_path: str | None = None


def resolve_model(
    model_id: str, revision: str | None = None, gguf_file: str | None = None
) -> ResolvedModel:
    """Find a model and pin its revision to a commit.

    Args:
        model_id: A local folder with a saved model, a hub id (``EleutherAI/pythia-70m``), a
            GGUF file or the default model's short name (see :mod:`tracktale.models.gguf`).
        revision: A branch, tag or commit of a hub model; ``None`` for the default branch.
        gguf_file: The name of a GGUF file inside the folder ``model_id``.

    Returns:
        The resolved model.

    Raises:
        TracktaleError: For an unknown model or revision, or when the hub cannot be reached and
            the revision is not in the local cache.
    """
    from tracktale.models.gguf import find_gguf

    source = find_gguf(model_id, gguf_file)
    if source is not None:
        if revision is not None:
            raise TracktaleError(
                f"{model_id} is a GGUF file; it has no revision {revision!r} "
                "(revisions apply to hub ids)"
            )
        return ResolvedModel(model_id, None, None, None, local=True, gguf=source)
    path = Path(model_id).expanduser()
    if path.is_dir():
        if revision is not None:
            raise TracktaleError(
                f"{model_id} is a local folder; it has no revision {revision!r} "
                "(revisions apply to hub ids)"
            )
        return ResolvedModel(model_id, None, None, None, local=True)
    if _looks_like_path(model_id):
        raise TracktaleError(f"unknown model {model_id!r}: no such folder")
    from huggingface_hub import HfApi, constants
    from huggingface_hub import errors as hub_errors

    try:
        resolved = HfApi().resolve_revision(
            model_id, revision=revision, local_files_only=constants.is_offline_mode()
        )
    except hub_errors.HFValidationError:
        raise TracktaleError(
            f"unknown model {model_id!r}: not a local folder and not a valid hub id"
        ) from None
    except hub_errors.RevisionNotFoundError:
        raise TracktaleError(_no_revision(model_id, revision, "on the Hugging Face hub")) from None
    except hub_errors.RepositoryNotFoundError:
        raise TracktaleError(
            f"unknown model {model_id!r}: not a local folder, and the Hugging Face hub has no "
            "such model (or it is private or gated)"
        ) from None
    except hub_errors.RevisionResolutionError as error:
        raise TracktaleError(_unresolved(model_id, revision, error)) from None
    return ResolvedModel(model_id, revision, resolved, resolved.resolved, local=False)


def _looks_like_path(model_id: str) -> bool:
    return model_id.startswith((".", "/", "~")) or model_id.count("/") > 1


def _no_revision(model_id: str, revision: str | None, where: str) -> str:
    return (
        f"model {model_id!r} has no revision {revision or 'main'!r} {where} "
        f"(see: tracktale models list-revisions {model_id})"
    )


def _cache_folder(model_id: str) -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE) / ("models--" + model_id.replace("/", "--"))


def _unresolved(model_id: str, revision: str | None, error: Exception) -> str:
    from huggingface_hub import constants

    cached = _cache_folder(model_id).is_dir()
    if error.__cause__ is None:  # offline mode: only the cache was asked
        if cached:
            return _no_revision(model_id, revision, "in the local cache (HF_HUB_OFFLINE is set)")
        return (
            f"unknown model {model_id!r}: not a local folder and not in the Hugging Face cache "
            f"{constants.HF_HUB_CACHE} (HF_HUB_OFFLINE is set)"
        )
    cause = error.__cause__
    detail = f"{type(cause).__name__}: {cause}".strip()
    return (
        f"no network: cannot reach the Hugging Face hub at {constants.ENDPOINT} ({detail}) and "
        f"{model_id} revision {revision or 'main'!r} is not in the local cache "
        f"{constants.HF_HUB_CACHE}; download it where there is network, or set HF_HUB_CACHE"
    )


def list_revisions(model_id: str) -> tuple[list[str], str]:
    """The branches and tags of a hub model, in training order where they name steps.

    Asks the hub; when it cannot be reached (or ``HF_HUB_OFFLINE=1``), lists the revisions in the
    local cache instead.

    Returns:
        The revisions and where they came from (``"hub"`` or ``"cache"``).

    Raises:
        TracktaleError: For a local folder, an unknown model, or neither hub nor cache.
    """
    from tracktale.models.gguf import is_default

    if Path(model_id).expanduser().exists() or is_default(model_id):
        raise TracktaleError(f"{model_id} is a local model; only hub models have revisions")
    from huggingface_hub import HfApi, constants
    from huggingface_hub import errors as hub_errors

    error: Exception | None = None
    if not constants.is_offline_mode():
        try:
            refs = HfApi().list_repo_refs(model_id)
            names = [ref.name for ref in (*refs.branches, *refs.tags)]
            return sorted(set(names), key=revision_sort_key), "hub"
        except hub_errors.HFValidationError:
            raise TracktaleError(f"unknown model {model_id!r}: not a valid hub id") from None
        except hub_errors.RepositoryNotFoundError:
            raise TracktaleError(f"unknown model {model_id!r} on the Hugging Face hub") from None
        except (OSError, hub_errors.HfHubHTTPError) as caught:
            error = caught
    refs_folder = _cache_folder(model_id) / "refs"
    if refs_folder.is_dir():
        names = [
            path.relative_to(refs_folder).as_posix()
            for path in refs_folder.rglob("*")
            if path.is_file()
        ]
        return sorted(names, key=revision_sort_key), "cache"
    why = "HF_HUB_OFFLINE is set" if error is None else f"cannot reach the hub ({error})"
    raise TracktaleError(
        f"cannot list the revisions of {model_id!r}: {why}, and it is not in the local cache "
        f"{constants.HF_HUB_CACHE}"
    )


def prepare(
    resolved: ResolvedModel, notify: Callable[[str], None] | None = None
) -> tuple[ResolvedModel, dict[str, Any]]:
    """Where to load a resolved model from, and the provenance columns of its rows.

    A GGUF source is converted (once) and loaded from its converted folder; anything else
    loads from where it is.
    """
    if resolved.gguf is None:
        return resolved, source_details(resolved)
    from tracktale.models.gguf import converted_details, converted_folder

    converted = converted_folder(resolved.gguf, notify=notify)
    return dataclasses.replace(resolved, load_path=str(converted.folder)), converted_details(
        converted
    )


def source_details(resolved: ResolvedModel) -> dict[str, Any]:
    """Provenance columns of a model that is not a GGUF file (hub id or local folder)."""
    return {
        "model_source": "folder" if resolved.local else "hub",
        "source_file": None,
        "source_sha256": None,
        "source_package": None,
        "quantization": None,
    }
