"""Running the study server: in a background thread (tests, the main job) or under gunicorn.

``serve_in_thread`` starts Werkzeug's threaded server on a free port and returns its URL, so a
pipeline can generate stimuli, serve the study in-process, run simulated participants against
it and stop it again. ``run_gunicorn`` is the production server (``serve --workers N``);
``serve`` without workers runs Werkzeug's server with :class:`PrivateRequestHandler`, whose
access log leaves out query strings (the participant link carries ``PROLIFIC_PID`` and
``SESSION_ID``). gunicorn keeps no access log.
"""

from __future__ import annotations

import faulthandler
import sys
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from flask import Flask
from werkzeug.serving import WSGIRequestHandler


def log_crashes() -> None:
    """Have a crash of the process leave a line and the Python stack on stderr.

    SIGSEGV and SIGBUS (a ``-shm`` file truncated under SQLite) otherwise kill it silently.
    """
    if not faulthandler.is_enabled():
        faulthandler.enable(file=sys.stderr)


class PrivateRequestHandler(WSGIRequestHandler):
    """Werkzeug's request handler, logging each request without its query string."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """One access-log line: method, path (no query: it holds Prolific ids), status."""
        path = urlsplit(self.path).path
        self.log("info", '"%s %s %s" %s %s', self.command, path, self.request_version, code, size)


@dataclass
class RunningServer:
    """A server running in a background thread."""

    url: str
    _server: Any
    _thread: threading.Thread

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_in_thread(app: Flask, host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """Serve ``app`` from a daemon thread (port 0: any free port).

    Returns:
        The running server; use it as a context manager or call ``stop()``.
    """
    from werkzeug.serving import WSGIRequestHandler, make_server

    class QuietHandler(WSGIRequestHandler):
        def log_request(self, *args: Any, **kwargs: Any) -> None:
            pass  # one line per trial would drown the pipeline's output

    server = make_server(host, port, app, threaded=True, request_handler=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, name="tracktale-study", daemon=True)
    thread.start()
    return RunningServer(f"http://{host}:{server.server_port}", server, thread)


def run_gunicorn(
    app_factory: Any, host: str, port: int, workers: int, threads: int = 8
) -> None:  # pragma: no cover - exercised by the load benchmark
    """Serve with gunicorn (gthread workers); each worker builds its own app.

    Args:
        app_factory: Called once per worker to build the Flask app.
        host: Interface to bind.
        port: Port to bind.
        workers: Worker processes.
        threads: Threads per worker.
    """
    from gunicorn.app.base import BaseApplication

    class _Application(BaseApplication):
        def load_config(self) -> None:
            self.cfg.set("bind", f"{host}:{port}")
            self.cfg.set("workers", workers)
            self.cfg.set("worker_class", "gthread")
            self.cfg.set("threads", threads)
            self.cfg.set("accesslog", None)
            # gunicorn 27 opens a control socket, one path per user: a second server on the
            # machine (another study, a test) would take it over. Nothing here uses it.
            self.cfg.set("control_socket_disable", True)

        def load(self) -> Flask:
            return app_factory()

    _Application().run()
