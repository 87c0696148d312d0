"""Study files: defaults, unknown keys, types, secrets from the environment."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from tracktale.errors import TracktaleError
from tracktale.experiment.paradigms import DEFAULT_PARADIGM, get_human_study
from tracktale.experiment.study import config
from tracktale.experiment.study.config import (
    Secrets,
    StudyConfig,
    default_study_yaml,
    load_study,
    study_from_dict,
)


def write(tmp_path, text):
    path = tmp_path / "study.yaml"
    path.write_text(text)
    return path


def test_the_packaged_default_file_is_the_default_config():
    assert study_from_dict(yaml.safe_load(default_study_yaml())) == StudyConfig()
    assert load_study(None).paper_timing


def test_the_default_study_id_and_title_are_the_default_paradigms_studys(monkeypatch):
    study = get_human_study(DEFAULT_PARADIGM)
    default = StudyConfig()
    assert (default.study_id, default.title) == (study.study_id, study.title)
    assert f"study_id: {study.study_id}  #" in default_study_yaml()
    # Asked of the plug-in when a config is built: shared code keeps no copy of them.
    monkeypatch.setattr(type(study), "study_id", "another-default")
    monkeypatch.setattr(type(study), "title", "Another title")
    assert (StudyConfig().study_id, StudyConfig().title) == ("another-default", "Another title")
    assert load_study(None).study_id == "another-default"


def _declared_keys(cls, prefix=""):
    keys = set()
    for declared in dataclasses.fields(cls):
        if dataclasses.is_dataclass(declared.default_factory):
            keys |= _declared_keys(declared.default_factory, f"{declared.name}.")
        elif declared.name != "source_file":
            keys.add(prefix + declared.name)
    return keys


def _file_keys(data, prefix=""):
    keys = set()
    for key, value in data.items():
        nested = isinstance(value, dict)
        keys |= _file_keys(value, f"{key}.") if nested else {prefix + key}
    return keys


def test_the_packaged_default_file_documents_every_declared_key():
    assert _file_keys(yaml.safe_load(default_study_yaml())) == _declared_keys(StudyConfig)
    # The packaged copy is the one written from the declaration (to refresh it:
    # rm experiment/default_study.yaml && tracktale experiment init experiment/default_study.yaml).
    packaged = Path(config.__file__).parent.parent / "default_study.yaml"
    assert packaged.read_text(encoding="utf-8") == default_study_yaml()


def test_a_study_file_overrides_only_what_it_names(tmp_path):
    path = write(tmp_path, "study_id: pilot-1\ntiming: {reading_ms: 20000}\nstimuli: sets/human\n")
    config = load_study(path)
    assert config.study_id == "pilot-1"
    assert (config.timing.reading_ms, config.timing.response_ms) == (20000, 15000)
    assert not config.paper_timing
    assert config.stimulus_dir() == tmp_path / "sets" / "human"  # relative to the file


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("colour: blue\n", "unknown key 'colour'"),
        ("admin_secret: x\n", "secrets come from the environment"),
        ("timing: {reading: 3}\n", "unknown key timing.reading"),
        ("timing: {reading_ms: fast}\n", "'timing.reading_ms' must be int"),
        ("timing: {reading_ms: 100}\n", "timing.reading_ms must be between"),
        ("allow_missing_pid: 1\n", "'allow_missing_pid' must be bool"),
        ("prolific: {completion_code: 'has space'}\n", "prolific.completion_code may use"),
        ("prolific: {completion_url: 'https://x.org/done'}\n", "must contain {code}"),
        ("study_id: '../x'\n", "study_id '../x'"),
        ("- a list\n", "must be a mapping"),
        ("timing: [1, 2]\n", "'timing' must be a mapping"),
        ("a: [unclosed\n", "not valid YAML"),
    ],
)
def test_bad_study_files_name_the_file_and_key(tmp_path, text, fragment):
    path = write(tmp_path, text)
    with pytest.raises(TracktaleError) as error:
        load_study(path)
    assert fragment in str(error.value)
    assert str(path) in str(error.value)


def test_a_missing_file_is_an_error(tmp_path):
    with pytest.raises(TracktaleError, match="cannot read study file"):
        load_study(tmp_path / "none.yaml")


def test_database_url_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    config = StudyConfig()
    assert config.database_url().endswith("tracktale-data/study/narrative-entity-tracking.sqlite")
    assert StudyConfig(database="x.sqlite").database_url() == "sqlite:///x.sqlite"
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@db/study")
    assert config.database_url() == "postgresql+psycopg://u:p@db/study"


def test_secrets_come_from_the_environment():
    secrets = Secrets.from_env({})
    assert secrets.generated_admin_secret and len(secrets.admin_secret) >= 20
    given = Secrets.from_env({"TRACKTALE_ADMIN_SECRET": "a-long-enough-secret"})
    assert given.admin_secret == "a-long-enough-secret" and not given.generated_admin_secret
    # Workers of one server derive the same cookie key from the shared secret.
    assert (
        given.secret_key
        == Secrets.from_env({"TRACKTALE_ADMIN_SECRET": "a-long-enough-secret"}).secret_key
    )
    with pytest.raises(TracktaleError, match="too short"):
        Secrets.from_env({"TRACKTALE_ADMIN_SECRET": "short"})


def test_redirects_use_the_codes():
    config = StudyConfig()
    assert config.prolific.redirect("ABC") == "https://app.prolific.com/submissions/complete?cc=ABC"
