"""A lab's paradigm from an installed package: one entry point, and every command offers it.

The toy package is "installed" as a distribution whose only registration is the entry point
``toy = tests.toyparadigm.plugin:PLUGIN`` of the group ``tracktale.paradigms`` (what a lab's
``pyproject.toml`` declares); fresh ``tracktale`` processes then generate its set with its own
option and run its study with simulated people through the real server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO_ROOT


def test_an_installed_package_registers_its_paradigm_with_one_entry_point(tmp_path):
    site = tmp_path / "site"
    dist = site / "toylab-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toylab\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[tracktale.paradigms]\ntoy = tests.toyparadigm.plugin:PLUGIN\n"
        "boxes = tests.toyparadigm.plugin:PLUGIN\n"  # cannot take the place of tracktale's
    )
    path = [str(site), str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in path if p),
        "TRACKTALE_DATA": str(tmp_path / "data"),
    }

    def tracktale(*args):
        done = subprocess.run(
            [sys.executable, "-m", "tracktale", *args],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    names = (
        "from tracktale.stimuli.registry import get_plugin, paradigm_names\n"
        "print(*paradigm_names(), get_plugin('boxes').stimuli)"
    )
    listed = subprocess.run([sys.executable, "-c", names], env=env, capture_output=True, text=True)
    assert listed.stdout.split() == [
        *("narrative", "boxes", "arithmetic", "items", "toy"),
        "tracktale.stimuli.boxes:PARADIGM",
    ], listed.stderr
    assert "--per-number" in tracktale("stimuli", "generate", "--help")
    out = tmp_path / "toy-set"
    tracktale("stimuli", "generate", "--paradigm", "toy", "--per-number", "3", "--out", str(out))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["paradigm"] == "toy" and manifest["config"]["per_number"] == 3
    assert len((out / "items.jsonl").read_text().splitlines()) == 2 + 2 * 3
    simulated = tracktale("experiment", "simulate", "--paradigm", "toy", "--n", "2")
    assert "serving toy-agreement" in simulated
    assert "2/2 simulated participants completed; 20/20 trials acknowledged" in simulated
