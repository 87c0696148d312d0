"""The front end: jsPsych only from npm, our plugins self-describing and valid JavaScript."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess

import pytest

from tests.conftest import REPO_ROOT, require
from tracktale.errors import TracktaleError
from tracktale.experiment.web import frontend

FRONTEND = REPO_ROOT / "experiment" / "frontend"
STATIC = REPO_ROOT / "experiment" / "static"
OUR_JS = sorted(STATIC.rglob("*.js"))


def test_jspsych_comes_from_npm_pinned_by_the_lock_file():
    manifest = json.loads((FRONTEND / "package.json").read_text())
    lock = json.loads((FRONTEND / "package-lock.json").read_text())
    for name, version in manifest["dependencies"].items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
        assert lock["packages"][f"node_modules/{name}"]["integrity"].startswith("sha512-")
    assert manifest["dependencies"]["jspsych"].startswith("8.")
    served = {path.split("/dist/")[0].split("/css/")[0] for path in frontend.VENDOR_FILES.values()}
    assert served <= set(manifest["dependencies"])


def test_the_checking_tools_are_pinned_dev_dependencies_never_installed_for_serving():
    manifest = json.loads((FRONTEND / "package.json").read_text())
    lock = json.loads((FRONTEND / "package-lock.json").read_text())
    tools = manifest["devDependencies"]
    assert {"eslint", "jsdom"} <= set(tools)
    assert not set(tools) & set(manifest["dependencies"])
    for name, version in tools.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
        assert lock["packages"][f"node_modules/{name}"]["dev"] is True
    assert (FRONTEND / "eslint.config.js").is_file()
    assert "eslint" in manifest["scripts"]["lint"]
    assert manifest["scripts"]["test"].startswith("node --test")
    source = (REPO_ROOT / "experiment" / "web" / "frontend.py").read_text()
    assert '"ci", "--omit=dev"' in source
    assert "install_frontend dev" in (REPO_ROOT / "scripts" / "test.sh").read_text()


def test_no_third_party_javascript_is_copied_into_the_repository():
    for path in OUR_JS:
        text = path.read_text()
        assert "jsPsych" in text or "tracktale" in text.lower()
        assert "Copyright" not in text and "@license" not in text
    modules = FRONTEND / "node_modules"
    if modules.is_dir():
        # Some packages are folders named like scripts (decimal.js, which jsdom uses).
        scripts = [p for p in modules.rglob("*.js") if p.is_file()]
        vendored = {hashlib.sha256(p.read_bytes()).hexdigest() for p in scripts}
        ours = {hashlib.sha256(p.read_bytes()).hexdigest() for p in OUR_JS}
        assert not vendored & ours


@pytest.mark.parametrize("path", OUR_JS, ids=lambda p: p.name)
def test_our_scripts_are_valid_javascript(path):
    node = shutil.which("node")
    require(node is not None, "node is not installed")
    result = subprocess.run([node, "--check", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("path", sorted((STATIC / "plugins").glob("*.js")), ids=lambda p: p.name)
def test_plugins_declare_typed_parameters_data_and_simulate(path):
    text = path.read_text()
    assert re.search(r'name: "[a-z-]+",\s*version: "\d+\.\d+\.\d+"', text)
    for section in ("parameters: {", "data: {"):
        assert section in text
    assert "simulate(trial, simulation_mode, simulation_options, load_callback)" in text
    assert "jspsych.ParameterType." in text
    assert ".innerHTML" not in text  # stimuli go in as text, never as markup


def test_node_modules_lookup_order_and_error(monkeypatch, tmp_path):
    monkeypatch.setenv(frontend.FRONTEND_ENV, str(tmp_path / "deployed"))
    assert frontend.candidate_dirs()[0] == tmp_path / "deployed"
    monkeypatch.setattr(frontend, "candidate_dirs", lambda: [tmp_path / "empty"])
    with pytest.raises(TracktaleError, match="tracktale experiment install-frontend"):
        frontend.find_node_modules()
    fake = tmp_path / "installed"
    for relative in frontend.VENDOR_FILES.values():
        (fake / "node_modules" / relative).parent.mkdir(parents=True, exist_ok=True)
        (fake / "node_modules" / relative).write_text("//")
    monkeypatch.setattr(frontend, "candidate_dirs", lambda: [tmp_path / "empty", fake])
    assert frontend.find_node_modules() == fake / "node_modules"


def test_install_frontend_needs_npm(monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(TracktaleError, match="npm"):
        frontend.install_frontend(tmp_path)


def test_the_wheel_ships_the_front_end_manifest_and_our_static_files():
    from tests.tracktale.test_packaging import shipped_package_data

    shipped = shipped_package_data()
    root = REPO_ROOT / "experiment"
    needed = [*OUR_JS, *STATIC.glob("*.css"), *root.glob("templates/*.html")]
    needed += [
        FRONTEND / "package.json",
        FRONTEND / "package-lock.json",
        root / "default_study.yaml",
        *root.glob("locales/*.yaml"),
    ]
    assert set(needed) <= shipped
    assert not [p for p in shipped if "node_modules" in p.parts]
    ethics = REPO_ROOT / "ethics"
    documents = [*ethics.glob("*.md"), *ethics.glob("*/*.md"), *ethics.glob("*/*.yaml")]
    assert set(documents) <= shipped
