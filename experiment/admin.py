"""Admin pages: participants and progress, per-task accuracy, exports (behind a secret).

The secret comes from ``$TRACKTALE_ADMIN_SECRET``. A browser signs in once through a form (a
signed, HTTP-only, same-site session cookie); scripts send ``Authorization: Bearer <secret>``.
Every page refuses without it. Free text (typed answers) is escaped by the templates.
"""

from __future__ import annotations

import functools
import hmac
import secrets
from collections import Counter

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    redirect,
    render_template,
    request,
    session,
    url_for,
)

from tracktale.experiment import export
from tracktale.experiment.api import is_admin_request
from tracktale.experiment.design import LIST_IDS
from tracktale.experiment.ratelimit import RateLimiter
from tracktale.experiment.service import StudyService
from tracktale.experiment.summary import task_accuracy
from tracktale.trial import PARTICIPANT_STATUSES

LOGIN_ATTEMPTS_PER_MINUTE = 10
"""Sign-in attempts allowed per address and minute (guessing the secret stays hopeless)."""
MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "parquet": "application/vnd.apache.parquet"}


def create_admin(service: StudyService) -> Blueprint:
    """The ``/admin`` blueprint for one study."""
    admin = Blueprint("admin", __name__, url_prefix="/admin")
    study_id = service.config.study_id
    login_limiter = RateLimiter(LOGIN_ATTEMPTS_PER_MINUTE)

    def required(view):
        @functools.wraps(view)
        def wrapped(*args, **kwargs):
            if session.get("admin") is True or is_admin_request():
                return view(*args, **kwargs)
            if request.method in ("GET", "HEAD") and not request.headers.get("Authorization"):
                return redirect(url_for("admin.login", next=request.path))
            abort(403)

        return wrapped

    def check_csrf() -> None:
        expected = session.get("csrf")
        given = request.form.get("csrf", "")
        if is_admin_request():
            return
        if not expected or not hmac.compare_digest(expected, given):
            abort(403)

    @admin.route("/login", methods=["GET", "POST"])
    def login():
        error = None
        if request.method == "POST":
            if login_limiter.allow(f"ip:{request.remote_addr}"):
                abort(429)
            secret = current_app.config["TRACKTALE_SECRETS"].admin_secret
            given = request.form.get("secret", "")
            if given and hmac.compare_digest(given.encode(), secret.encode()):
                session.clear()
                session["admin"] = True
                session["csrf"] = secrets.token_urlsafe(16)
                target = request.args.get("next", "")
                return redirect(target if target.startswith("/admin") else url_for("admin.index"))
            error = "That is not the admin secret."
        return render_template("admin_login.html", error=error, study=service.config), (
            401 if error else 200
        )

    @admin.post("/logout")
    @required
    def logout():
        check_csrf()
        session.clear()
        return redirect(url_for("admin.login"))

    @admin.get("/")
    @required
    def index():
        return render_template(
            "admin.html",
            **_overview(service),
            all_statuses=PARTICIPANT_STATUSES,
            list_ids=LIST_IDS,
            csrf=session.get("csrf", ""),
        )

    @admin.get("/export/<table>.<fmt>")
    @required
    def download(table: str, fmt: str):
        if table not in export.TABLES or fmt not in export.FORMATS:
            abort(404)
        salt = current_app.config["TRACKTALE_SECRETS"].export_salt
        return _export_response(service, table, fmt, request.args.get("ids") == "raw", salt)

    @admin.post("/participants/<participant_id>/status")
    @required
    def set_status(participant_id: str):
        check_csrf()
        status = request.form.get("status", "")
        if status not in ("returned", "started"):
            abort(400)
        known = {p.participant_id for p in service.storage.participants(study_id)}
        if participant_id not in known:
            abort(404)
        service.storage.set_status(participant_id, status)
        return redirect(url_for("admin.index"))

    return admin


def _overview(service: StudyService) -> dict:
    study_id = service.config.study_id
    people = service.storage.participants(study_id)
    accuracy: dict[str, dict[str, object]] = {}
    for row in task_accuracy(service.storage.trials(study_id)):
        accuracy.setdefault(row.participant_id, {})[row.task] = row
    return {
        "study": service.config,
        "stimuli": service.stimuli,
        "people": people,
        "counts": service.storage.trial_counts(study_id),
        "accuracy": accuracy,
        "n_planned": {p.participant_id: len(p.plan.trials) for p in people},
        "statuses": Counter(p.status for p in people),
        "lists": Counter(p.list_id for p in people if p.status in ("started", "completed")),
        "recent": service.storage.recent_trials(study_id, 50),
    }


def _export_response(
    service: StudyService, table: str, fmt: str, raw: bool, salt: str | None
) -> Response:
    study_id = service.config.study_id
    if table == "trials":
        data = export.trials_table(service.storage, study_id)
    elif table == "accuracy":
        data = export.accuracy_table(service.storage, study_id)
    else:
        salt = export.export_salt(service.storage, salt)
        data = export.participants_table(service.storage, salt, study_id, raw_ids=raw)
    name = f"{study_id}-{table}{'-raw-ids' if raw and table == 'participants' else ''}.{fmt}"
    return Response(
        export.encode(data, fmt),
        mimetype=MEDIA_TYPES[fmt],
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
