"""The package-dir mapping lists every subpackage (an unlisted one is missing from the wheel)."""

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.conftest import REPO_ROOT


def setuptools_config() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def package_folder(package: str, config: dict | None = None) -> Path:
    """The folder a listed package is built from (the longest package-dir prefix)."""
    mapping = (config or setuptools_config())["package-dir"]
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in mapping:
            return REPO_ROOT / mapping[prefix] / Path(*parts[cut:])
    raise AssertionError(f"{package} is under no package-dir entry")


def shipped_package_data() -> set[Path]:
    """Every file the package-data patterns put into the wheel."""
    config = setuptools_config()
    return {
        path
        for package, patterns in config["package-data"].items()
        for pattern in patterns
        for path in package_folder(package, config).glob(pattern)
    }


def test_every_package_folder_is_listed_in_pyproject():
    config = setuptools_config()
    mapping = config["package-dir"]
    listed = set(config["packages"])
    found = set()
    for package, folder in mapping.items():
        for init in (REPO_ROOT / folder).rglob("__init__.py"):
            if "node_modules" in init.parts:
                continue
            relative = init.parent.relative_to(REPO_ROOT / folder)
            found.add(".".join((package, *relative.parts)))
    assert found <= listed
    # The others are folders of data only, each with data of its own in the wheel.
    for package in listed - found:
        folder = package_folder(package, config)
        assert folder.is_dir() and not list(folder.glob("*.py")), package
        assert package in config["package-data"], package


def test_every_data_folder_inside_a_package_is_a_listed_package():
    # setuptools warns of every folder holding package data that is not a listed package
    # ("Package would be ignored": about 150 lines on every install, issue 31).
    config = setuptools_config()
    listed = set(config["packages"])
    folders = {path.parent for path in shipped_package_data()}
    for package in config["package-data"]:
        assert package in listed, package
    assert folders <= {package_folder(package, config) for package in listed}


def test_no_module_outside_a_listed_package():
    config = setuptools_config()
    for folder in config["package-dir"].values():
        for module in (REPO_ROOT / folder).rglob("*.py"):
            if "node_modules" in module.parts:
                continue
            assert (module.parent / "__init__.py").is_file(), f"{module} is in no package"


def test_the_wheel_ships_the_report_templates():
    templates = set((REPO_ROOT / "analysis" / "report" / "templates").iterdir())
    assert templates and templates <= shipped_package_data()


def test_building_the_package_warns_of_no_ignored_data_folder(tmp_path):
    # What `pip install -e .` builds, without installing it anywhere.
    build = (
        "import sys; from setuptools import build_meta; "
        f"build_meta.build_editable({str(tmp_path / 'wheel')!r})"
    )
    (tmp_path / "wheel").mkdir()
    leftovers = [REPO_ROOT / "build", REPO_ROOT / "tracktale.egg-info"]
    new = [path for path in leftovers if not path.exists()]
    try:
        done = subprocess.run(
            [sys.executable, "-c", build],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        for path in new:  # what the build left in the checkout, where it was not before
            shutil.rmtree(path, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "would be ignored" not in done.stdout + done.stderr
