"""Shared code does not name a paradigm: it asks the paradigm's plug-in (issue 28).

*Shared* is every Python module of the package except a paradigm's own:

- counted: ``tracktale/`` (the contracts), ``stimuli/`` outside ``stimuli/<paradigm>/``,
  ``models/``, ``experiment/`` outside ``experiment/paradigms/<paradigm>[.py]``, ``analysis/``
  outside ``analysis/<paradigm>/``, ``app/`` and ``ethics/``;
- not counted: the paradigms' own packages and modules, and ``stimuli/registry.py``, the one
  place that lists the paradigms (one registration line each).

A module *names* a paradigm where its code (not its docstrings or comments) holds the
paradigm's name as a string that is compared, passed or assigned (``== "boxes"``,
``get_paradigm("narrative")``), a string or identifier that starts with it
(``"--boxes-functor"``, ``arithmetic_interval``), or a reference to a paradigm's own module
(``tracktale.experiment.paradigms.boxes``). The names that remain are listed in
:data:`KNOWN`, per module, as a list that may only shrink: a new one fails the test, and so does
a module that names fewer than listed (then lower its count, or drop it).
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter

from tests.conftest import REPO_ROOT
from tracktale.stimuli.registry import paradigm_names

SHARED = ("tracktale", "stimuli", "models", "experiment", "analysis", "app", "ethics")
"""The folders searched (the paradigms' own packages inside them are left out)."""
REGISTRATION = "stimuli/registry.py"
COMMON_WORDS = {"items"}
"""Paradigm names that are everyday words, so that only the name itself counts (``items_sha256``
and ``items_per_cell`` do not)."""
Listed = ast.List | ast.Tuple | ast.Set | ast.Dict

KNOWN = {
    "analysis/reading/cli.py": 1,  # "items": folds over items, the word and not the paradigm
    "analysis/reading/deltall.py": 1,  # the same
}
"""Module -> the lines in it that name a paradigm today; may only shrink."""


def _own(relative: str, names: tuple[str, ...]) -> bool:
    """Whether a module belongs to one paradigm (its own package or module)."""
    parts = relative.split("/")
    if parts[0] in ("stimuli", "analysis") and len(parts) > 2 and parts[1] in names:
        return True
    return (
        parts[:2] == ["experiment", "paradigms"]
        and len(parts) > 2
        and (parts[2] in names or parts[2].removesuffix(".py") in names)
    )


def _docstrings(tree: ast.AST) -> set[int]:
    """``id`` of every string that stands alone as a statement (docstrings)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def naming_lines(source: str, names: tuple[str, ...]) -> set[int]:
    """The lines of ``source`` whose code names one of the paradigms ``names``."""
    alternatives = "|".join(map(re.escape, names))
    module = re.compile(
        rf"tracktale\.(?:stimuli|analysis|experiment\.paradigms)\.({alternatives})\b"
    )
    distinct = "|".join(re.escape(name) for name in names if name not in COMMON_WORDS)
    prefix = re.compile(rf"^-*_?({distinct})[_-]")
    tree = ast.parse(source)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    skip = _docstrings(tree)
    lines = set()
    for node in ast.walk(tree):
        texts: list[str] = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            parent = parents.get(id(node))
            used = isinstance(parent, ast.Compare | ast.Call | ast.keyword | ast.Assign | Listed)
            if node.value in names and used:
                lines.add(node.lineno)
            texts.append(node.value)
        elif isinstance(node, ast.Name | ast.Attribute | ast.arg | ast.FunctionDef | ast.ClassDef):
            texts.append(getattr(node, "id", None) or getattr(node, "attr", None) or "")
            texts[-1] = texts[-1] or getattr(node, "arg", None) or getattr(node, "name", "")
        elif isinstance(node, ast.keyword) and node.arg:
            texts.append(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            base = getattr(node, "module", None) or ""
            texts += [f"{base}.{alias.name}" for alias in node.names]
        if any(prefix.match(text) or module.search(text) for text in texts):
            lines.add(getattr(node, "lineno", 0) or getattr(parents.get(id(node)), "lineno", 0))
    return lines


@functools.cache
def offenders() -> Counter[str]:
    """Shared module -> how many of its lines name a paradigm."""
    names = paradigm_names()
    found: Counter[str] = Counter()
    for folder in SHARED:
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            relative = path.relative_to(REPO_ROOT).as_posix()
            if "node_modules" in path.parts or relative == REGISTRATION or _own(relative, names):
                continue
            count = len(naming_lines(path.read_text(encoding="utf-8"), names))
            if count:
                found[relative] = count
    return found


def test_no_new_shared_module_names_a_paradigm():
    found = offenders()
    grown = {m: n for m, n in found.items() if n > KNOWN.get(m, 0)}
    assert not grown, f"shared modules that name a paradigm (ask its plug-in instead): {grown}"


def test_the_known_offenders_are_current():
    found = offenders()
    shrunk = {m: (n, found.get(m, 0)) for m, n in KNOWN.items() if found.get(m, 0) < n}
    assert not shrunk, f"fewer names than listed, lower KNOWN (listed, found): {shrunk}"


def test_the_search_finds_each_kind_of_naming():
    names = ("boxes", "items")
    source = (
        '"""Docstrings may say boxes and tracktale.analysis.boxes."""\n'
        'if paradigm == "boxes":\n'  # 2: compared
        "    from tracktale.experiment.paradigms import boxes\n"  # 3: its module
        'OPTION = "--boxes-functor"\n'  # 4: a flag
        "def f(boxes_functor=1):\n"  # 5: an identifier
        '    return table.get(column or "items")\n'  # a word, not a paradigm
        'KEY = "items"\n'  # 7: assigned
        "# boxes in a comment\n"
        'CHOICES = ["items", "other"]\n'  # 9: listed
        "items_per_cell = items_sha256\n"  # an everyday word as a prefix
    )
    assert naming_lines(source, names) == {2, 3, 4, 5, 7, 9}
