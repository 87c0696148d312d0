"""Where the CPU of one trial goes on the study server: its serve and its save, in-process.

Runs ``--participants`` simulated sessions one after the other through the Flask test client
(no HTTP server, no network) on a temporary SQLite database (WAL, ``synchronous=FULL``, as in
production), serving and saving every trial as the page does, and prints the CPU time per
serve and per save, through the test client and in the app alone (the WSGI call: what
gunicorn runs besides its own HTTP parsing). CPU time is less disturbed by other jobs on a
shared machine than wall time; the disk syncs of the commits are waits, not CPU. With
``--profile`` it adds cProfile's table of the heaviest functions over the serves and saves.

Run: .venv/bin/python benchmarks/profile_study_trial.py [--participants 8] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import statistics
import tempfile
import time
from pathlib import Path

from tracktale.experiment.simulation.run import behave, draw_person, good_sides
from tracktale.experiment.study.config import Secrets, StudyConfig
from tracktale.experiment.web.app import create_app
from tracktale.stimuli.registry import get_paradigm

SECRET = "profile-admin-secret"


def run(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="tracktale-profile-"))
    stimuli = get_paradigm("narrative").generate_set("human", 1)
    config = StudyConfig(database=str(folder / "study.sqlite"))
    secrets = Secrets(admin_secret=SECRET, secret_key="profile-key", export_salt="profile-salt")
    app = create_app(config, stimulus_set=stimuli, secrets=secrets)
    in_app: list[float] = []
    wsgi_app = app.wsgi_app

    def clocked_app(environ, start_response):
        # The server's own CPU: the WSGI call, without the test client around it.
        clock = time.thread_time()
        try:
            return wsgi_app(environ, start_response)
        finally:
            in_app.append(time.thread_time() - clock)

    app.wsgi_app = clocked_app  # type: ignore[method-assign]
    client = app.test_client()
    rng = random.Random("profile")
    serve_cpu: list[float] = []
    save_cpu: list[float] = []
    serve_app: list[float] = []
    save_app: list[float] = []
    profiler = cProfile.Profile(time.thread_time) if args.profile else None
    for number in range(args.participants):
        person = draw_person(rng, number, "PROF")
        start = client.post(
            "/api/session",
            json={"prolific_pid": person.prolific_pid, "source": "simulated"},
            headers={"Authorization": f"Bearer {SECRET}"},
        ).get_json()
        headers = {"X-Session-Token": start["token"]}
        client.post("/api/consent", json={"consent": True}, headers=headers)
        for outline in start["trials"]:
            clock = time.process_time()
            if profiler:
                profiler.enable()
            served = client.post(
                "/api/serve", json={"trial_index": outline["index"]}, headers=headers
            )
            if profiler:
                profiler.disable()
            serve_cpu.append(time.process_time() - clock)
            serve_app.append(in_app[-1])
            assert served.status_code == 200, served.get_json()
            shown = served.get_json()["trial"]
            (side,) = good_sides(stimuli, [shown])
            item = stimuli.get(shown["item_id"])
            body = behave(rng, person, item, {**shown, "good_side": side}, start["timing"])
            body["client_trial_id"] = f"{start['participant_id']}-{outline['index']}"
            clock = time.process_time()
            if profiler:
                profiler.enable()
            saved = client.post("/api/trials", json=body, headers=headers)
            if profiler:
                profiler.disable()
            save_cpu.append(time.process_time() - clock)
            save_app.append(in_app[-1])
            assert saved.status_code == 201, saved.get_json()
    app.extensions["tracktale"].storage.close()
    for label, values, own in (("serve", serve_cpu, serve_app), ("save", save_cpu, save_app)):
        print(
            f"{label}: {len(values)} requests, CPU per request mean "
            f"{1000 * statistics.fmean(values):.2f} ms (median "
            f"{1000 * statistics.median(values):.2f} ms) with the test client, "
            f"{1000 * statistics.fmean(own):.2f} ms in the app"
        )
    both = statistics.fmean(serve_cpu) + statistics.fmean(save_cpu)
    own = statistics.fmean(serve_app) + statistics.fmean(save_app)
    print(
        f"serve + save per trial: {1000 * both:.2f} ms CPU with the test client, "
        f"{1000 * own:.2f} ms in the app"
    )
    if profiler:
        stats = pstats.Stats(profiler)
        stats.sort_stats(args.sort).print_stats(args.top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=8)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sort", default="cumulative")
    parser.add_argument("--top", type=int, default=60)
    run(parser.parse_args())


if __name__ == "__main__":
    main()
