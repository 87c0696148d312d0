"""Fixtures of the study tests: a study on the human set, its app, and an API helper."""

from __future__ import annotations

import datetime as dt
import itertools
import os

import pytest
import sqlalchemy as sa

from tests.conftest import require
from tracktale.experiment.storage.store import Storage, metadata
from tracktale.experiment.study.config import Prolific, Secrets, StudyConfig
from tracktale.experiment.web.app import create_app

ADMIN_SECRET = "test-admin-secret-0123"
POSTGRES_ENV = "TRACKTALE_TEST_POSTGRES_URL"
_pids = itertools.count()


@pytest.fixture
def secrets():
    return Secrets(admin_secret=ADMIN_SECRET, secret_key="test-key", export_salt="test-salt")


@pytest.fixture
def study_config(tmp_path):
    return StudyConfig(
        database=str(tmp_path / "study.sqlite"),
        prolific=Prolific(completion_code="DONE123", screenout_code="OUT456"),
    )


def open_storage(backend: str, sqlite_url: str) -> Storage:
    """A study database on ``sqlite`` (at ``sqlite_url``) or on the test PostgreSQL server,
    emptied first (PostgreSQL: skipped without it, failed under ``TRACKTALE_REQUIRE_SERVICES``).
    """
    if backend == "sqlite":
        return Storage(sqlite_url)
    url = os.environ.get(POSTGRES_ENV)
    require(bool(url), f"${POSTGRES_ENV} is not set (scripts/services/postgres.sh)")
    engine = sa.create_engine(url)
    metadata.drop_all(engine)  # each test starts from empty tables
    engine.dispose()
    return Storage(url)


@pytest.fixture
def storage(study_config):
    storage = Storage(study_config.database_url())
    yield storage
    storage.close()


@pytest.fixture
def app(study_config, storage, human_set, secrets):
    app = create_app(study_config, storage=storage, stimulus_set=human_set, secrets=secrets)
    app.testing = True
    return app


@pytest.fixture
def client(app):
    return app.test_client()


def new_pid() -> str:
    return f"PID{next(_pids):05d}abcdef"


class Participant:
    """Drives the API as the page would (token, bodies), answering correctly by default.

    A trial is served (``/api/serve``) before it is answered, as the page does; ``answer``
    serves it first when it was not served yet. The default times are short, so that an
    answer sent at once is not flagged as faster than its reported times.
    """

    def __init__(self, client, stimuli, pid=None, session_id=None):
        self.client = client
        self.stimuli = stimuli
        self.pid = pid or new_pid()
        self.session_id = session_id or f"S{self.pid}"
        self.token = None
        self.state = None
        self.served = {}
        self.replies = {}

    def start(self, token=None, **extra):
        body = {"prolific_pid": self.pid, "session_id": self.session_id, **extra}
        headers = {"X-Session-Token": token} if token else {}
        reply = self.client.post("/api/session", json=body, headers=headers)
        if reply.status_code == 200:
            self.state = reply.get_json()
            self.token = self.state["token"]
        return reply

    def post(self, path, body):
        reply = self.client.post(path, json=body, headers={"X-Session-Token": self.token})
        if path == "/api/trials" and reply.status_code in (200, 201):
            self.replies[body["trial_index"]] = reply
        return reply

    def consent(self, agree=True):
        return self.post("/api/consent", {"consent": agree})

    def serve(self, index):
        reply = self.post("/api/serve", {"trial_index": index})
        if reply.status_code == 200:
            self.served[index] = reply.get_json()["trial"]
        return reply

    def shown(self, index):
        """The served content of a trial (serving it if needed)."""
        if index not in self.served:
            reply = self.serve(index)
            assert reply.status_code == 200, reply.get_json()
        return self.served[index]

    def trial_body(self, index, *, correct=True, timed_out=False, client_trial_id=None):
        shown = self.shown(index)
        item = self.stimuli.get(shown["item_id"])
        if timed_out:
            response = None
        elif shown["task"] == "explicit":
            response = item.answer if correct else "nowhere"
        else:
            good = "left" if shown["options"][0] == item.choice.good.strip() else "right"
            response = good if correct else ("right" if good == "left" else "left")
        return {
            "client_trial_id": client_trial_id or f"{self.pid}-trial-{index:03d}",
            "trial_index": index,
            "item_id": shown["item_id"],
            "task": shown["task"],
            "response": response,
            "timed_out": timed_out,
            "reading_time_ms": 1.5,
            "reading_timed_out": False,
            "response_time_ms": None if timed_out else 1.0,
            "screen_width": 1280,
            "screen_height": 720,
            "blur_count": 0,
            "hidden_count": 0,
        }

    def blind_body(self, index):
        """A well-formed answer to a trial that was never served (its item unknown)."""
        outline = self.state["trials"][index]
        return {
            **{k: v for k, v in self._timing_fields().items()},
            "client_trial_id": f"{self.pid}-blind-{index:03d}",
            "trial_index": index,
            "item_id": "0000000000000000",
            "task": outline["task"],
            "response": "left" if outline["task"] != "explicit" else "box",
        }

    @staticmethod
    def _timing_fields():
        return {
            "timed_out": False,
            "reading_time_ms": 1.5,
            "reading_timed_out": False,
            "response_time_ms": 1.0,
            "screen_width": 1280,
            "screen_height": 720,
            "blur_count": 0,
            "hidden_count": 0,
        }

    def answer(self, index, **kwargs):
        return self.post("/api/trials", self.trial_body(index, **kwargs))

    def answer_before(self, index):
        """Answer (correctly) every trial before ``index`` that is not answered yet."""
        for earlier in range(index):
            if earlier not in self.replies:
                assert self.answer(earlier).status_code in (200, 201)

    def first(self, task, role=None):
        """The skeleton of the first trial of a task (and role)."""
        return next(
            t
            for t in self.state["trials"]
            if t["task"] == task and (role is None or t["role"] == role)
        )

    def survey(self, **changes):
        body = {
            "age": 41,
            "gender": "prefer not to say",
            "native_language": "English",
            "attentive": True,
            "no_ai_assistance": True,
            **changes,
        }
        return self.post("/api/survey", body)

    def run_all(self):
        self.start()
        self.consent()
        for index in range(len(self.state["trials"])):
            assert self.answer(index).status_code == 201
        assert self.survey().status_code == 200
        return self.post("/api/complete", {})


@pytest.fixture
def participant(client, human_set):
    def make(**kwargs):
        return Participant(client, human_set, **kwargs)

    return make


class ServerClock:
    """Moves the study server's clocks: the wall clock every stored time is read from, and
    (from issue 30 on) the monotonic clock elapsed times are measured with.

    ``advance(s)`` lets ``s`` seconds pass; ``step_wall(s)`` steps the wall clock alone, as
    an NTP correction or an administrator's ``date -s`` does.
    """

    def __init__(self, monkeypatch) -> None:
        from tracktale.experiment.storage import store as storage_module

        self.wall = 0.0
        self.mono = 0.0
        real_now = storage_module.now
        monkeypatch.setattr(
            storage_module, "now", lambda: real_now() + dt.timedelta(seconds=self.wall)
        )
        try:
            from tracktale.experiment.storage import clock
        except ImportError:  # before issue 30 the server read the wall clock only
            return
        real_mono = clock.monotonic_ns
        monkeypatch.setattr(clock, "monotonic_ns", lambda: real_mono() + int(self.mono * 1e9))

    def advance(self, seconds: float) -> None:
        self.wall += seconds
        self.mono += seconds

    def step_wall(self, seconds: float) -> None:
        self.wall += seconds


@pytest.fixture
def server_clock(monkeypatch):
    return ServerClock(monkeypatch)
