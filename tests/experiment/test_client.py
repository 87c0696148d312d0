"""The study client's retry rules: what the browser retries, with back-off, and when it gives up."""

from __future__ import annotations

import http.server
import json
import threading

import pytest

from tracktale.errors import TracktaleError
from tracktale.experiment.simulation.client import StudyClient


@pytest.fixture
def server():
    """A server answering POSTs with the statuses queued in ``server.statuses``, then 200."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length", 0))
            httpd.bodies.append(json.loads(self.rfile.read(length)))
            status = httpd.statuses.pop(0) if httpd.statuses else 200
            raw = json.dumps({"status": status}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.statuses, httpd.bodies = [], []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def client_for(httpd, waits, **options):
    return StudyClient(f"http://127.0.0.1:{httpd.server_port}", sleep=waits.append, **options)


def test_5xx_and_429_are_retried_with_a_growing_jittered_back_off(server):
    server.statuses = [503, 500, 429, 502]
    waits = []
    client = client_for(server, waits, max_delay=1.0)
    reply = client.post("/api/trial", {"n": 1})
    assert reply.status == 200 and reply.data == {"status": 200}
    assert client.retries == 4 and len(server.bodies) == 5
    assert all(body == {"n": 1} for body in server.bodies)
    # 0.25, 0.5, 1, then capped at max_delay 1, each times a jitter factor in [0.5, 1.5).
    for wait, delay in zip(waits, [0.25, 0.5, 1.0, 1.0], strict=True):
        assert 0.5 * delay <= wait < 1.5 * delay


def test_a_4xx_other_than_429_is_an_answer_not_a_failure(server):
    server.statuses = [409]
    waits = []
    client = client_for(server, waits)
    assert client.post("/api/trial", {}).status == 409
    assert client.retries == 0 and waits == []


def test_it_gives_up_after_max_attempts_naming_the_last_problem(server):
    server.statuses = [503] * 3
    waits = []
    client = client_for(server, waits, max_attempts=3)
    with pytest.raises(TracktaleError, match=r"/api/trial: gave up after 3 tries \(HTTP 503\)"):
        client.post("/api/trial", {})
    assert len(server.bodies) == 3 and client.retries == 2 and len(waits) == 2


def test_network_errors_are_retried_and_named_when_it_gives_up():
    waits = []
    # Nothing listens on port 1 of the loopback: every connection is refused.
    client = StudyClient("http://127.0.0.1:1", sleep=waits.append, max_attempts=2)
    with pytest.raises(TracktaleError, match=r"gave up after 2 tries \(ConnectionRefusedError"):
        client.post("/api/session", {})
    assert client.retries == 1 and len(waits) == 1
