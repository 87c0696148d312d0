"""The participant API: JSON endpoints the study page (and simulated participants) call.

``POST /api/session`` starts or resumes a session and returns a token and the outline of the
plan (positions, blocks, tasks; no stories). ``POST /api/serve`` hands out one trial's content
as it starts, ``POST /api/trials`` takes its answer; every call but the first carries the
token in the ``X-Session-Token`` header, which binds it to one participant. Bodies are
validated in one place (:mod:`.validation`) and refused with a 4xx and a message; requests are
rate-limited by Flask-Limiter (:mod:`.ratelimit`).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, g, jsonify, request
from flask_limiter import Limiter

from tracktale.experiment.storage.store import Participant
from tracktale.experiment.study.errors import (
    InconsistentRequest,
    InvalidRequest,
    NotAuthenticated,
    NotPermitted,
    StudyRefusal,
    UnknownParticipant,
    WrongState,
)
from tracktale.experiment.study.service import StudyService
from tracktale.experiment.study.validation import (
    CONSENT_FIELDS,
    SERVE_FIELDS,
    SESSION_FIELDS,
    SURVEY_FIELDS,
    TRIAL_FIELDS,
    ApiError,
    Body,
    parse_json,
    validate,
    validate_words,
)
from tracktale.experiment.web import auth
from tracktale.experiment.web.ratelimit import address_key, limit_key, limit_writes, limits_prefix

TOKEN_HEADER = "X-Session-Token"
WRITE_VIEWS = ("consent", "serve", "save_trial", "save_survey", "complete")
"""The views whose requests count against ``writes_per_participant_per_minute``."""

REFUSAL_STATUS: dict[type[StudyRefusal], int] = {
    InvalidRequest: 400,
    NotAuthenticated: 401,
    NotPermitted: 403,
    UnknownParticipant: 404,
    WrongState: 409,
    InconsistentRequest: 422,
}
"""The HTTP status of each refusal the study's rules raise (only the web layer knows them)."""

# Kept importable from here for the lab mode and older callers; the schemas live in validation.
__all__ = [
    "REFUSAL_STATUS",
    "SURVEY_FIELDS",
    "TOKEN_HEADER",
    "TRIAL_FIELDS",
    "create_api",
    "error_response",
    "refusal_error",
]


def admin_request() -> bool:
    """``auth.is_admin_request`` once per request (a wrong secret is counted once)."""
    if "tracktale_admin" not in g:
        try:
            g.tracktale_admin = auth.is_admin_request()
        except ApiError as error:
            g.tracktale_admin = error
    if isinstance(g.tracktale_admin, ApiError):
        raise g.tracktale_admin
    return g.tracktale_admin


def _admin_exempt() -> bool:
    try:
        return admin_request()
    except ApiError:
        return False  # the view refuses it


def _token_or_address() -> str:
    token = request.headers.get(TOKEN_HEADER)
    return limit_key("token", token) if token else address_key()


def create_api(service: StudyService, limiter: Limiter) -> Blueprint:
    """The ``/api`` blueprint for one study."""
    api = Blueprint("api", __name__, url_prefix="/api")
    sessions = _apply_rate_limits(api, service, limiter)
    _add_session_views(api, service, sessions)
    _add_answer_views(api, service)
    return api


def _apply_rate_limits(api: Blueprint, service: StudyService, limiter: Limiter) -> Any:
    """Count the participants' writes on ``api``; returns the limit new sessions are under."""
    limits = service.config.rate_limits
    sessions = limiter.limit(
        f"{limits.sessions_per_ip_per_minute}/minute",
        key_func=address_key,
        exempt_when=_admin_exempt,
    )
    limit_writes(
        api,
        limiter,
        limits.writes_per_participant_per_minute,
        _token_or_address,
        frozenset(f"api.{name}" for name in WRITE_VIEWS),
        limits_prefix(service.config),
    )
    return sessions


def _body(schema: Body) -> dict[str, Any]:
    """The request's JSON body as ``schema`` validates it."""
    if not request.is_json:
        raise ApiError(415, "send the body as JSON (Content-Type: application/json)")
    return validate(parse_json(request.get_data(cache=False)), schema)


def _trial_body() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A trial's answer as validated, and the words it carries (a story read word by word)."""
    if not request.is_json:
        raise ApiError(415, "send the body as JSON (Content-Type: application/json)")
    body, words = validate_words(parse_json(request.get_data(cache=False)))
    return validate(body, TRIAL_FIELDS), words


def _participant(service: StudyService) -> Participant:
    """The participant whose session token the request carries."""
    return service.authenticate(request.headers.get(TOKEN_HEADER))


def _add_session_views(api: Blueprint, service: StudyService, sessions: Any) -> None:
    """The views that start a session, take the consent and end the session."""

    @api.post("/session")
    @sessions
    def start_session():
        data = _body(SESSION_FIELDS)
        source = data.get("source", "online")
        if source != "online" and not admin_request():
            raise ApiError(403, "only the admin secret may start simulated participants")
        started = service.start_session(
            data["prolific_pid"],
            prolific_study_id=data.get("study_id"),
            prolific_session_id=data.get("session_id"),
            source=source,
            token=request.headers.get(TOKEN_HEADER),
            user_agent=request.headers.get("User-Agent"),
            preview=data.get("preview"),
        )
        state = service.session_state(started.participant)
        return jsonify(token=started.token, resumed=started.resumed, **state)

    @api.post("/consent")
    def consent():
        person = _participant(service)
        data = _body(CONSENT_FIELDS)
        redirect = service.record_consent(person, data["consent"])
        return jsonify(ok=True, redirect=redirect)

    @api.post("/complete")
    def complete():
        person = _participant(service)
        redirect = service.complete(person)
        return jsonify(ok=True, redirect=redirect, completion_code=service.completion_code(person))


def _add_answer_views(api: Blueprint, service: StudyService) -> None:
    """The views that serve a trial and take its answer, and the survey's answers."""

    @api.post("/serve")
    def serve():
        person = _participant(service)
        data = _body(SERVE_FIELDS)
        return jsonify(ok=True, **service.serve_trial(person, data["trial_index"]))

    @api.post("/trials")
    def save_trial():
        person = _participant(service)
        data, words = _trial_body()
        answered = service.record_trial(person, data, words)
        result = answered.result
        reply = {"ok": True, "outcome": result.outcome, "client_trial_id": result.client_trial_id}
        if answered.feedback is not None:
            reply["feedback"] = answered.feedback
        return jsonify(reply), 201 if result.outcome == "stored" else 200

    @api.post("/survey")
    def save_survey():
        person = _participant(service)
        data = _body(SURVEY_FIELDS)
        return jsonify(ok=True, stored=service.record_survey(person, data))


def refusal_error(error: StudyRefusal) -> ApiError:
    """The HTTP refusal for a study's domain error: its status, message and details."""
    return ApiError(REFUSAL_STATUS[type(error)], error.message, **error.details)


def error_response(error: ApiError):
    """The JSON answer for a refused request."""
    response = jsonify(error=error.message, **error.extra)
    response.status_code = error.status
    if error.status == 429 and "retry_after" in error.extra:
        response.headers["Retry-After"] = str(max(1, round(error.extra["retry_after"])))
    return response
