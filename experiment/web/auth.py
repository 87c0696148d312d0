"""Who may use the admin pages and start simulated participants: the admin secret.

A browser signs in once through the form; the signed, HTTP-only, same-site cookie then holds
the id of a server-side admin session
(:class:`~tracktale.experiment.storage.journal.Journal`), which signing out revokes, so a copy
of the cookie is worthless afterwards. Scripts send ``Authorization: Bearer <secret>``. Wrong
secrets, by either way, are counted per address in the shared rate-limit storage: after
:data:`~.ratelimit.ADMIN_FAILURES_PER_MINUTE` in a minute every further try from that address
is refused with 429 until the minute is over.
The count fails closed: while the shared counts cannot be read every admin secret is refused,
and wrong secrets they cannot take are counted in the process instead.
"""

from __future__ import annotations

import hmac
from typing import Any

from flask import current_app, request, session

from tracktale.experiment.study.validation import ApiError
from tracktale.experiment.web.ratelimit import (
    admin_failures_exceeded,
    note_admin_failure,
    retry_after_seconds,
)

SESSION_KEY = "admin_session"


def _secret() -> str:
    return current_app.config["TRACKTALE_SECRETS"].admin_secret


def _limiter():
    return current_app.extensions["tracktale_limiter"]


def _journal():
    return current_app.extensions["tracktale"].storage.journal


def refuse_if_locked_out() -> None:
    """Refuse (429) an address that has tried too many wrong secrets this minute."""
    address = request.remote_addr
    if admin_failures_exceeded(_limiter(), address):
        wait = retry_after_seconds(_limiter(), address)
        raise ApiError(429, "too many wrong admin secrets; wait a minute", retry_after=wait)


def check_secret(given: str) -> bool:
    """Compare a given secret in constant time; a wrong one is counted against the address."""
    if given and hmac.compare_digest(given.encode(), _secret().encode()):
        return True
    note_admin_failure(_limiter(), request.remote_addr)
    return False


def is_admin_request() -> bool:
    """Whether the request carries the admin secret as ``Authorization: Bearer <secret>``.

    Raises:
        ApiError: 429 when the address has used up its wrong secrets for the minute.
    """
    header = request.headers.get("Authorization", "")
    if not header.startswith("Bearer "):
        return False
    refuse_if_locked_out()
    return check_secret(header.removeprefix("Bearer ").strip())


def has_admin_session() -> bool:
    """Whether the cookie names an open (not signed-out, not expired) admin session."""
    return _journal().admin_session_valid(session.get(SESSION_KEY))


def open_session() -> None:
    """Sign the browser in: a fresh server-side session in a fresh cookie."""
    session.clear()
    session[SESSION_KEY] = _journal().open_admin_session()


def close_session() -> None:
    """Sign out: the server-side session is revoked, the cookie emptied."""
    _journal().close_admin_session(session.get(SESSION_KEY))
    session.clear()


def who() -> dict[str, Any]:
    """How the admin authenticated, for the record of what they changed (no address kept)."""
    return {"by": "script (Bearer)" if request.headers.get("Authorization") else "signed in"}
