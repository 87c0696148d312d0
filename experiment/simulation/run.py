"""Simulated participants: whole sessions through the real HTTP API.

Each simulated participant does what the page does (start a session, consent, one POST per
trial, the survey, completion) with behaviour modelled on the source paper's human data:
accuracy falls with complexity (explicit 87% at C1 to 65% at C4, implicit 89% to 76%), each
participant has an ability drawn at random and a complexity slope of their own, each story item
a difficulty of its own (random effects for the mixed models to estimate), a few are inattentive
(near chance, so the below-50% exclusion rule has work to do), and reading and response times
are drawn from log-normal distributions that grow with story length and complexity; responses
slower than the limit are timeouts. Their rows are marked ``source="simulated"`` by the server,
which only accepts them with the admin secret.
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.experiment.paradigms import get_human_study
from tracktale.experiment.simulation.client import StudyClient
from tracktale.experiment.simulation.reading import add_words
from tracktale.item import Item
from tracktale.stimulus_set import StimulusSet

BASE_ACCURACY = {
    "explicit": {1: 0.87, 2: 0.80, 3: 0.72, 4: 0.65, 5: 0.58},
    "implicit": {1: 0.89, 2: 0.85, 3: 0.80, 4: 0.76, 5: 0.72},
}
"""P(correct) by task and complexity averaged over attentive participants and items (the source
paper's cell means, Fig. 3; C2 and C3 interpolated): :func:`base_logit` solves for the log-odds
of an average person on an average item that give these means."""
ABILITY_SD = 0.5
"""SD of the participants' abilities (log-odds)."""
ITEM_SD = 0.5
"""SD of the story items' random intercepts (log-odds). At 0.2 the mixed models fitted a zero
item variance in 13.8% of simulated studies of 48 people, at 0.5 in none
(docs/explanation/statistics.md); with none (before) every default run opened with singular fits."""
SLOPE_SD = 0.3
"""SD of the participants' own complexity slopes around the table's (log-odds per complexity
level): without them the report's by-participant slopes model fitted a zero slope variance."""
SLOPE_CENTRE = 2.5
"""The complexity at which a participant's own slope leaves their accuracy as it is (the human
design's levels 1-4)."""
FILLER_ACCURACY = 0.92
INATTENTIVE_RATE = 0.06
INATTENTIVE_ACCURACY = {"explicit": 0.3, "implicit": 0.5, "comprehension": 0.5}
SCREENS = ((1920, 969), (1536, 730), (1440, 789), (1366, 657), (2560, 1305), (1280, 632))
LOCATIONS = ("box", "bag", "basket", "drawer", "shelf", "cupboard", "table")


@dataclass(frozen=True)
class SimulatedPerson:
    """One simulated participant's traits."""

    prolific_pid: str
    ability: float
    """Shift of every log-odds of a correct answer."""
    attentive: bool
    speed: float
    """Multiplier of reading and response times."""
    screen: tuple[int, int]
    age: int
    gender: str


@dataclass
class SimulationReport:
    """What a simulation run did.

    Attributes:
        started: Participants whose session started.
        completed: Participants the server confirmed completed (redirect received).
        trials_sent: Trials POSTed (each once, retries not counted).
        trials_acknowledged: Trials the server acknowledged (stored or duplicate).
        latencies: Seconds of each acknowledged trial POST (last attempt, as the client saw it).
        server_latencies: The server's own handling time of the same POSTs.
        serve_latencies: Seconds of each trial's serve (the wait before a trial starts).
        acknowledged_at: ``time.monotonic()`` when each trial was acknowledged (the order of
            ``latencies`` and ``serve_latencies``).
        retries: Requests retried after a network error, 5xx or 429.
        stopped: Participants stopped mid-session at the end of a measurement window.
        errors: One line per participant that failed.
        participant_ids: The server's ids of the simulated participants.
    """

    started: int = 0
    completed: int = 0
    trials_sent: int = 0
    trials_acknowledged: int = 0
    latencies: list[float] = field(default_factory=list)
    server_latencies: list[float] = field(default_factory=list)
    serve_latencies: list[float] = field(default_factory=list)
    acknowledged_at: list[float] = field(default_factory=list)
    retries: int = 0
    stopped: int = 0
    errors: list[str] = field(default_factory=list)
    participant_ids: list[str] = field(default_factory=list)

    def merge(self, other: SimulationReport) -> None:
        """Add another report's counts."""
        self.started += other.started
        self.completed += other.completed
        self.trials_sent += other.trials_sent
        self.trials_acknowledged += other.trials_acknowledged
        self.latencies.extend(other.latencies)
        self.server_latencies.extend(other.server_latencies)
        self.serve_latencies.extend(other.serve_latencies)
        self.acknowledged_at.extend(other.acknowledged_at)
        self.retries += other.retries
        self.stopped += other.stopped
        self.errors.extend(other.errors)
        self.participant_ids.extend(other.participant_ids)


def draw_person(rng: random.Random, index: int, prefix: str = "SIM") -> SimulatedPerson:
    """Draw one participant's traits (deterministic for the generator's state)."""
    pid = f"{prefix}{index:04d}{rng.getrandbits(64):016x}"[:24]
    return SimulatedPerson(
        prolific_pid=pid,
        ability=rng.gauss(0.0, ABILITY_SD),
        attentive=rng.random() >= INATTENTIVE_RATE,
        speed=math.exp(rng.gauss(0.0, 0.2)),
        screen=rng.choice(SCREENS),
        age=max(18, min(80, round(rng.gauss(40.8, 12.9)))),
        gender=rng.choices(("male", "female", "prefer not to say"), weights=(24, 20, 4))[0],
    )


def _fixed_normal(key: str) -> float:
    """A standard normal draw fixed by ``key`` (a digest, not a generator: no draw shifts)."""
    digest = hashlib.sha256(key.encode()).digest()
    uniform = (int.from_bytes(digest[:8], "big") + 0.5) / 2**64
    return NormalDist().inv_cdf(uniform)


def item_effect(item: Item, sd: float = ITEM_SD) -> float:
    """An item's random intercept: a draw from N(0, ``sd``) fixed by the item's id.

    The same item is as hard for every participant and in every run (so the same seed gives
    the same data); sets generated with another seed hold other items, which draw afresh.
    """
    return sd * _fixed_normal(f"item-effect|{item.item_id}")


def person_slope(person: SimulatedPerson, sd: float = SLOPE_SD) -> float:
    """A participant's own complexity slope (added to the table's), N(0, ``sd``).

    Fixed by their made-up Prolific id rather than drawn from the simulation's generator, so
    every other trait of every person stays what the seed gave before slopes were added.
    """
    return sd * _fixed_normal(f"complexity-slope|{person.prolific_pid}")


def p_correct(
    person: SimulatedPerson,
    item: Item,
    task: str,
    item_sd: float = ITEM_SD,
    slope_sd: float = SLOPE_SD,
) -> float:
    """The probability that ``person`` answers ``item`` correctly in ``task``.

    ``item_sd`` scales the item's random intercept (:func:`item_effect`; 0: an average item),
    ``slope_sd`` the person's own complexity slope (:func:`person_slope`; 0: the table's).
    Comprehension questions have neither.
    """
    if not person.attentive:
        return INATTENTIVE_ACCURACY[task]
    if task == "comprehension":
        logit = math.log(FILLER_ACCURACY / (1 - FILLER_ACCURACY))
    else:
        complexity = int(item.condition.get("complexity", 1))
        logit = base_logit(task, complexity) + item_effect(item, item_sd)
        logit += person_slope(person, slope_sd) * (complexity - SLOPE_CENTRE)
    return 1 / (1 + math.exp(-(logit + person.ability)))


@functools.cache
def base_logit(task: str, complexity: int) -> float:
    """The log-odds of an average person on an average item.

    Solved so that the mean over people and items is :data:`BASE_ACCURACY`'s (the random
    effects pull a mean towards 50%, so the average person lies further out).
    """
    table = BASE_ACCURACY[task]
    target = table.get(complexity, table[max(table)])
    spread = math.hypot(ABILITY_SD, ITEM_SD, SLOPE_SD * (complexity - SLOPE_CENTRE))
    low, high = -12.0, 12.0
    for _ in range(60):  # bisection: the mean rises with the log-odds
        middle = (low + high) / 2
        low, high = (middle, high) if _mean_chance(middle, spread) < target else (low, middle)
    return (low + high) / 2


def _mean_chance(logit: float, spread: float) -> float:
    """E[logistic(logit + spread * Z)] for a standard normal Z (midpoint rule over +-8 SD)."""
    steps = 800
    width = 16 / steps
    normal = NormalDist()
    total = 0.0
    for step in range(steps):
        z = -8 + (step + 0.5) * width
        total += normal.pdf(z) * width / (1 + math.exp(-(logit + spread * z)))
    return total


def lognormal_ms(rng: random.Random, median: float, sigma: float) -> float:
    """A simulated time in ms: log-normal around ``median`` (one draw of ``rng``), to 0.1 ms."""
    return round(median * math.exp(rng.gauss(0.0, sigma)), 1)


def behave(
    rng: random.Random,
    person: SimulatedPerson,
    item: Item,
    shown: dict[str, Any],
    timing: dict[str, int],
) -> dict[str, Any]:
    """What the person does on one trial: the request body the page would send."""
    task = shown["task"]
    words = len(item.context.split())
    reading = lognormal_ms(rng, (words * 230 + 800) * person.speed, 0.25)
    reading_timed_out = reading >= timing["reading_ms"]
    complexity = int(item.condition.get("complexity", 1))
    median = {"explicit": 3200, "implicit": 4300, "comprehension": 3300}[task]
    response_ms = lognormal_ms(rng, (median + 450 * (complexity - 1)) * person.speed, 0.4)
    timed_out = response_ms >= timing["response_ms"]
    correct = rng.random() < p_correct(person, item, task)
    if timed_out:
        response = None
    elif task == "explicit":
        response = _typed(rng, item, correct)
    else:
        good = shown["good_side"]
        response = good if correct else ("right" if good == "left" else "left")
    return {
        "trial_index": shown["index"],
        "item_id": shown["item_id"],
        "task": task,
        "response": response,
        "timed_out": timed_out,
        "reading_time_ms": min(reading, float(timing["reading_ms"])),
        "reading_timed_out": reading_timed_out,
        "response_time_ms": None if timed_out else response_ms,
        "screen_width": person.screen[0],
        "screen_height": person.screen[1],
        "blur_count": int(rng.random() < 0.03),
        "hidden_count": int(rng.random() < 0.02),
    }


def _typed(rng: random.Random, item: Item, correct: bool) -> str:
    if correct:
        return rng.choice(
            (item.answer, item.answer, item.answer.capitalize(), f"the {item.answer}")
        )
    nouns = [c["noun"] for c in item.truth.get("containers", []) if c.get("noun") != item.answer]
    wrong = nouns or [noun for noun in LOCATIONS if noun != item.answer]
    return rng.choice(wrong)


def good_sides(stimuli: StimulusSet, shown_trials: Sequence[dict[str, Any]]) -> list[str | None]:
    """Where the good option is on each served trial, read from the options' texts and items.

    The page is not told which side is correct; a simulated participant who "knows" the
    answer recognises the good continuation by its text, exactly as a person would.
    """
    sides: list[str | None] = []
    for shown in shown_trials:
        item = stimuli.get(shown["item_id"])
        if "options" not in shown or item.choice is None:
            sides.append(None)
            continue
        left = shown["options"][0]
        sides.append("left" if left == item.choice.good.strip() else "right")
    return sides


def run_participant(
    client: StudyClient,
    stimuli: StimulusSet,
    person: SimulatedPerson,
    rng: random.Random,
    admin_secret: str,
    pace: float = 0.0,
    sleep: Callable[[float], None] | None = None,
    stop_at: float | None = None,
) -> SimulationReport:
    """One whole session through the API; returns this participant's report.

    ``stop_at`` (a ``time.monotonic()`` value) ends the session before the next trial once
    passed, without survey or completion: the load benchmark's measurement window.
    """
    report = SimulationReport()
    start = client.post(
        "/api/session",
        {
            "prolific_pid": person.prolific_pid,
            "session_id": f"S{person.prolific_pid}",
            "source": "simulated",
        },
        admin=admin_secret,
    )
    if start.status != 200:
        raise TracktaleError(f"{person.prolific_pid}: session refused: {start.data.get('error')}")
    session = start.data
    if session["stimulus_sha256"] != stimuli.sha256:
        raise TracktaleError(
            "the server runs another stimulus set than the one given (sha256 differs)"
        )
    report.started = 1
    report.participant_ids.append(session["participant_id"])
    token = session["token"]
    _expect(client.post("/api/consent", {"consent": True}, token=token), "consent")
    _answer_trials(client, stimuli, person, rng, session, report, pace, sleep, stop_at)
    if report.stopped:
        return report
    survey = {
        "age": person.age,
        "gender": person.gender,
        "native_language": "English",
        "attentive": person.attentive,
        "no_ai_assistance": True,
    }
    _expect(client.post("/api/survey", survey, token=token), "survey")
    finished = _expect(client.post("/api/complete", {}, token=token), "completion")
    if not str(finished.data.get("redirect", "")).startswith("http"):
        raise TracktaleError(f"{person.prolific_pid}: completion gave no redirect")
    report.completed = 1
    return report


def _answer_trials(
    client: StudyClient,
    stimuli: StimulusSet,
    person: SimulatedPerson,
    rng: random.Random,
    session: dict[str, Any],
    report: SimulationReport,
    pace: float,
    sleep: Callable[[float], None] | None,
    stop_at: float | None = None,
) -> None:
    done = set(session["done"])
    timing = session["timing"]
    token = session["token"]
    studies: dict[str, Any] = {}  # paradigm -> its study as it runs this set
    for outline in session["trials"]:
        if outline["index"] in done:
            continue
        if stop_at is not None and time.monotonic() >= stop_at:
            report.stopped = 1
            return
        # As the page does: the trial's content is served when it starts.
        served = _expect(
            client.post("/api/serve", {"trial_index": outline["index"]}, token=token),
            f"serving trial {outline['index']}",
        )
        shown = served.data["trial"]
        (side,) = good_sides(stimuli, [shown])
        item = stimuli.get(shown["item_id"])
        if item.paradigm not in studies:
            studies[item.paradigm] = get_human_study(item.paradigm).bind(stimuli, None)
        study = studies[item.paradigm]
        body = study.behave(rng, person, item, {**shown, "good_side": side}, timing)
        if "words" in shown:  # the study's stories are read word by word
            body = add_words(rng, person.speed, shown, body, timing["reading_ms"])
        body["client_trial_id"] = (
            f"{session['participant_id']}-{shown['index']}-{rng.getrandbits(32):08x}"
        )
        if pace and sleep:
            shown_ms = body["reading_time_ms"] + (body["response_time_ms"] or timing["response_ms"])
            sleep(pace * shown_ms / 1000)
        report.trials_sent += 1
        reply = _expect(client.post("/api/trials", body, token=token), f"trial {shown['index']}")
        report.trials_acknowledged += 1
        report.latencies.append(reply.seconds)
        if reply.server_seconds is not None:
            report.server_latencies.append(reply.server_seconds)
        report.serve_latencies.append(served.seconds)
        report.acknowledged_at.append(time.monotonic())


def session_report(
    url: str,
    stimuli: StimulusSet,
    person: SimulatedPerson,
    person_seed: int,
    admin_secret: str,
    pace: float = 0.0,
    stop_at: float | None = None,
) -> SimulationReport:
    """One participant's session on its own connection; a failure becomes a reported error."""
    client = StudyClient(url, timeout=60)
    try:
        part = run_participant(
            client,
            stimuli,
            person,
            random.Random(person_seed),
            admin_secret,
            pace,
            time.sleep,
            stop_at,
        )
    except TracktaleError as error:
        part = SimulationReport(errors=[f"{person.prolific_pid}: {error}"])
    finally:
        client.close()
    part.retries += client.retries
    return part


def _expect(reply: Any, what: str) -> Any:
    if reply.status not in (200, 201):
        raise TracktaleError(f"{what} refused (HTTP {reply.status}): {reply.data.get('error')}")
    return reply


def simulate_participants(
    url: str,
    stimuli: StimulusSet,
    admin_secret: str,
    *,
    n: int = 48,
    seed: int = 1,
    concurrency: int = 1,
    pace: float = 0.0,
    pid_prefix: str = "SIM",
) -> SimulationReport:
    """Run ``n`` simulated participants against the server at ``url``.

    Args:
        url: The study server (``http://host:port``).
        stimuli: The stimulus set the server runs (checked by sha256).
        admin_secret: The server's admin secret (simulated sessions need it).
        n: Number of participants.
        seed: Seed of their traits and behaviour (the same seed gives the same people).
        concurrency: Participants running at the same time.
        pace: 0 sends trials as fast as possible; 1 waits the simulated reading and response
            times (real time); 0.05 runs a session about 20 times faster than real time.
        pid_prefix: Start of the made-up Prolific ids.

    Returns:
        The combined report; failed participants are listed in ``errors``.
    """
    if n < 1:
        raise TracktaleError("--n must be at least 1")
    master = random.Random(f"simulate|{seed}")
    people = [
        (draw_person(master, index, pid_prefix), master.getrandbits(64)) for index in range(n)
    ]
    report = SimulationReport()
    lock = threading.Lock()

    def one(person: SimulatedPerson, person_seed: int) -> None:
        part = session_report(url, stimuli, person, person_seed, admin_secret, pace)
        with lock:
            report.merge(part)

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        for future in [pool.submit(one, person, person_seed) for person, person_seed in people]:
            future.result()
    return report


def simulate_study(
    config: Any = None,
    *,
    n: int = 48,
    seed: int = 1,
    concurrency: int = 4,
    pace: float = 0.0,
    stimulus_set: StimulusSet | None = None,
    announce: Callable[[str], None] | None = None,
) -> SimulationReport:
    """Serve a study in-process, run ``n`` simulated participants through it, stop it.

    The pipeline's human-data step: with the default study this generates the human
    stimulus set if needed, stores the sessions in the study's database (export them with
    :func:`tracktale.experiment.export.files.export_study`) and returns the report.

    Args:
        config: The :class:`~tracktale.experiment.study.config.StudyConfig` (default: the
            default study).
        n: Number of participants.
        seed: Seed of the simulated people.
        concurrency: Participants at a time.
        pace: As in :func:`simulate_participants` (0: as fast as possible).
        stimulus_set: The stimuli (default: the study's set).
        announce: Called with the server's URL once it runs (e.g. ``print``).
    """
    from tracktale.experiment.study.config import Secrets, load_study
    from tracktale.experiment.study.service import load_stimuli
    from tracktale.experiment.web.app import create_app
    from tracktale.experiment.web.server import serve_in_thread

    config = config or load_study(None)
    stimuli = stimulus_set or load_stimuli(config)
    secrets = Secrets.from_env()
    app = create_app(config, stimulus_set=stimuli, secrets=secrets)
    try:
        with serve_in_thread(app) as server:
            if announce:
                announce(server.url)
            return simulate_participants(
                server.url,
                stimuli,
                secrets.admin_secret,
                n=n,
                seed=seed,
                concurrency=concurrency,
                pace=pace,
            )
    finally:
        app.extensions["tracktale"].storage.close()
