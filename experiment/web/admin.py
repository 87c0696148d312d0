"""Admin pages: participants and progress, per-task accuracy, events, exports.

The secret comes from ``$TRACKTALE_ADMIN_SECRET``. A browser signs in once through a form (a
server-side session named by a signed, HTTP-only, same-site cookie; signing out revokes it);
scripts send ``Authorization: Bearer <secret>``. Wrong secrets are rate-limited either way
(:mod:`.auth`). Every page refuses without it. Free text (typed answers) is escaped and
isolated by the templates. Takeovers, status changes and reopenings are listed from the
server's journal; simulated participants and preview sessions are counted apart from real
ones. The page gives the participant link for Prolific and the researcher's preview link.
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

from tracktale.experiment.export import files as export
from tracktale.experiment.export.summary import task_accuracy
from tracktale.experiment.study.errors import StudyRefusal
from tracktale.experiment.study.links import participant_link, preview_key, preview_link
from tracktale.experiment.study.service import StudyService
from tracktale.experiment.web import auth
from tracktale.experiment.web.api import REFUSAL_STATUS, admin_request
from tracktale.schema.records import PREVIEW_SOURCE
from tracktale.trial import PARTICIPANT_STATUSES

MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "parquet": "application/vnd.apache.parquet"}


def create_admin(service: StudyService) -> Blueprint:
    """The ``/admin`` blueprint for one study."""
    admin = Blueprint("admin", __name__, url_prefix="/admin")
    admin.add_app_template_filter(_milliseconds, "ms")
    admin.add_app_template_filter(_flag_list, "flag_list")
    _add_sign_in_views(admin, service)

    @admin.get("/")
    @_required
    def index():
        return render_template(
            "admin.html",
            **_overview(service),
            all_statuses=PARTICIPANT_STATUSES,
            list_ids=service.list_ids,
            csrf=session.get("csrf", ""),
        )

    @admin.get("/export/<table>.<fmt>")
    @_required
    def download(table: str, fmt: str):
        if table not in export.TABLES or fmt not in export.FORMATS:
            abort(404)
        salt = current_app.config["TRACKTALE_SECRETS"].export_salt
        raw = request.args.get("ids") == "raw"
        preview = request.args.get("preview") == "include"
        return _export_response(service, table, fmt, raw, salt, include_preview=preview)

    @admin.post("/participants/<participant_id>/status")
    @_required
    def set_status(participant_id: str):
        _check_csrf()
        try:
            service.change_status(
                participant_id,
                request.form.get("status", ""),
                confirmed=request.form.get("confirm") == "reopen",
                by=auth.who(),
            )
        except StudyRefusal as error:
            abort(REFUSAL_STATUS[type(error)], error.message)
        return redirect(url_for("admin.index"))

    return admin


def _required(view):
    """An admin view: without the secret, a browser is sent to the sign-in page, others get 403."""

    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if admin_request() or auth.has_admin_session():
            return view(*args, **kwargs)
        if request.method in ("GET", "HEAD") and not request.headers.get("Authorization"):
            return redirect(url_for("admin.login", next=request.path))
        abort(403)

    return wrapped


def _check_csrf() -> None:
    """Refuse (403) a form sent in a signed-in session without that session's CSRF token."""
    if admin_request():
        return
    expected = session.get("csrf")
    given = request.form.get("csrf", "")
    if not expected or not hmac.compare_digest(expected, given):
        abort(403)


def _add_sign_in_views(admin: Blueprint, service: StudyService) -> None:
    """The sign-in form (and where it goes next) and signing out."""

    @admin.route("/login", methods=["GET", "POST"])
    def login():
        error = None
        if request.method == "POST":
            auth.refuse_if_locked_out()
            if auth.check_secret(request.form.get("secret", "")):
                auth.open_session()
                session["csrf"] = secrets.token_urlsafe(16)
                target = request.args.get("next", "")
                safe = target.startswith("/admin") and not target.startswith("//")
                return redirect(target if safe else url_for("admin.index"))
            error = "That is not the admin secret."
        return render_template("admin_login.html", error=error, study=service.config), (
            401 if error else 200
        )

    @admin.post("/logout")
    @_required
    def logout():
        _check_csrf()
        auth.close_session()
        return redirect(url_for("admin.login"))


def _milliseconds(value: object) -> str:
    """A time for the admin tables; what a hand-edited database holds instead is shown as is."""
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:.0f}"
    return repr(value)


def _flag_list(value: object) -> str:
    """Stored flags, comma-separated (anything but text shown as is)."""
    return value.replace(";", ", ") if isinstance(value, str) else repr(value)


def _overview(service: StudyService) -> dict:
    study_id = service.config.study_id
    storage = service.storage
    people = storage.participants(study_id)
    real = [p for p in people if p.source not in ("simulated", PREVIEW_SOURCE)]
    simulated = [p for p in people if p.source == "simulated"]
    previews = [p for p in people if p.source == PREVIEW_SOURCE]
    accuracy: dict[str, dict[str, object]] = {}
    for row in task_accuracy(storage.trials(study_id)):
        accuracy.setdefault(row.participant_id, {})[row.task] = row
    flagged: Counter[str] = Counter()
    for trial in storage.trials(study_id):
        if trial.flags:
            flagged[trial.participant_id] += 1
    taking_part = ("started", "completed")
    return {
        "study": service.config,
        "stimuli": service.stimuli,
        "people": people,
        "counts": storage.trial_counts(study_id),
        "accuracy": accuracy,
        "flagged": flagged,
        "browsers": storage.journal.browser_counts(),
        "n_planned": {p.participant_id: len(p.plan.trials) for p in people},
        "statuses": Counter(p.status for p in real),
        "simulated_statuses": Counter(p.status for p in simulated),
        "preview_statuses": Counter(p.status for p in previews),
        "links": _links(service),
        "lists": Counter(p.list_id for p in real if p.status in taking_part),
        "recent": storage.recent_trials(study_id, 50),
        "events": [
            event
            for event in storage.journal.events(study_id=study_id, limit=200)
            if event.kind in ("takeover", "status")
        ],
    }


def _links(service: StudyService) -> dict[str, str]:
    """The participant link and the preview link, at the study's public address.

    Without a configured public address, the address this page was opened at.
    """
    base = service.config.public_url or request.host_url.rstrip("/")
    key = preview_key(service.storage, service.config.study_id)
    return {"participant": participant_link(base), "preview": preview_link(base, key)}


def _export_response(
    service: StudyService,
    table: str,
    fmt: str,
    raw: bool,
    salt: str | None,
    *,
    include_preview: bool = False,
) -> Response:
    study_id = service.config.study_id
    personal = service.config.prolific.completion_codes == "per_participant"
    (data,) = export.read_tables(
        service.storage,
        [table],
        study_id=study_id,
        salt=salt,
        raw_ids=raw and table == "participants",
        personal_codes=personal,
        include_preview=include_preview,
    )
    name = f"{study_id}-{table}{'-raw-ids' if raw and table == 'participants' else ''}.{fmt}"
    return Response(
        export.encode(data, fmt),
        mimetype=MEDIA_TYPES[fmt],
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
