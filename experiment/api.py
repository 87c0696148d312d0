"""The participant API: JSON endpoints the study page (and simulated participants) call.

``POST /api/session`` starts or resumes a session and returns a token; every other write
carries that token in the ``X-Session-Token`` header, which binds it to one participant.
Bodies are validated (types, sizes, allowed values) and refused with a 4xx and a message;
writes are rate-limited.
"""

from __future__ import annotations

import hmac
from typing import Any

from flask import Blueprint, current_app, jsonify, request

from tracktale.experiment.instructions import GENDERS
from tracktale.experiment.ratelimit import RateLimiter
from tracktale.experiment.service import StudyService
from tracktale.experiment.validation import IDENTIFIER, ApiError, Field, validate
from tracktale.trial import TRIAL_TASKS

TOKEN_HEADER = "X-Session-Token"
MAX_MS = 3_600_000.0

SESSION_FIELDS = {
    "prolific_pid": Field(str, pattern=IDENTIFIER),
    "study_id": Field(str, required=False, nullable=True, pattern=IDENTIFIER),
    "session_id": Field(str, required=False, nullable=True, pattern=IDENTIFIER),
    "source": Field(str, required=False, choices=("online", "simulated")),
}
CONSENT_FIELDS = {"consent": Field(bool)}
TRIAL_FIELDS = {
    "client_trial_id": Field(str, pattern=r"[A-Za-z0-9_-]{8,64}"),
    "trial_index": Field(int, minimum=0, maximum=10_000),
    "item_id": Field(str, pattern=IDENTIFIER),
    "task": Field(str, choices=TRIAL_TASKS),
    "response": Field(str, nullable=True, max_length=200),
    "timed_out": Field(bool),
    "reading_time_ms": Field(float, minimum=0, maximum=MAX_MS),
    "reading_timed_out": Field(bool),
    "response_time_ms": Field(float, nullable=True, minimum=0, maximum=MAX_MS),
    "screen_width": Field(int, minimum=0, maximum=100_000),
    "screen_height": Field(int, minimum=0, maximum=100_000),
    "blur_count": Field(int, minimum=0, maximum=100_000),
    "hidden_count": Field(int, minimum=0, maximum=100_000),
    "restarts": Field(int, required=False, minimum=0, maximum=10_000),
}
SURVEY_FIELDS = {
    "age": Field(int, nullable=True, minimum=18, maximum=120),
    "gender": Field(str, choices=GENDERS),
    "native_language": Field(str, max_length=64, pattern=r"\S.*"),
    "attentive": Field(bool),
    "no_ai_assistance": Field(bool),
}


def create_api(service: StudyService) -> Blueprint:
    """The ``/api`` blueprint for one study."""
    api = Blueprint("api", __name__, url_prefix="/api")
    limits = service.config.rate_limits
    session_limiter = RateLimiter(limits.sessions_per_ip_per_minute)
    write_limiter = RateLimiter(limits.writes_per_participant_per_minute)

    def body() -> Any:
        if not request.is_json:
            raise ApiError(415, "send the body as JSON (Content-Type: application/json)")
        data = request.get_json(silent=True)
        if data is None:
            raise ApiError(400, "the body is not valid JSON")
        return data

    def limit(limiter: RateLimiter, key: str) -> None:
        wait = limiter.allow(key)
        if wait:
            raise ApiError(429, "too many requests; slow down", retry_after=round(wait, 1))

    def participant():
        token = request.headers.get(TOKEN_HEADER)
        limit(write_limiter, f"token:{token}" if token else f"ip:{request.remote_addr}")
        return service.authenticate(token)

    @api.post("/session")
    def start_session():
        data = validate(body(), SESSION_FIELDS)
        source = data.get("source", "online")
        trusted = is_admin_request()
        if source != "online" and not trusted:
            raise ApiError(403, "only the admin secret may start simulated participants")
        if not trusted:
            limit(session_limiter, f"ip:{request.remote_addr}")
        started = service.start_session(
            data["prolific_pid"],
            prolific_study_id=data.get("study_id"),
            prolific_session_id=data.get("session_id"),
            source=source,
            token=request.headers.get(TOKEN_HEADER),
            user_agent=request.headers.get("User-Agent"),
        )
        state = service.session_state(started.participant)
        return jsonify(token=started.token, resumed=started.resumed, **state)

    @api.post("/consent")
    def consent():
        person = participant()
        data = validate(body(), CONSENT_FIELDS)
        redirect = service.record_consent(person, data["consent"])
        return jsonify(ok=True, redirect=redirect)

    @api.post("/trials")
    def save_trial():
        person = participant()
        data = validate(body(), TRIAL_FIELDS)
        result = service.record_trial(person, data)
        status = 201 if result.outcome == "stored" else 200
        return jsonify(
            ok=True, outcome=result.outcome, client_trial_id=result.client_trial_id
        ), status

    @api.post("/survey")
    def save_survey():
        person = participant()
        data = validate(body(), SURVEY_FIELDS)
        return jsonify(ok=True, stored=service.record_survey(person, data))

    @api.post("/complete")
    def complete():
        person = participant()
        return jsonify(ok=True, redirect=service.complete(person))

    return api


def is_admin_request() -> bool:
    """Whether the request carries the admin secret (``Authorization: Bearer <secret>``)."""
    secret = current_app.config["TRACKTALE_SECRETS"].admin_secret
    header = request.headers.get("Authorization", "")
    given = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
    return bool(given) and hmac.compare_digest(given.encode(), secret.encode())


def error_response(error: ApiError):
    """The JSON answer for a refused request."""
    response = jsonify(error=error.message, **error.extra)
    response.status_code = error.status
    if error.status == 429 and "retry_after" in error.extra:
        response.headers["Retry-After"] = str(max(1, round(error.extra["retry_after"])))
    return response
