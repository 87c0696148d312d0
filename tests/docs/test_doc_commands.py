"""Every shell example in the tutorials and how-to guides runs.

Each page's ```` ```bash ```` blocks run in order, as one script (``set -euo pipefail``), in a
fresh temporary folder with the project's environment on ``PATH``, so state carries from one
block to the next as it does for a reader following the page. ``$TRACKTALE_REPO`` names the
repository (for example files shipped with it). Two HTML comments, invisible on the site,
change what runs:

- ``<!-- docs-test: skip REASON -->`` before a block skips that block (say why: it needs a GPU,
  a cluster, the network, or serves forever);
- ``<!-- docs-test: run COMMAND -->`` before a block runs ``COMMAND`` in its place (a cheaper
  variant of a long command: fewer items, no model).

A page whose first line after the title is ``<!-- docs-test: skip-page REASON -->`` is skipped
whole.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

DOCS = REPO_ROOT / "docs"
RUNNABLE = ("tutorials", "how-to")
BLOCK = re.compile(
    r"(?:<!--\s*docs-test:\s*(?P<verb>skip|run)\s*(?P<arg>.*?)\s*-->\s*\n)?"
    r"^```bash\n(?P<body>.*?)^```",
    re.S | re.M,
)
SKIP_PAGE = re.compile(r"<!--\s*docs-test:\s*skip-page\s*(.*?)\s*-->")
PAGE_TIMEOUT_S = 900


def pages() -> list[Path]:
    """The pages whose shell blocks are run."""
    return sorted(page for folder in RUNNABLE for page in (DOCS / folder).rglob("*.md"))


def script_of(text: str) -> str:
    """The bash script a page's blocks make, with the skip and run comments applied."""
    parts = ["set -euo pipefail"]
    for match in BLOCK.finditer(text):
        verb, arg, body = match.group("verb"), match.group("arg"), match.group("body")
        if verb == "skip":
            parts.append(f"# skipped: {arg}")
        elif verb == "run":
            parts.append(arg)
        else:
            parts.append(body.rstrip("\n"))
    return "\n".join(parts) + "\n"


def test_the_block_parser_applies_skip_and_run():
    text = (
        "# T\n\n```bash\necho one\n```\n\n<!-- docs-test: skip needs a GPU -->\n"
        "```bash\nrm -rf /\n```\n\n<!-- docs-test: run echo cheap -->\n```bash\necho dear\n```\n"
        "```python\nprint('not shell')\n```\n"
    )
    script = script_of(text)
    assert "echo one" in script and "echo cheap" in script
    assert "rm -rf" not in script and "echo dear" not in script and "print(" not in script


@pytest.mark.slow
@pytest.mark.parametrize("page", pages(), ids=lambda page: page.relative_to(DOCS).as_posix())
def test_the_page_commands_run(page: Path, tmp_path: Path):
    text = page.read_text(encoding="utf-8")
    skipped = SKIP_PAGE.search(text)
    if skipped:
        pytest.skip(f"{page.name}: {skipped.group(1)}")
    script = script_of(text)
    if script.strip() == "set -euo pipefail":
        pytest.skip(f"{page.name} has no shell block")
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "TRACKTALE_REPO": str(REPO_ROOT),
        "TRACKTALE_DATA": str(tmp_path / "tracktale-data"),
        "COLUMNS": "100",
    }
    result = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=PAGE_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, (
        f"{page.relative_to(REPO_ROOT)}: a command failed (exit {result.returncode})\n"
        f"--- script ---\n{script}\n--- stdout (end) ---\n{result.stdout[-3000:]}\n"
        f"--- stderr (end) ---\n{result.stderr[-3000:]}"
    )
