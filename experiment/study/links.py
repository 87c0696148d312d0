"""The study's links: the one for Prolific, and the researcher's preview link.

The participant link is the study's public address with Prolific's placeholders, which
Prolific replaces with each participant's ids. The preview link carries the study's preview
key (made on first use and kept in the study database, like the salt): its sessions are
stored with ``source="preview"``, never take a counterbalancing list from the real
participants, and are left out of exports and the analysis unless asked for. Without the key,
a participant cannot mark their own session as a preview.
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import urlsplit

from tracktale.errors import TracktaleError
from tracktale.experiment.storage.store import Storage

PREVIEW_KEY = "preview_key"
"""The meta key the study's preview key is kept under (one per study id)."""
PREVIEW_PARAM = "preview"
"""The query parameter of the preview link."""
PROLIFIC_QUERY = (
    "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)
"""Prolific's placeholders, which it replaces with each participant's ids."""


def preview_key(storage: Storage, study_id: str) -> str:
    """The study's preview key (24 hex digits, made and kept in the database on first use)."""
    return storage.meta_value(f"{PREVIEW_KEY}:{study_id}", lambda: secrets.token_hex(12))


def is_preview_key(storage: Storage, study_id: str, given: str) -> bool:
    """Whether ``given`` is the study's preview key (compared in constant time)."""
    return hmac.compare_digest(preview_key(storage, study_id).encode(), given.encode())


def public_base(public_url: str | None, host: str = "127.0.0.1", port: int = 5000) -> str:
    """The address participants reach the study at, without a trailing slash.

    Args:
        public_url: The study's public address (``https://study.example.org/tt``), if known.
        host: The interface the server listens on (used without a public address; an
            address that listens everywhere is reached as 127.0.0.1 on this machine).
        port: The port the server listens on.

    Raises:
        TracktaleError: If ``public_url`` is not an http(s) address.
    """
    if public_url:
        return check_public_url(public_url).rstrip("/")
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    return f"http://{shown}:{port}"


def check_public_url(url: str) -> str:
    """``url`` if it is an http(s) address without query or fragment.

    Raises:
        TracktaleError: Naming what is wrong with it.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise TracktaleError(f"public URL {url!r} must be an http(s) address, such as https://host")
    if parts.query or parts.fragment:
        raise TracktaleError(f"public URL {url!r} must not have a query (?...) or fragment (#...)")
    return url


def participant_link(base: str) -> str:
    """The link to paste into Prolific's study URL field, with Prolific's placeholders."""
    return f"{base}/?{PROLIFIC_QUERY}"


def preview_link(base: str, key: str) -> str:
    """The researcher's preview link (its sessions are marked and kept out of the data)."""
    return f"{base}/?{PREVIEW_PARAM}={key}"


def is_local(base: str) -> bool:
    """Whether the address only works on this machine (a participant could not reach it)."""
    host = urlsplit(base).hostname or ""
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")
