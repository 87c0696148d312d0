"""The layers of the package: each imports only the layers below it.

From the bottom: the contracts of the ``tracktale/`` folder (items, stimulus sets, the scorer,
the record schema), which every stage imports and which import no stage; the stages; and the
application (``app/``: the command line and the main job), which imports every stage and which
no stage imports. Imports inside functions count, and so do ``"tracktale.x.y:attr"`` strings
resolved at run time (the lazy command groups, the backend and paradigm registries).

One exception: a paradigm's plug-in declaration (:class:`tracktale.plugin.ParadigmPlugin`) names
each stage's part of the paradigm, and only that stage resolves it; so a reference given to one
of its parts is not an import of the declaring module, but it must name a module of the stage
that owns the part (checked here and by the record itself).
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

ALLOWED = {
    "contracts": set(),
    "stimuli": {"contracts"},
    "ethics": {"contracts"},
    "models": {"contracts", "stimuli"},
    "experiment": {"contracts", "stimuli", "ethics"},
    "analysis": {"contracts", "stimuli", "ethics", "models", "experiment"},
    "app": {"contracts", "stimuli", "ethics", "models", "experiment", "analysis"},
}
"""Layer -> the layers it may import (besides itself)."""

ENTRY_HOOK = "tracktale/__main__.py"
"""``python -m tracktale`` must live in the ``tracktale`` package and only hands over to the app."""

_RESOLVED = re.compile(r"^(tracktale(?:\.\w+)+):\w+")


def _layers() -> dict[str, Path]:
    """Layer name -> its folder, from the setuptools package-dir mapping."""
    mapping = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"
    ]
    return {
        ("contracts" if package == "tracktale" else package.split(".")[1]): REPO_ROOT / folder
        for package, folder in mapping.items()
    }


def _layer_of(module: str) -> str:
    parts = module.split(".")
    if parts[0] != "tracktale":
        raise ValueError(module)
    return parts[1] if len(parts) > 1 and parts[1] in ALLOWED else "contracts"


def _plugin_parts(tree: ast.AST) -> dict[int, str]:
    """``id`` of each string given to a part of a ``ParadigmPlugin(...)`` -> that part's stage."""
    from tracktale.plugin import ParadigmPlugin

    parts = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ParadigmPlugin":
            for keyword in node.keywords:
                stage = ParadigmPlugin.STAGES.get(keyword.arg or "")
                if stage and isinstance(keyword.value, ast.Constant):
                    parts[id(keyword.value)] = stage
    return parts


def misplaced_plugin_parts(source: str) -> list[str]:
    """The plug-in parts whose reference names a module of another stage than the part's."""
    tree = ast.parse(source)
    parts = _plugin_parts(tree)
    wrong = []
    for node in ast.walk(tree):
        stage = parts.get(id(node))
        if stage and isinstance(node, ast.Constant):
            match = _RESOLVED.match(str(node.value))
            if not match or _layer_of(match.group(1)) != stage:
                wrong.append(str(node.value))
    return wrong


def imported_modules(source: str) -> set[str]:
    """Every ``tracktale`` module a source file imports or names for ``pkgutil.resolve_name``."""
    found = set()
    tree = ast.parse(source)
    plugin_parts = _plugin_parts(tree) if "ParadigmPlugin" in source else {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from tracktale import app` imports tracktale.app: name each imported attribute.
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in plugin_parts:
                continue  # resolved only by the stage that owns the part (the docstring)
            match = _RESOLVED.match(node.value)
            if match:
                found.add(match.group(1))
    return {module for module in found if module.split(".")[0] == "tracktale"}


def violations(layer: str, folder: Path) -> list[str]:
    """``file -> module`` for each import of ``layer``'s files that its rule does not allow."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        relative = path.relative_to(REPO_ROOT).as_posix()
        if "node_modules" in path.parts or relative == ENTRY_HOOK:
            continue
        source = path.read_text(encoding="utf-8")
        if "ParadigmPlugin" in source:
            found += [f"{relative} -> misplaced part {p}" for p in misplaced_plugin_parts(source)]
        for module in sorted(imported_modules(source)):
            target = _layer_of(module)
            if target != layer and target not in ALLOWED[layer]:
                found.append(f"{relative} -> {module}")
    return found


def test_every_folder_of_the_package_has_a_layer():
    assert set(_layers()) == set(ALLOWED)


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_layer_imports_only_the_layers_below_it(layer):
    assert violations(layer, _layers()[layer]) == []


def test_the_layers_have_no_cycle():
    for layer, below in ALLOWED.items():
        assert all(layer not in ALLOWED[other] for other in below), layer


def test_the_entry_hook_only_hands_over_to_the_application():
    modules = imported_modules((REPO_ROOT / ENTRY_HOOK).read_text())
    assert modules == {"tracktale.app.cli.main"}


@pytest.mark.parametrize(
    ("layer", "source"),
    [
        ("contracts", "from tracktale.models.registry import load_scorer"),
        ("contracts", "def f():\n    import tracktale.analysis.stats.glm\n"),
        ("contracts", "from tracktale.app.cli import main"),
        ("contracts", "from tracktale import app"),
        ("contracts", 'TARGET = "tracktale.stimuli.registry:paradigm"'),
        ("stimuli", "from tracktale.experiment.study.config import load_study"),
        ("ethics", "from tracktale.experiment import config"),
        ("models", "from tracktale.analysis.data.tidy import trials"),
        ("experiment", "from tracktale.analysis.data.exclusions import exclude"),
        ("analysis", "from tracktale.app.pipeline import RunOptions"),
    ],
)
def test_an_upward_import_is_caught(layer, source, tmp_path, monkeypatch):
    module = tmp_path / "upward.py"
    module.write_text(source)
    monkeypatch.setattr("tests.test_architecture.REPO_ROOT", tmp_path)
    assert violations(layer, tmp_path) == ["upward.py -> " + sorted(imported_modules(source))[0]]


def test_imports_within_a_layer_and_downward_are_allowed(tmp_path, monkeypatch):
    (tmp_path / "fine.py").write_text(
        "from tracktale.item import Item\nfrom tracktale import schema\n"
        "from tracktale.stimuli.registry import paradigm\n"
    )
    monkeypatch.setattr("tests.test_architecture.REPO_ROOT", tmp_path)
    assert violations("models", tmp_path) == []


def test_a_plugins_parts_are_not_imports_but_must_name_their_own_stage(tmp_path, monkeypatch):
    declaration = (
        "from tracktale.plugin import ParadigmPlugin\n"
        "PLUGIN = ParadigmPlugin(name='toy', stimuli='tracktale.stimuli.toy:PARADIGM',\n"
        "    human_study='tracktale.experiment.toy:STUDY', report='{report}')\n"
        "OTHER = 'tracktale.analysis.toy:THING'\n"
    )
    (tmp_path / "plugin.py").write_text(declaration.format(report="tracktale.analysis.toy:S"))
    monkeypatch.setattr("tests.test_architecture.REPO_ROOT", tmp_path)
    # The parts are the stages' own; the stray string outside the record is an import.
    assert violations("stimuli", tmp_path) == ["plugin.py -> tracktale.analysis.toy"]
    (tmp_path / "plugin.py").write_text(declaration.format(report="tracktale.models.toy:S"))
    assert violations("stimuli", tmp_path) == [
        "plugin.py -> misplaced part tracktale.models.toy:S",
        "plugin.py -> tracktale.analysis.toy",
    ]
