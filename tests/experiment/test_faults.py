"""Faults a real study server meets, on a real server process (issue 30).

Each test starts the production server (gunicorn, as ``serve --workers`` runs it) in a
subprocess and drives it over HTTP as the page does, then breaks what is under it: the
database unwritable for a while (hole 2: ``chattr +i``, as under a backup tool's lock), an
unwritable ``-shm`` file (hole 3), the wall clock stepped back and two servers with skewed
clocks (hole 4), a damaged database file (hole 5), a full disk, and a ``-shm`` file truncated
under a running server. They need root (``chattr``, a tmpfs of their own to fill); without it
they skip here and fail under CI (``require``). The wall clock of one server process is
stepped by a small preloaded library (``clockshift.c``, built with the C compiler).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require
from tests.experiment.conftest import ADMIN_SECRET, Participant
from tracktale.experiment.storage.store import Storage
from tracktale.stimulus_set import write_stimulus_set

pytestmark = pytest.mark.slow

# a real server, over HTTP -----------------------------------------------------------------


class _Reply:
    """An HTTP answer with the parts of Flask's test response the ``Participant`` helper reads."""

    def __init__(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.status_code = status
        self.data = body
        self.headers = headers

    def get_json(self) -> Any:
        return json.loads(self.data) if self.data else None


class HttpClient:
    """Posts as Flask's test client does, to a server on a port (no retries: every status
    the server answers is seen)."""

    def __init__(self, url: str) -> None:
        self.host, port = url.removeprefix("http://").split(":")
        self.port = int(port)

    def request(self, method: str, path: str, body: Any = None, headers: Any = None) -> _Reply:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            sent = {"Content-Type": "application/json", **(headers or {})}
            data = None if body is None else json.dumps(body)
            connection.request(method, path, body=data, headers=sent)
            answer = connection.getresponse()
            return _Reply(answer.status, answer.read(), dict(answer.getheaders()))
        finally:
            connection.close()

    def post(self, path: str, json: Any = None, headers: Any = None) -> _Reply:  # noqa: A002
        return self.request("POST", path, json, headers)

    def get(self, path: str, headers: Any = None) -> _Reply:
        return self.request("GET", path, None, headers)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """``gunicorn 'tracktale.experiment.web.app:create_app_from_env()'`` on a free port."""

    def __init__(self, study: Path, log: Path, *, workers: int = 2, env: Any = None) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log
        environment = {
            **os.environ,
            "TRACKTALE_STUDY": str(study),
            "TRACKTALE_ADMIN_SECRET": ADMIN_SECRET,
            "TRACKTALE_SECRET_KEY": "fault-test-key",
            **(env or {}),
        }
        command = [sys.executable, "-m", "gunicorn", "--workers", str(workers)]
        command += ["--worker-class", "gthread", "--threads", "4", "--graceful-timeout", "5"]
        command += ["--no-control-socket"]  # gunicorn 27: one per user by default
        command += ["--bind", f"127.0.0.1:{self.port}"]
        command += ["tracktale.experiment.web.app:create_app_from_env()"]
        with log.open("ab") as output:
            self.process = subprocess.Popen(
                command, env=environment, stdout=output, stderr=subprocess.STDOUT
            )

    def wait_ready(self, seconds: float = 90) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the server stopped:\n{self.log()}")
            try:
                if HttpClient(self.url).get("/healthz").status_code == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"the server did not start:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


@contextlib.contextmanager
def running(study: Path, log: Path, **kwargs: Any) -> Iterator[Server]:
    server = Server(study, log, **kwargs)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def write_study(folder: Path, human_set, database: Path) -> Path:
    """A study file on the human set (stimuli in ``folder``), its database at ``database``."""
    stimuli = folder / "stimuli"
    if not stimuli.exists():
        write_stimulus_set(human_set, stimuli)
    study = folder / "study.yaml"
    study.write_text(
        f"stimuli: {stimuli}\ndatabase: {database}\n"
        "prolific:\n  completion_code: DONE123\n  screenout_code: OUT456\n"
    )
    return study


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


@pytest.fixture
def tmpfs(tmp_path) -> Iterator[Path]:
    """A small tmpfs of our own, unmounted afterwards (needs root and the right to mount)."""
    require(os.geteuid() == 0, "the fault tests need root (they mount a tmpfs)")
    folder = tmp_path / "mounted"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(folder)], capture_output=True
    )
    require(mounted.returncode == 0, f"cannot mount a tmpfs here: {mounted.stderr.decode()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def _started(url: str, human_set) -> Participant:
    person = Participant(HttpClient(url), human_set)
    assert person.start().status_code == 200
    assert person.consent().status_code == 200
    return person


def _refused_for_now(reply: _Reply) -> bool:
    """A 503 the outbox and the page retry after ``Retry-After`` (never a 500)."""
    return reply.status_code == 503 and int(reply.headers.get("Retry-After", "0")) >= 1


# hole 2: a read-only window -------------------------------------------------------------------


def _immutable(path: Path, on: bool) -> None:
    """``chattr +i``: no process may open the file for writing (root included); files already
    open stay writable, as under a backup tool's lock or a read-only remount's first moments."""
    result = subprocess.run(["chattr", "+i" if on else "-i", str(path)], capture_output=True)
    if on:
        require(result.returncode == 0, f"chattr +i fails here: {result.stderr.decode().strip()}")


def _respawn_workers(server: Server) -> None:
    """Kill the server's workers; gunicorn starts new ones (which open new connections)."""
    pid = server.process.pid
    children = Path(f"/proc/{pid}/task/{pid}/children")
    old = set(children.read_text().split())
    for child in old:
        os.kill(int(child), 9)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        now = set(children.read_text().split())
        if now and not now & old:
            server.wait_ready()
            return
        time.sleep(0.1)
    raise AssertionError(f"gunicorn started no new worker:\n{server.log()}")


def test_a_read_only_window_ends_by_itself(tmpfs, tmp_path, human_set):
    database = tmpfs / "study.sqlite"
    study = write_study(tmp_path, human_set, database)
    with running(study, tmp_path / "first.log") as first:
        person = _started(first.url, human_set)
        for index in range(3):
            assert person.answer(index).status_code == 201
        waiting = person.trial_body(3)  # served before the window, answered during it
        _immutable(database, True)
        try:
            require(
                subprocess.run(["sh", "-c", f"exec 3>>{database}"]).returncode != 0,
                "chattr +i does not stop writers on this filesystem",
            )
            _respawn_workers(first)  # workers (and their connections) started in the window
            during = [person.post("/api/trials", waiting) for _ in range(6)]
            during.append(person.post("/api/serve", {"trial_index": 4}))
            assert all(_refused_for_now(reply) for reply in during), [
                reply.status_code for reply in during
            ]
            # Another server process that starts during the window.
            late = Server(study, tmp_path / "late.log", workers=1)
            late.wait_ready()
            newcomer = Participant(HttpClient(late.url), human_set)
            assert _refused_for_now(newcomer.start())
        finally:
            _immutable(database, False)
        try:
            assert person.post("/api/trials", waiting).status_code == 201
            for index in range(4, 12):
                assert person.answer(index).status_code == 201, index
            assert newcomer.start().status_code == 200
            assert newcomer.consent().status_code == 200
            for index in range(8):
                assert newcomer.answer(index).status_code == 201, index
        finally:
            late.stop()
    assert "Traceback" not in first.log() + late.log()


# hole 3: an unwritable -shm file ---------------------------------------------------------------


@contextlib.contextmanager
def _holding(database: Path) -> Iterator[None]:
    """Another process keeps the database open, so that its ``-shm`` file stays."""
    code = (
        "import sqlite3, sys, time\n"
        f"c = sqlite3.connect({str(database)!r})\n"
        "c.execute('PRAGMA journal_mode=WAL'); c.execute('SELECT count(*) FROM meta').fetchone()\n"
        "print('ready', flush=True); time.sleep(600)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"ready"
        yield
    finally:
        holder.kill()
        holder.wait(10)


def test_an_unwritable_shm_file_is_named_and_answered_with_503(tmpfs, tmp_path, human_set):
    database = tmpfs / "study.sqlite"
    Storage(f"sqlite:///{database}").close()
    study = write_study(tmp_path, human_set, database)
    shm = Path(f"{database}-shm")
    with _holding(database):
        assert shm.exists()
        _immutable(shm, True)
        try:
            with running(study, tmp_path / "server.log", workers=1) as server:
                assert f"{shm} cannot be written" in server.log()
                person = Participant(HttpClient(server.url), human_set)
                for _ in range(3):
                    assert _refused_for_now(person.start())
                _immutable(shm, False)
                assert person.start().status_code == 200
                assert person.consent().status_code == 200
                assert person.answer(0).status_code == 201
                assert server.process.poll() is None
        finally:
            _immutable(shm, False)
    assert "Traceback" not in server.log()


# hole 4: the clock stepped back, two servers with skewed clocks -------------------------------


@pytest.fixture
def clock_shift(tmp_path) -> Path:
    """``clockshift.c`` built into a library to preload (needs a C compiler)."""
    compiler = shutil.which("cc")
    require(compiler is not None, "no C compiler to build the clock-stepping library")
    library = tmp_path / "clockshift.so"
    source = Path(__file__).with_name("clockshift.c")
    subprocess.run(
        [str(compiler), "-shared", "-fPIC", "-O2", "-o", str(library), str(source), "-ldl"],
        check=True,
    )
    return library


def _step(path: Path, seconds: float) -> None:
    """Set a server's clock offset (written whole, then renamed: never read half-written)."""
    partial = path.with_suffix(".partial")
    partial.write_text(f"{seconds}\n")
    partial.replace(path)


def test_clock_steps_and_skewed_servers_fail_no_answer(tmp_path, human_set, clock_shift):
    database = tmp_path / "study.sqlite"
    study = write_study(tmp_path, human_set, database)
    offsets = {name: tmp_path / f"{name}.offset" for name in ("a", "b")}
    for path in offsets.values():
        _step(path, 0)

    def env(name: str) -> dict[str, str]:
        return {"LD_PRELOAD": str(clock_shift), "TRACKTALE_CLOCK_OFFSET_FILE": str(offsets[name])}

    with (
        running(study, tmp_path / "a.log", workers=1, env=env("a")) as a,
        running(study, tmp_path / "b.log", workers=1, env=env("b")) as b,
    ):
        person = _started(a.url, human_set)
        assert person.answer(0).status_code == 201
        person.shown(1)
        _step(offsets["a"], -3600)  # stepped back an hour between serve and answer
        assert person.answer(1).status_code == 201
        _step(offsets["a"], 0)
        _step(offsets["b"], -30)  # served by A, answered by B, whose clock is 30 s behind
        person.shown(2)
        on_b = Participant(HttpClient(b.url), human_set, pid=person.pid)
        on_b.token, on_b.state, on_b.served = person.token, person.state, person.served
        assert on_b.answer(2).status_code == 201
    storage = Storage(f"sqlite:///{database}", create=False)
    try:
        trials = list(storage.trials())
    finally:
        storage.close()
    assert [trial.trial_index for trial in trials] == [0, 1, 2]
    for trial in trials:
        assert 0 <= trial.server_elapsed_ms < 10_000  # one machine: one monotonic clock
        assert trial.flags == ""


# hole 5: a damaged database file --------------------------------------------------------------


def _damage(database: Path, *, header: bool) -> None:
    """Overwrite pages of the file with noise (the first page too if ``header``)."""
    data = bytearray(database.read_bytes())
    noise = random.Random(30)
    page = 4096
    first = 0 if header else 1
    for number in range(first, len(data) // page, 2):
        start = number * page + (100 if number == 0 and not header else 0)
        data[start : (number + 1) * page] = noise.randbytes((number + 1) * page - start)
    database.write_bytes(bytes(data))


@pytest.mark.parametrize("header", [False, True], ids=["pages", "header"])
def test_a_damaged_database_is_refused_at_start_with_one_line(tmp_path, human_set, header):
    database = tmp_path / "study.sqlite"
    study = write_study(tmp_path, human_set, database)
    with running(study, tmp_path / "healthy.log", workers=1) as server:
        for _ in range(3):
            assert Participant(HttpClient(server.url), human_set).run_all().status_code == 200
    import sqlite3

    with contextlib.closing(sqlite3.connect(database)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the file itself
    _damage(database, header=header)
    broken = Server(study, tmp_path / "damaged.log", workers=1)
    try:
        code = broken.process.wait(90)
    except subprocess.TimeoutExpired:
        broken.stop()
        raise AssertionError(f"the server started on a damaged file:\n{broken.log()}") from None
    log = broken.log()
    ours = [line for line in log.splitlines() if line.startswith("tracktale: error:")]
    assert code != 0 and len(ours) == 1, log
    assert str(database) in ours[0] and "damaged" in ours[0] and "backup" in ours[0]
    assert "Traceback" not in log


# also seen: a full disk ---------------------------------------------------------------------------


def test_a_full_disk_is_a_503_with_retry_after_and_nothing_is_lost(tmpfs, tmp_path, human_set):
    study = write_study(tmp_path, human_set, tmpfs / "study.sqlite")
    with running(study, tmp_path / "server.log") as server:
        person = _started(server.url, human_set)
        assert person.answer(0).status_code == 201
        waiting = person.trial_body(1)
        filler = tmpfs / "filler"
        with filler.open("wb") as output, contextlib.suppress(OSError):
            while True:
                output.write(b"\0" * 65536)
                output.flush()
        replies = [person.post("/api/trials", waiting) for _ in range(3)]
        filler.unlink()
        assert all(_refused_for_now(reply) for reply in replies), [
            reply.status_code for reply in replies
        ]
        assert person.post("/api/trials", waiting).status_code == 201
        assert person.answer(2).status_code == 201
    assert shutil.disk_usage(tmpfs).free > 0
    assert "Traceback" not in server.log()


def test_a_truncated_shm_file_leaves_a_line_and_the_next_worker_serves(tmpfs, tmp_path, human_set):
    # Issue 30: a -shm file truncated under a running server (a backup tool, a careless copy)
    # killed the worker with SIGBUS and not a line in the log.
    database = tmpfs / "study.sqlite"
    study = write_study(tmp_path, human_set, database)
    with running(study, tmp_path / "server.log", workers=1) as server:
        person = _started(server.url, human_set)
        assert person.answer(0).status_code == 201
        waiting = person.trial_body(1)
        os.truncate(f"{database}-shm", 0)
        statuses = []
        for _ in range(20):  # the page's outbox: retry until acknowledged
            try:
                statuses.append(person.post("/api/trials", waiting).status_code)
            except OSError:  # the worker died under the request
                statuses.append(None)
            if statuses[-1] == 201:
                break
            time.sleep(0.5)
        assert statuses[-1] == 201, statuses
        assert person.answer(2).status_code == 201
    log = server.log()
    assert None in statuses  # the worker died under a request (SIGBUS) ...
    assert "Fatal Python error: Bus error" in log  # ... and said so, with its stack
    trials = Storage(f"sqlite:///{database}", create=False)
    try:
        assert [trial.trial_index for trial in trials.trials()] == [0, 1, 2]
    finally:
        trials.close()
