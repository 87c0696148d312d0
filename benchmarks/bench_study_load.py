"""Load test of the study server: many simulated participants on loopback.

Starts the production server (gunicorn, gthread workers) on a temporary SQLite database,
lets ``--participants`` simulated participants arrive over ``--ramp`` seconds and run
sessions through the HTTP API at ``--pace`` times real speed (each trial waits its simulated
reading and response time, scaled), and prints the trial-save latency (p50/p99, as the client
sees it and as the server handled it), the latency of serving each trial's content (every
trial is two requests: its content is served when it starts, then its answer saved), and the
number of trials lost: sent but never acknowledged, or acknowledged but missing from the
database. Target: 500 participants, p99 < 100 ms on SQLite, 0 trials lost. Nothing is
asserted.

By default the participants go at real speed (``--pace 1``) and, since a real session lasts
about half an hour, every session stops before its next trial once the ``--window`` has
passed (no survey or completion then; such sessions are counted, not failed). The stress
mode ``--pace 0.2 --window 0`` runs whole sessions five times faster than real time; at
``--pace`` below 1 every answer arrives sooner than its simulated times add up to, so the
server flags them ``faster_than_reported`` (stored, counted, not lost).

Bounded: at most ``--participants`` sessions, and no new session starts after
``--max-seconds``.

Run: .venv/bin/python benchmarks/bench_study_load.py [--participants 500] [--workers 1]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path

from tracktale.experiment.simulation.run import SimulationReport, draw_person, session_report
from tracktale.experiment.storage.store import Storage
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import write_stimulus_set

SECRET = "benchmark-admin-secret"


def _cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a running process and its children so far (Linux /proc; else 0)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0.0
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(_tree_cpu_seconds(int(child)) for child in children)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def start_server(folder: Path, port: int, workers: int, threads: int) -> subprocess.Popen:
    study = folder / "study.yaml"
    study.write_text(
        f"study_id: load-test\nstimuli: {folder / 'stimuli'}\n"
        f"database: {folder / 'study.sqlite'}\n"
        "rate_limits:\n  sessions_per_ip_per_minute: 100000\n"
        "  writes_per_participant_per_minute: 100000\n"
    )
    env = {**os.environ, "TRACKTALE_STUDY": str(study), "TRACKTALE_ADMIN_SECRET": SECRET}
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "--workers",
        str(workers),
        "--worker-class",
        "gthread",
        "--threads",
        str(threads),
        "--bind",
        f"127.0.0.1:{port}",
        "--log-level",
        "warning",
        "--backlog",
        "2048",
        "--keep-alive",
        "30",
        "--no-control-socket",  # gunicorn 27: one per user, taken over by a second server
        "tracktale.experiment.web.app:create_app_from_env()",
    ]
    server = subprocess.Popen(command, env=env)
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
            return server
        except OSError:
            time.sleep(0.1)
    server.terminate()
    raise SystemExit("the server did not start")


def run(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="tracktale-load-"))
    stimuli = get_paradigm("narrative").generate_set("human", 1)
    write_stimulus_set(stimuli, folder / "stimuli")
    server = start_server(folder, args.port, args.workers, args.threads)
    url = f"http://127.0.0.1:{args.port}"
    report = SimulationReport()
    lock = threading.Lock()
    master = random.Random("load")
    people = [
        (draw_person(master, n, "LOAD"), master.getrandbits(64)) for n in range(args.participants)
    ]
    load_before = os.getloadavg()
    client_cpu = _cpu_seconds(resource.RUSAGE_SELF)
    startup_cpu = _tree_cpu_seconds(server.pid)  # imports and loading, not serving
    began = time.monotonic()
    skipped = 0

    def participant(person, seed, delay):
        nonlocal skipped
        time.sleep(delay)
        if time.monotonic() - began > args.max_seconds:
            with lock:
                skipped += 1
            return
        stop_at = began + args.window if args.window else None
        part = session_report(url, stimuli, person, seed, SECRET, args.pace, stop_at)
        with lock:
            report.merge(part)

    threading.stack_size(512 * 1024)
    threads = [
        threading.Thread(target=participant, args=(person, seed, master.uniform(0, args.ramp)))
        for person, seed in people
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - began
    finally:
        server.terminate()
        server.wait(timeout=30)
    # The server's CPU (master and workers, reaped) and the simulated participants' own: the
    # server's per trial does not depend on how loaded the machine was.
    server_cpu = _cpu_seconds(resource.RUSAGE_CHILDREN) - startup_cpu
    client_cpu = _cpu_seconds(resource.RUSAGE_SELF) - client_cpu
    storage = Storage(f"sqlite:///{folder / 'study.sqlite'}", create=False)
    stored = sum(storage.trial_counts("load-test").values())
    flags = Counter(name for trial in storage.trials("load-test") for name in trial.flag_set)
    flagged = sum(bool(trial.flags) for trial in storage.trials("load-test"))
    storage.close()
    shutil.rmtree(folder, ignore_errors=True)
    print_report(args, report, stored, skipped, elapsed)
    print_settled(report, began + args.ramp)
    by_name = ", ".join(f"{name} {count}" for name, count in flags.most_common()) or "none"
    print(f"trials flagged by the server's timing: {flagged} of {stored} ({by_name})")
    per_trial = 1000 * server_cpu / max(1, stored)
    print(
        f"CPU: server {server_cpu:.0f} s after start-up ({per_trial:.2f} ms per trial: its "
        f"serve and save, and a share of each session's other requests), simulated "
        f"participants {client_cpu:.0f} s"
    )
    load_after = os.getloadavg()
    print(
        f"machine load (1/5/15-min averages, {os.cpu_count()} cores): "
        f"before {'/'.join(f'{x:.1f}' for x in load_before)}, "
        f"after {'/'.join(f'{x:.1f}' for x in load_after)}"
    )


def print_report(args, report: SimulationReport, stored: int, skipped: int, elapsed: float) -> None:
    lost = (report.trials_sent - report.trials_acknowledged) + max(
        0, report.trials_acknowledged - stored
    )
    latencies = [s * 1000 for s in report.latencies] or [float("nan")]
    server_ms = [s * 1000 for s in report.server_latencies]
    print(
        f"server: gunicorn, {args.workers} workers x {args.threads} threads, "
        "SQLite (WAL, synchronous=FULL)"
    )
    pacing = (
        f"each trial waits {args.pace:g} x its simulated duration "
        f"({1 / args.pace:g} x faster than real time)"
        if args.pace
        else "trials sent without pauses"
    )
    window = (
        f", {report.stopped} stopped mid-session when the {args.window:g} s window closed"
        if args.window
        else ""
    )
    print(
        f"participants: {report.completed} completed of {args.participants} "
        f"({skipped} not started within {args.max_seconds:g} s, {len(report.errors)} failed"
        f"{window}); arrivals over {args.ramp:g} s; {pacing}"
    )
    print(
        f"trial saves: {len(latencies)} in {elapsed:.0f} s ({len(latencies) / elapsed:.0f}/s), "
        f"{report.retries} retries"
    )
    print(
        f"latency (client, loopback): p50 {statistics.median(latencies):.1f} ms, "
        f"p99 {percentile(latencies, 0.99):.1f} ms, max {max(latencies):.1f} ms "
        "(target: p99 < 100 ms)"
    )
    if server_ms:
        print(
            f"latency (server handling):  p50 {statistics.median(server_ms):.1f} ms, "
            f"p99 {percentile(server_ms, 0.99):.1f} ms"
        )
    serve_ms = [s * 1000 for s in report.serve_latencies]
    if serve_ms:
        print(
            f"trial serves (client):      p50 {statistics.median(serve_ms):.1f} ms, "
            f"p99 {percentile(serve_ms, 0.99):.1f} ms, max {max(serve_ms):.1f} ms"
        )
    print(
        f"trials lost: {lost} (sent {report.trials_sent}, "
        f"acknowledged {report.trials_acknowledged}, stored {stored})"
    )
    for error in report.errors[:5]:
        print(f"error: {error}")


def print_settled(report: SimulationReport, settled: float) -> None:
    """The same latencies once every participant has arrived (no more session starts)."""
    after = [n for n, moment in enumerate(report.acknowledged_at) if moment >= settled]
    if not after:
        return
    saves = [1000 * report.latencies[n] for n in after]
    serves = [1000 * report.serve_latencies[n] for n in after]
    line = (
        f"after the last arrival ({len(after)} trials): saves p50 {statistics.median(saves):.1f} "
        f"ms, p99 {percentile(saves, 0.99):.1f} ms; serves p99 {percentile(serves, 0.99):.1f} ms"
    )
    if len(report.server_latencies) == len(report.latencies):
        handled = [1000 * report.server_latencies[n] for n in after]
        line += f"; server handling of saves p99 {percentile(handled, 0.99):.1f} ms"
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=500, help="sessions to run")
    parser.add_argument(
        "--pace", type=float, default=1.0, help="multiple of each trial's simulated duration"
    )
    parser.add_argument(
        "--window",
        type=float,
        default=360.0,
        help="seconds after which sessions stop before their next trial (0: run them to the end)",
    )
    parser.add_argument("--ramp", type=float, default=60.0, help="seconds over which people arrive")
    parser.add_argument(
        "--max-seconds", type=float, default=600.0, help="no new session after this"
    )
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=16, help="threads per worker")
    parser.add_argument("--port", type=int, default=5791, help="loopback port")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
