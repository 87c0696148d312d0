"""Malformed requests at every route: never a 500, never a lost or changed trial.

The routes are read from the app's URL map, so a route added later is fuzzed too. Each is sent
every method, hostile path values and query strings, bodies a browser (or anyone with curl)
can send, and each of the ways to authenticate (none, a forged or odd token, a participant's
real token, the admin secret, a signed-in admin with its CSRF token). Hypothesis then mutates
the JSON bodies of the participant API field by field. Raw bytes that no test client sends
(broken request lines, undecodable headers and paths) go over a socket to a running server.
Throughout, one participant is in the middle of the study with answers stored: they must be
unchanged afterwards, and the participant must still be able to finish. Every test runs on
SQLite and on PostgreSQL.
"""

from __future__ import annotations

import dataclasses
import json
import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.experiment.conftest import ADMIN_SECRET, Participant, open_storage
from tracktale.experiment.study.config import RateLimits
from tracktale.experiment.study.validation import SURVEY_FIELDS, TRIAL_FIELDS
from tracktale.experiment.web.app import create_app
from tracktale.experiment.web.server import serve_in_thread

ANSWERED_BEFORE = 6
"""Trials the participant in the middle of the study has answered before the fuzzing."""
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD")
PATH_VALUES = (
    "x",
    "..",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "%00",
    "%ED%BF%BF",  # a lone surrogate, UTF-8 encoded
    "%FF%FE",  # not UTF-8
    "a" * 2000,
    "%F0%9F%98%80",
    "'%20OR%201=1--",
    "<script>",
)
QUERIES = (
    "",
    "?next=//evil.example/",
    "?next=%ED%BF%BF",
    "?ids=raw&ids=raw",
    "?PROLIFIC_PID=%00&STUDY_ID=%FF&SESSION_ID=" + "x" * 3000,
    "?%ZZ=%",
)
SIGN_IN_OUT = ("/admin/login", "/admin/logout")
DEEP = "[" * 30_000 + "]" * 30_000
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
BODIES: tuple[tuple[str | None, bytes], ...] = (
    (None, b""),
    (JSON, b""),
    (JSON, b"{not json"),
    (JSON, b"\xff\xfe\x00{"),
    (JSON, DEEP.encode()),
    (JSON, b'{"a":' * 10_000 + b"1" + b"}" * 10_000),
    (JSON, b'"\\udfff"'),
    (JSON, b'{"prolific_pid": "\\udfff", "trial_index": "\\ud800"}'),
    (JSON, b"null"),
    (JSON, b"[]"),
    (JSON, b"1e999999"),
    (JSON, b'{"trial_index": 1e999, "consent": NaN, "age": -Infinity}'),
    (JSON, b'{"trial_index": 123456789012345678901234567890}'),
    (JSON, b'{"consent": true, "consent": false}'),
    (JSON, b'{"__proto__": {"admin": true}, "constructor": 1}'),
    (JSON, b'{"prolific_pid": "A"}' + b" " * 70_000),
    (JSON + "; charset=latin-1", '{"prolific_pid": "\xe9"}'.encode("latin-1")),
    ("text/plain", b'{"prolific_pid": "A"}'),
    (FORM, b"status=returned&csrf=&confirm=reopen&secret=%ED%BF%BF"),
    (FORM, b"status=%00&csrf=%FF&secret=" + b"s" * 60_000),
    (FORM, b"%ZZ=%&&&=="),
    ("multipart/form-data; boundary=x", b"--x\r\nContent-Disposition: form-data\r\n\r\n"),
    ("multipart/form-data", b"no boundary at all"),
)
CONVERTER_VALUES = {
    "participant_id": PATH_VALUES,
    "table": ("trials", "participants", "accuracy", "x"),
    "fmt": ("csv", "parquet", "x"),
    "filename": ("study.js", "../app.py", "%2e%2e/app.py", "x"),
    "name": ("jspsych.js", "../package.json", "x"),
}


@pytest.fixture(params=["sqlite", "postgresql"])
def storage(request, study_config):
    """The study database, on both backends (PostgreSQL stores text differently: NUL)."""
    storage = open_storage(request.param, study_config.database_url())
    yield storage
    storage.close()


def _app(study_config, storage, human_set, secrets):
    # Limits high enough that the fuzzing reaches the views rather than stopping at 429.
    config = dataclasses.replace(
        study_config,
        rate_limits=RateLimits(
            sessions_per_ip_per_minute=1_000_000, writes_per_participant_per_minute=1_000_000
        ),
    )
    app = create_app(config, storage=storage, stimulus_set=human_set, secrets=secrets)
    app.testing = False  # errors become responses, as in production, instead of raising
    return app


@pytest.fixture
def fuzz_app(study_config, storage, human_set, secrets):
    return _app(study_config, storage, human_set, secrets)


@pytest.fixture
def midway(fuzz_app, human_set, storage):
    """A participant in the middle of the study, with answers stored and one trial served."""
    person = Participant(fuzz_app.test_client(), human_set)
    assert person.start().status_code == 200
    assert person.consent().status_code == 200
    for index in range(ANSWERED_BEFORE):
        assert person.answer(index).status_code == 201
    person.shown(ANSWERED_BEFORE)
    person.stored_before = _stored_trials(storage)
    return person


def _stored_trials(storage):
    return {t.trial_index: dataclasses.asdict(t) for t in storage.trials()}


def _finish(person, storage):
    """The participant finishes the study; nothing stored before the fuzzing changed."""
    for index in range(ANSWERED_BEFORE, len(person.state["trials"])):
        reply = person.answer(index)
        assert reply.status_code in (200, 201), (index, reply.get_json())
    assert person.survey().status_code == 200
    assert person.post("/api/complete", {}).status_code == 200
    after = _stored_trials(storage)
    assert sorted(after) == list(range(len(person.state["trials"])))
    for index, record in person.stored_before.items():
        assert after[index] == record, index


def _paths(app):
    """Every route of the app as ``(path, hostile)``: with plain path arguments, then with
    each argument given each hostile value in turn."""
    for rule in app.url_map.iter_rules():
        arguments = sorted(rule.arguments)
        plain = {name: CONVERTER_VALUES.get(name, ("x",))[0] for name in arguments}
        yield _fill(rule.rule, plain), False
        for argument in arguments:
            for value in CONVERTER_VALUES.get(argument, PATH_VALUES)[1:]:
                yield _fill(rule.rule, plain | {argument: value}), True


def _fill(rule: str, values: dict[str, str]) -> str:
    for name, text in values.items():
        rule = rule.replace(f"<{name}>", text).replace(f"<path:{name}>", text)
    return rule


def _identities(app, person):
    """Header sets for each way of (not) authenticating, and the admin client's CSRF token."""
    admin = app.test_client()
    assert admin.post("/admin/login", data={"secret": ADMIN_SECRET}).status_code == 302
    with admin.session_transaction() as session:
        csrf = session["csrf"]
    plain = app.test_client()
    identities = [
        (plain, {}),
        (plain, {"X-Session-Token": "forged"}),
        (plain, {"X-Session-Token": "\xe9\xff" * 50, "Authorization": "Bearer \xe9"}),
        (plain, {"Authorization": "Basic Og==", "Cookie": "tracktale_admin=\xff; x"}),
        (person.client, {"X-Session-Token": person.token}),
        (plain, {"Authorization": f"Bearer {ADMIN_SECRET}"}),
        (admin, {"X-CSRF": csrf}),
    ]
    # Each from its own address, so that the wrong secrets' lockout does not hide the views
    # from the right ones.
    return [
        (client, headers, f"10.0.0.{number}") for number, (client, headers) in enumerate(identities)
    ], csrf


def _requests(paths, identities, csrf):
    """(client, method, path, headers, content type, body) for every combination worth sending.

    Every path is sent every method by every identity; the base paths (no hostile path value)
    also get every body and every query string, the others bodiless requests only.
    """
    for path, hostile in paths:
        for method in METHODS:
            takes_body = method in ("POST", "PUT", "PATCH")
            for client, headers, address in identities:
                queries = QUERIES if not hostile else ("",)
                for query in queries:
                    yield client, method, path + query, headers, address, None, b""
                if not takes_body or hostile:
                    continue
                for content_type, body in BODIES:
                    if content_type == FORM and "X-CSRF" in headers:
                        body = body.replace(b"csrf=", f"csrf={csrf}&x=".encode())
                    yield client, method, path, headers, address, content_type, body


def test_every_route_answers_malformed_requests_without_a_500_and_loses_no_trial(
    fuzz_app, midway, storage
):
    identities, csrf = _identities(fuzz_app, midway)
    # Signing in with wrong secrets locks the address out and signing out ends the admin
    # session: those routes go last, so that the admin views are fuzzed signed in.
    paths = sorted(set(_paths(fuzz_app)), key=lambda p: (p[0].startswith(SIGN_IN_OUT), p))
    assert {"/api/session", "/api/serve", "/api/trials", "/admin/", "/healthz"} <= {
        path for path, _ in paths
    }
    failures = []
    seen = 0
    statuses: list[int] = []
    for client, method, path, headers, address, content_type, body in _requests(
        paths, identities, csrf
    ):
        sent = {**headers, **({"Content-Type": content_type} if content_type else {})}
        reply = client.open(
            path, method=method, data=body, headers=sent, environ_base={"REMOTE_ADDR": address}
        )
        seen += 1
        statuses.append(reply.status_code)
        if reply.status_code >= 500:
            failures.append((method, path[:80], content_type, body[:60], reply.status_code))
    assert seen > 10_000
    # The bodies reached the views (not only the method check and the rate limits).
    assert {200, 302, 400, 401, 403, 404, 409, 413, 415} <= set(statuses)
    assert failures == []
    _finish(midway, storage)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec=None), max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)


def _encode(body) -> bytes:
    # Python's encoder writes NaN/Infinity and lone surrogates as escapes, as an attacker can.
    return json.dumps(body, allow_nan=True).encode()


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    endpoint=st.sampled_from(
        ["/api/session", "/api/consent", "/api/serve", "/api/trials", "/api/survey"]
    ),
    replaced=st.dictionaries(
        st.sampled_from(sorted({*TRIAL_FIELDS, *SURVEY_FIELDS, "prolific_pid", "consent"}))
        | st.text(max_size=8),
        JSON_VALUES,
        max_size=4,
    ),
    dropped=st.sets(st.sampled_from(sorted(TRIAL_FIELDS)), max_size=3),
)
def test_mutated_api_bodies_never_answer_500(
    fuzz_app, midway, storage, endpoint, replaced, dropped
):
    base = {
        "/api/session": {"prolific_pid": midway.pid, "session_id": midway.session_id},
        "/api/consent": {"consent": True},
        "/api/serve": {"trial_index": ANSWERED_BEFORE},
        "/api/trials": midway.trial_body(ANSWERED_BEFORE),
        "/api/survey": {
            "age": 30,
            "gender": "prefer not to say",
            "native_language": "English",
            "attentive": True,
            "no_ai_assistance": True,
        },
    }[endpoint]
    body = {k: v for k, v in base.items() if k not in dropped} | replaced
    reply = midway.client.post(
        endpoint,
        data=_encode(body),
        content_type=JSON,
        headers={"X-Session-Token": midway.token},
    )
    assert reply.status_code < 500, (endpoint, body, reply.get_data(as_text=True)[:200])
    assert reply.is_json
    if endpoint == "/api/session" and reply.status_code == 200:
        # Starting again with the same token resumes: the token stays the same.
        assert reply.get_json()["token"] == midway.token
    after = _stored_trials(storage)
    for index, record in midway.stored_before.items():
        assert after[index] == record, index


def test_a_participant_finishes_after_mutated_bodies(fuzz_app, midway, storage):
    """The stored answers survive the mutations, and the session can still be completed."""
    for value in (None, True, -1, 2**64, "\udfff", [], {}, 1e308, "x" * 10_000):
        for field in ("trial_index", "response", "item_id", "client_trial_id", "timed_out"):
            body = {**midway.trial_body(ANSWERED_BEFORE), field: value}
            reply = midway.client.post(
                "/api/trials",
                data=_encode(body),
                content_type=JSON,
                headers={"X-Session-Token": midway.token},
            )
            assert 400 <= reply.status_code < 500, (field, value, reply.status_code)
    _finish(midway, storage)


RAW_REQUESTS = (
    b"GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /admin/participants/%ED%BF%BF/status HTTP/1.1\r\nHost: x\r\n\r\n",
    b"POST /api/trials HTTP/1.1\r\nHost: x\r\nX-Session-Token: \xff\xfe\x80\r\n"
    b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    b"POST /api/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Content-Length: 5\r\n\r\n{\xff\xfe}",
    b"POST /api/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Content-Length: -1\r\n\r\n{}",
    b"POST /api/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Content-Length: 99999999999999999999\r\n\r\n{}",
    b"POST /api/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b'Transfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\nzz\r\n',
    b"GET /admin/ HTTP/1.1\r\nHost: x\r\nCookie: tracktale_admin=\xff\xfe.\x00; =\r\n\r\n",
    b"GET /admin/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xff\xfe\r\n\r\n",
    b"GET /?PROLIFIC_PID=%ED%BF%BF&STUDY_ID=%FF HTTP/1.1\r\nHost: x\r\n\r\n",
)


def _raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        connection.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := connection.recv(65536):
            reply += chunk
    return reply


def test_raw_bytes_no_test_client_sends_are_answered_without_a_500(fuzz_app, midway, storage):
    with serve_in_thread(fuzz_app) as server:
        port = int(server.url.rsplit(":", 1)[1].strip("/"))
        for request in RAW_REQUESTS:
            reply = _raw(port, request)
            status_line = reply.split(b"\r\n", 1)[0]
            assert status_line.startswith(b"HTTP/1."), (request[:50], reply[:80])
            status = int(status_line.split()[1])
            assert status < 500, (request[:60], status_line)
    _finish(midway, storage)
