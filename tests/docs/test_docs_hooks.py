"""The docs build shows the browser tests' latest screenshots (scripts/docs_hooks.py)."""

from __future__ import annotations

import importlib.util
import sys
from types import SimpleNamespace

from tests.conftest import REPO_ROOT


def _hooks():
    sys.path.insert(0, str(REPO_ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("docs_hooks", REPO_ROOT / "scripts/docs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page(uri):
    return SimpleNamespace(file=SimpleNamespace(src_uri=uri))


def test_the_gallery_lists_each_screenshot_and_says_when_there_are_none(tmp_path, monkeypatch):
    hooks = _hooks()
    monkeypatch.setattr(hooks, "SCREENSHOTS", tmp_path)
    page = f"# Screens\n\n{hooks.MARKER}\n"
    empty = hooks.on_page_markdown(page, _page(hooks.GALLERY))
    assert hooks.MARKER not in empty and "No screenshots in this build" in empty
    (tmp_path / "consent.png").write_bytes(b"\x89PNG")
    (tmp_path / "final-screen.png").write_bytes(b"\x89PNG")
    shown = hooks.on_page_markdown(page, _page(hooks.GALLERY))
    assert "![consent](../screenshots/consent.png)" in shown
    assert "### final screen" in shown
    assert hooks.on_page_markdown(page, _page("index.md")) == page
