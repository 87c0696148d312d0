"""Pseudonyms and seeds, derived from a secret salt that no export contains.

The salt is ``$TRACKTALE_EXPORT_SALT`` when set, else one made on first use and kept in the
study database (never in an export). A participant's session seed (trial order, filler
positions, sides) and the hash that stands for their Prolific id in exports are HMAC-SHA256
digests under that salt: with the study file and a list of Prolific ids, but without the salt,
no exported row can be linked back to a Prolific id.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from tracktale.experiment.storage.store import Storage

SALT_KEY = "export_salt"


def study_salt(storage: Storage, configured: str | None = None) -> str:
    """The configured salt, else the one kept in the database (made on first use)."""
    return configured or storage.meta_value(SALT_KEY, lambda: secrets.token_hex(16))


def pid_hash(salt: str, prolific_pid: str) -> str:
    """The salted hash that stands for a Prolific id in exports (HMAC-SHA256, 32 hex digits)."""
    return hmac.new(salt.encode(), prolific_pid.encode(), hashlib.sha256).hexdigest()[:32]


def session_seed(salt: str, design_seed: int, study_id: str, participant_key: str) -> int:
    """A participant's session seed: 48 bits of an HMAC of the design seed, study and id."""
    message = f"session-seed|{design_seed}|{study_id}|{participant_key}".encode()
    return int.from_bytes(hmac.new(salt.encode(), message, hashlib.sha256).digest()[:6], "big")


def personal_completion_code(salt: str, participant_id: str) -> str:
    """A participant's own completion code: ``C`` and 11 letters and digits of an HMAC."""
    digest = hmac.new(salt.encode(), f"completion|{participant_id}".encode(), hashlib.sha256)
    return "C" + base64.b32encode(digest.digest()).decode()[:11]
