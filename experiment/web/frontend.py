"""Where the study's third-party browser code (jsPsych and its plugins) lives.

jsPsych comes from the npm registry (``experiment/frontend/package.json`` with its lock file)
and is served by Flask straight from ``node_modules``; nothing of it is copied into the
repository or the wheel. The folder holding ``node_modules`` is looked up in this order:

1. ``$TRACKTALE_FRONTEND`` (a folder with ``node_modules``), for deployments;
2. ``experiment/frontend`` of a source checkout (``npm ci`` there, as ``scripts/main.sh`` does);
3. ``$TRACKTALE_DATA/frontend``, where ``tracktale experiment install-frontend`` installs it
   for a wheel install (the wheel ships ``package.json`` and ``package-lock.json``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tracktale.errors import TracktaleError
from tracktale.settings import data_dir

FRONTEND_ENV = "TRACKTALE_FRONTEND"
PACKAGED = Path(__file__).parent.parent / "frontend"
"""The packaged ``package.json`` and ``package-lock.json`` (and, in a checkout, node_modules)."""

VENDOR_FILES = {
    "jspsych.js": "jspsych/dist/index.browser.min.js",
    "jspsych.css": "jspsych/css/jspsych.css",
    "plugin-html-button-response.js": (
        "@jspsych/plugin-html-button-response/dist/index.browser.min.js"
    ),
    "plugin-survey-html-form.js": "@jspsych/plugin-survey-html-form/dist/index.browser.min.js",
    "plugin-call-function.js": "@jspsych/plugin-call-function/dist/index.browser.min.js",
}
"""The files the page loads, by the name it asks for (``/vendor/<name>``)."""


def candidate_dirs() -> list[Path]:
    """The folders searched for ``node_modules``, in order."""
    found = []
    if os.environ.get(FRONTEND_ENV):
        found.append(Path(os.environ[FRONTEND_ENV]))
    found.extend([PACKAGED, data_dir() / "frontend"])
    return found


def find_node_modules() -> Path:
    """The ``node_modules`` folder that holds every vendor file.

    Raises:
        TracktaleError: Saying where it looked and how to install the front end.
    """
    for folder in candidate_dirs():
        modules = folder / "node_modules"
        if all((modules / relative).is_file() for relative in VENDOR_FILES.values()):
            return modules
    looked = ", ".join(str(folder) for folder in candidate_dirs())
    raise TracktaleError(
        f"the study's front end (jsPsych) is not installed (looked in {looked}); run "
        "`tracktale experiment install-frontend` (needs npm) or `npm ci` in experiment/frontend"
    )


def install_frontend(target: str | os.PathLike[str] | None = None) -> Path:
    """Install the pinned front end with ``npm ci`` into ``target``.

    Args:
        target: Folder to install into (default ``$TRACKTALE_DATA/frontend``).

    Returns:
        The ``node_modules`` folder.

    Raises:
        TracktaleError: If npm is missing or fails.
    """
    folder = Path(target) if target is not None else data_dir() / "frontend"
    npm = shutil.which("npm")
    if npm is None:
        raise TracktaleError("npm (Node.js 18 or newer) is needed to install the front end")
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        source = PACKAGED / name
        if source.resolve() != (folder / name).resolve():
            shutil.copyfile(source, folder / name)
    result = subprocess.run(
        # The devDependencies (ESLint, jsdom) only check our scripts in a source checkout.
        [npm, "ci", "--omit=dev", "--no-audit", "--no-fund", "--silent"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        last = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        raise TracktaleError(f"npm ci failed in {folder}: {last[0]}")
    return folder / "node_modules"
