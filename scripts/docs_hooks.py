"""MkDocs hooks (``hooks:`` in mkdocs.yml): lay the ``tracktale`` namespace out for mkdocstrings.

The stage folders are mapped onto ``tracktale.*`` by setuptools' ``package-dir`` (``stimuli/`` is
``tracktale.stimuli``), which griffe, mkdocstrings' source reader, cannot follow; so, as for
mypy (``scripts/typecheck.py``), the package is laid out as a tree of symbolic links under
``build/docs-package-tree`` before the pages are read.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

sys.path.insert(0, str(Path(__file__).resolve().parent))

import typecheck  # noqa: E402

TREE = typecheck.REPO / "build" / "docs-package-tree"


# Before every plugin's own on_config: mkdocstrings' Python handler keeps only the search paths
# that exist when it starts, so on a fresh clone (no tree yet) the package was not found.
@event_priority(100)
def on_config(config: Any, **_: Any) -> Any:
    """Build the link tree before mkdocstrings reads the package."""
    typecheck.build_tree(TREE)
    # griffe resolves a module's symbolic link before looking beside it for submodules, so the
    # top package's own modules are copies: its folder is then this tree, where the stages are.
    for link in (TREE / "tracktale").glob("*.py"):
        target = link.resolve()
        link.unlink()
        shutil.copyfile(target, link)
    return config


SCREENSHOTS = typecheck.REPO / "test-artifacts" / "browser"
GALLERY = "reference/screenshots.md"
MARKER = "<!-- screenshots -->"


def on_files(files: Any, config: Any, **_: Any) -> Any:
    """Add the browser tests' latest screenshots to the site (never committed, so never stale)."""
    from mkdocs.structure.files import File

    for shot in sorted(SCREENSHOTS.glob("*.png")):
        files.append(File.generated(config, f"screenshots/{shot.name}", abs_src_path=str(shot)))
    return files


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Fill the gallery page with whatever screenshots the last browser test run made."""
    if page.file.src_uri != GALLERY or MARKER not in markdown:
        return markdown
    shots = sorted(SCREENSHOTS.glob("*.png"))
    if not shots:
        listing = (
            "*No screenshots in this build: they are made by the browser tests "
            "(`python -m pytest tests/experiment/test_browser.py`), then `mkdocs build`.*"
        )
    else:
        listing = "\n\n".join(
            f"### {shot.stem.replace('-', ' ')}\n\n![{shot.stem}](../screenshots/{shot.name})"
            for shot in shots
        )
    return markdown.replace(MARKER, listing)
