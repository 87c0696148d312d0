"""Run mypy over the tracktale package, configured by ``[tool.mypy]`` in pyproject.toml.

One import namespace, ``tracktale.*``, is spread over the stage folders by setuptools'
``package-dir`` (``stimuli/`` is ``tracktale.stimuli``), and the editable install finds them
with an import hook that mypy cannot follow. So this script lays the package out as it is
imported, in a tree of symbolic links under ``.mypy_cache/package-tree``, runs mypy on it and
writes mypy's report with the repository's own paths. Arguments go to mypy.

Usage: ``python scripts/typecheck.py [mypy options]`` (``scripts/test.sh`` runs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TREE = REPO / ".mypy_cache" / "package-tree"


def package_folders() -> dict[str, str]:
    """The top-level package and each stage subpackage, by import name, with its folder."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    return mapping


def build_tree(tree: Path = TREE) -> dict[str, str]:
    """Link the package into ``tree`` as it is imported.

    Args:
        tree: The folder to lay the package out in (emptied first); the docs build uses one of
            its own (``scripts/docs_hooks.py``).

    Returns:
        For each linked folder, the prefix mypy reports (relative to the repository) and the
        repository path it stands for, longest first.
    """
    shutil.rmtree(tree, ignore_errors=True)
    root = tree / "tracktale"
    root.mkdir(parents=True)
    folders = package_folders()
    top = REPO / folders["tracktale"]
    for entry in sorted(top.iterdir()):
        if entry.name != "__pycache__":
            (root / entry.name).symlink_to(entry)
    prefixes = {}
    for name, folder in folders.items():
        parts = name.split(".")[1:]
        if parts:
            (root.joinpath(*parts)).symlink_to(REPO / folder, target_is_directory=True)
        linked = root.joinpath(*parts).relative_to(REPO).as_posix() + "/"
        prefixes[linked] = folder.rstrip("/") + "/"
    return dict(sorted(prefixes.items(), key=lambda pair: -len(pair[0])))


def real_paths(report: str, prefixes: dict[str, str]) -> str:
    """Mypy's report with each linked path written as the repository path it stands for."""
    lines = []
    for line in report.splitlines(keepends=True):
        for linked, real in prefixes.items():
            if line.startswith(linked):
                line = real + line[len(linked) :]
                break
        lines.append(line)
    return "".join(lines)


def main(argv: list[str]) -> int:
    """Type-check the package; mypy's exit status (0: no errors)."""
    prefixes = build_tree()
    env = {**os.environ, "MYPYPATH": str(TREE)}
    # A cache of its own: mypy's cache records paths, which must be those of this tree.
    command = [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml"]
    command += ["--cache-dir", str(TREE.parent / "package-tree-cache"), "-p", "tracktale"]
    result = subprocess.run(
        [*command, *argv], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )
    sys.stdout.write(real_paths(result.stdout, prefixes))
    sys.stderr.write(real_paths(result.stderr, prefixes))
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
