"""The package-dir mapping lists every subpackage (an unlisted one is missing from the wheel)."""

import tomllib

from tests.conftest import REPO_ROOT


def test_every_package_folder_is_listed_in_pyproject():
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping = config["package-dir"]
    listed = set(config["packages"])
    found = set()
    for package, folder in mapping.items():
        for init in (REPO_ROOT / folder).rglob("__init__.py"):
            if "node_modules" in init.parts:
                continue
            relative = init.parent.relative_to(REPO_ROOT / folder)
            found.add(".".join((package, *relative.parts)))
    assert found == listed


def test_no_module_outside_a_listed_package():
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for folder in config["package-dir"].values():
        for module in (REPO_ROOT / folder).rglob("*.py"):
            if "node_modules" in module.parts:
                continue
            assert (module.parent / "__init__.py").is_file(), f"{module} is in no package"


def test_the_wheel_ships_the_report_templates():
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = config["package-data"]["tracktale.analysis.report"]
    root = REPO_ROOT / "analysis" / "report"
    shipped = {path for pattern in patterns for path in root.glob(pattern)}
    templates = set((root / "templates").iterdir())
    assert templates and templates <= shipped
