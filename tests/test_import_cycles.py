"""Two modules do not import each other (issue 28 named five such pairs).

Every import counts: at the top, inside a function, or for the type checker only. A module's
``from package import name`` counts as importing ``package.name`` where that is a module, else
``package`` (the package's ``__init__``). The pairs that still import each other are listed in
:data:`KNOWN`, which may only shrink.
"""

from __future__ import annotations

import ast
import functools
import tomllib

from tests.conftest import REPO_ROOT

KNOWN: set[frozenset[str]] = set()
"""The pairs that still import each other; may only shrink."""
BROKEN = {
    frozenset({"tracktale.models.tasks", "tracktale.models.explicit"}),
    frozenset({"tracktale.models.gguf", "tracktale.models.hub"}),
    frozenset({"tracktale.stimuli.boxes", "tracktale.stimuli.boxes.design"}),
    frozenset({"tracktale.experiment.study.service", "tracktale.experiment.study.trialflow"}),
    frozenset({"tracktale.analysis.report.build", "tracktale.analysis.report.render"}),
    frozenset({"tracktale.stimuli.items", "tracktale.stimuli.items.importer"}),
}
"""Pairs the issue named that no longer import each other."""


@functools.cache
def modules() -> dict[str, str]:
    """Module name -> its source, for the whole package."""
    mapping = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"
    ]
    found = {}
    for package, folder in mapping.items():
        for path in (REPO_ROOT / folder).rglob("*.py"):
            if "node_modules" in path.parts:
                continue
            parts = path.relative_to(REPO_ROOT / folder).with_suffix("").parts
            name = ".".join((package, *parts)).removesuffix(".__init__")
            found.setdefault(name, path.read_text(encoding="utf-8"))
    return found


def imports(source: str, known: set[str]) -> set[str]:
    """The package's modules ``source`` imports (see the module docstring)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in known else node.module)
    return found & known


@functools.cache
def mutual_pairs() -> set[frozenset[str]]:
    """Every pair of modules that import each other."""
    sources = modules()
    known = set(sources)
    graph = {name: imports(source, known) - {name} for name, source in sources.items()}
    return {frozenset({a, b}) for a, targets in graph.items() for b in targets if a in graph[b]}


def test_no_new_pair_of_modules_imports_each_other():
    assert mutual_pairs() <= KNOWN


def test_the_known_pairs_are_current_and_the_broken_ones_stay_broken():
    assert mutual_pairs() == KNOWN
    assert not mutual_pairs() & BROKEN


def test_a_pair_is_found_through_any_kind_of_import():
    known = {"tracktale.a", "tracktale.b", "tracktale.b.c"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from tracktale.b import thing\n"
        "def f():\n    from tracktale.b import c\n"
    )
    assert imports(source, known) == {"tracktale.b", "tracktale.b.c"}
