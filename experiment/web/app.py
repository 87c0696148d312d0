"""The Flask application factory of the study server.

``create_app(config)`` builds one study's server: the participant page at ``/``, the JSON API
under ``/api``, the admin pages under ``/admin``, our own scripts under ``/static`` and
jsPsych's bundles under ``/vendor`` (served from ``node_modules``). Nothing is created at
import time; for gunicorn use the factory call
``tracktale.experiment.web.app:create_app_from_env()``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from flask import Flask, Response, abort, g, jsonify, render_template, request, send_from_directory
from flask.sessions import SecureCookieSessionInterface
from werkzeug.exceptions import HTTPException

from tracktale.errors import ConflictError, StorageUnavailable, TracktaleError
from tracktale.experiment.paradigms import HumanStudy, get_human_study
from tracktale.experiment.storage.store import Storage
from tracktale.experiment.study.config import STUDY_ENV, Secrets, StudyConfig, load_study
from tracktale.experiment.study.errors import StudyRefusal
from tracktale.experiment.study.instructions import GENDERS, session_screens
from tracktale.experiment.study.locale import Catalogue
from tracktale.experiment.study.service import StudyService, load_stimuli
from tracktale.experiment.study.validation import ApiError
from tracktale.experiment.web.admin import create_admin
from tracktale.experiment.web.api import create_api, error_response, refusal_error
from tracktale.experiment.web.frontend import VENDOR_FILES, find_node_modules
from tracktale.experiment.web.ratelimit import create_limiter, retry_after_breached
from tracktale.stimulus_set import StimulusSet

ASSETS = Path(__file__).parent.parent
"""The tracktale.experiment folder: the page's templates/, static/ and frontend/."""
MAX_BODY_BYTES = 64 * 1024
# jsPsych's stylesheet embeds its font as data: URLs, hence font-src data:.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"
)
REDIRECT_DELAY_MS = 5000
"""How long the final screen shows the completion code before the redirect to Prolific."""


def create_app(
    config: StudyConfig | None = None,
    *,
    storage: Storage | None = None,
    stimulus_set: StimulusSet | None = None,
    secrets: Secrets | None = None,
) -> Flask:
    """Build the study server.

    Args:
        config: The study (default: the default study).
        storage: The database (default: the config's ``database_url()``).
        stimulus_set: The stimuli (default: the config's set, generated if it is the default
            one and missing).
        secrets: Admin secret and keys (default: from the environment).

    Returns:
        The Flask application; ``app.extensions["tracktale"]`` is its :class:`StudyService`.

    Raises:
        TracktaleError: If the stimuli or the database cannot be used. A missing front end
            (jsPsych from npm) is reported when the page first asks for it, so API-only uses
            (tests, simulations) run without npm; ``serve`` checks it up front.
    """
    config = config or load_study(None)
    secrets = secrets or Secrets.from_env()
    stimulus_set = stimulus_set or load_stimuli(config)
    storage = storage or Storage(config.database_url())
    service = StudyService(config, storage, stimulus_set, salt=secrets.export_salt)

    # The page's templates and scripts are package data of tracktale.experiment, beside web/.
    app = Flask(
        __name__, root_path=str(ASSETS), static_folder="static", template_folder="templates"
    )
    app.config.update(
        SECRET_KEY=secrets.secret_key,
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_SECURE=config.secure_cookies,
        SESSION_COOKIE_NAME="tracktale_admin",
        TRACKTALE_SECRETS=secrets,
        JSON_SORT_KEYS=False,
    )
    app.session_interface = _SignedCookieSessions()
    app.extensions["tracktale"] = service
    limiter = create_limiter(app, config, storage.url)
    app.extensions["tracktale_limiter"] = limiter
    if config.trusted_proxies:
        from werkzeug.middleware.proxy_fix import ProxyFix

        hops = config.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)  # type: ignore[method-assign]

    app.register_blueprint(create_api(service, limiter))
    app.register_blueprint(create_admin(service))
    _register_pages(app, service)
    _register_hooks(app, service)
    return app


class _SignedCookieSessions(SecureCookieSessionInterface):
    """Flask's signed-cookie sessions, the signing serializer built once per key.

    Flask builds it again on every request, which cost about 0.1 ms of CPU each.
    """

    _cached: tuple[Any, Any] | None = None

    def get_cookie_secure(self, app: Flask) -> bool:
        """``Secure`` when the setting says so, and always when served over HTTPS.

        Behind a reverse proxy, ``trusted_proxies`` lets ``X-Forwarded-Proto`` say so.
        """
        return bool(super().get_cookie_secure(app)) or request.is_secure

    def get_signing_serializer(self, app: Flask) -> Any:
        """The serializer for the app's current secret key (and fallbacks)."""
        keys = (app.secret_key, tuple(app.config.get("SECRET_KEY_FALLBACKS") or ()))
        cached = self._cached
        if cached is None or cached[0] != keys:
            cached = (keys, super().get_signing_serializer(app))
            self._cached = cached
        return cached[1]


def _register_pages(app: Flask, service: StudyService) -> None:
    config = service.config
    page = page_config(config, service.human, service.texts)
    if config.reading_mode != "whole":
        # Only then: a study of whole stories gets the page it always had.
        page["reading_mode"] = config.reading_mode
    scripts = service.human.scripts

    @app.get("/")
    def participant_page():
        return render_template("study.html", study=config, page=page, scripts=scripts)

    @app.get("/vendor/<name>")
    def vendor(name: str):
        if name not in VENDOR_FILES:
            abort(404)
        if "node_modules" not in app.extensions:
            app.extensions["node_modules"] = find_node_modules()
        return send_from_directory(app.extensions["node_modules"], VENDOR_FILES[name], max_age=3600)

    @app.get("/favicon.ico")
    def favicon():
        # Browsers ask for /favicon.ico whatever the page links; answer with the page's icon.
        return send_from_directory(
            app.static_folder or "", "favicon.svg", mimetype="image/svg+xml", max_age=86400
        )

    @app.get("/healthz")
    def health():
        return {"ok": True, "study_id": config.study_id}


def _register_hooks(app: Flask, service: StudyService) -> None:
    @app.errorhandler(ApiError)
    def api_error(error: ApiError):
        return error_response(error)

    @app.errorhandler(StudyRefusal)
    def refused(error: StudyRefusal):
        return error_response(refusal_error(error))

    @app.errorhandler(ConflictError)
    def conflict(error: ConflictError):
        return error_response(ApiError(409, str(error), reason=error.reason))

    @app.errorhandler(StorageUnavailable)
    def unavailable(error: StorageUnavailable):
        # 503 with Retry-After: the page's outbox (and postJson) keep the write and try again.
        seconds = str(max(1, error.retry_after))
        if request.path.startswith("/api/"):
            response = jsonify(error=str(error), retry_after=error.retry_after)
        else:
            response = Response(f"{error}\n", mimetype="text/plain")
        response.status_code = 503
        response.headers["Retry-After"] = seconds
        return response

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        if request.path.startswith("/api/"):
            extra = {}
            if error.code == 429:
                extra["retry_after"] = retry_after_breached(app.extensions["tracktale_limiter"])
            return error_response(
                ApiError(error.code or 500, error.description or error.name, **extra)
            )
        if request.path.startswith("/admin"):
            return error  # the researcher's pages: Werkzeug's own (English) error page
        return error_page(service, error.code or 500)

    @app.before_request
    def start_clock():
        g.tracktale_start = time.perf_counter()

    @app.after_request
    def security_headers(response):
        if request.path.startswith("/api/") and "tracktale_start" in g:
            # Server-side handling time, for monitoring and the load benchmark.
            elapsed_ms = (time.perf_counter() - g.tracktale_start) * 1000
            response.headers["Server-Timing"] = f"app;dur={elapsed_ms:.2f}"
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("X-Frame-Options", "DENY")
        if request.path.startswith(("/api/", "/admin")):
            response.headers.setdefault("Cache-Control", "no-store")
        return response


PAGE_TEXTS = ("buttons", "page", "errors", "survey", "trial", "feedback")
"""The catalogue's sections the participant page reads (``texts`` of :func:`page_config`)."""


def error_page(service: StudyService, status: int) -> tuple[str, int]:
    """A participant's error page in the study's language (no such page, too many requests)."""
    texts = service.texts
    kind = {404: "not_found", 405: "not_found", 429: "too_many"}.get(status, "other")
    page = render_template(
        "error.html",
        language=service.config.language,
        direction=service.config.text_direction,
        title=texts.text("error_page.title"),
        message=texts.text(f"error_page.{kind}", status=status),
    )
    return page, status


def page_config(
    config: StudyConfig, human: HumanStudy | None = None, texts: Catalogue | None = None
) -> dict[str, Any]:
    """What the participant page needs besides the session: texts, timings and codes.

    Args:
        config: The study.
        human: The paradigm's study as it runs the study's set (default: the unbound one).
        texts: The participants' catalogue (default: the study's).
    """
    timing = config.timing
    human = human or get_human_study(config.paradigm)
    texts = texts or config.catalogue()
    seconds = {
        "reading_seconds": timing.reading_ms / 1000,
        "response_seconds": timing.response_ms / 1000,
    }

    def document(name: str) -> str:
        return config.document(name, human.documents[name], seconds).html()

    nouns = human.nouns()
    reading_prompt = human.reading_prompt or texts.text(
        "trial.reading_prompt", noun=nouns["singular"]
    )
    instructions = {
        **human.instructions(timing.reading_ms, timing.response_ms, "online"),
        **session_screens(texts),
    }
    if config.reading_mode != "whole":
        instructions = human.word_by_word_instructions(
            instructions, timing.reading_ms, config.reading_mode, config.maze_redo
        )

    return {
        "study_id": config.study_id,
        "title": config.title,
        "timing": {
            "reading_ms": timing.reading_ms,
            "response_ms": timing.response_ms,
            "feedback_ms": timing.feedback_ms,
        },
        "allow_missing_pid": config.allow_missing_pid,
        "redirect_delay_ms": REDIRECT_DELAY_MS,
        "progress_indicator": config.progress_indicator,
        "timeout_notice_ms": config.timeout_notice_ms,
        "consent_html": document("consent"),
        "information_html": document("information"),
        "debrief_html": document("debrief"),
        "instructions": instructions,
        "paradigm": config.paradigm,
        "trial_plugins": dict(human.trial_plugins),
        "trial_noun": nouns["title"],
        "nouns": nouns,
        "reading_prompt": reading_prompt,
        "genders": list(GENDERS),
        "language": config.language,
        "direction": config.text_direction,
        "texts": {
            key: value for section in PAGE_TEXTS for key, value in texts.section(section).items()
        },
    }


def create_app_from_env() -> Flask:
    """The app for the study file named by ``$TRACKTALE_STUDY`` (the default study without it).

    For WSGI servers: ``gunicorn 'tracktale.experiment.web.app:create_app_from_env()'``. A
    set-up the study cannot run on (a damaged database, a bad study file) is one line on stderr
    and exit status 3, which makes gunicorn stop instead of starting workers again and again.
    """
    from tracktale.experiment.web.server import log_crashes

    log_crashes()
    try:
        return create_app(load_study(os.environ.get(STUDY_ENV) or None))
    except TracktaleError as error:
        print(f"tracktale: error: {error}", file=sys.stderr, flush=True)
        raise SystemExit(3) from None
