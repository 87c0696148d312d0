"""The study's rules raise domain errors; only the web layer knows their HTTP statuses."""

from __future__ import annotations

import ast

from tests.conftest import REPO_ROOT
from tracktale.errors import TracktaleError
from tracktale.experiment.study import errors
from tracktale.experiment.web.api import REFUSAL_STATUS

RULES_WITHOUT_HTTP = (
    "experiment/study/trialflow.py",
    "experiment/study/service.py",
    "experiment/study/errors.py",
)
"""Study rules that raise only domain errors."""


def test_every_refusal_has_a_status_in_the_web_layer():
    kinds = [
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, errors.StudyRefusal)
    ]
    assert set(kinds) - {errors.StudyRefusal} == set(REFUSAL_STATUS)
    assert {kind.__name__: status for kind, status in REFUSAL_STATUS.items()} == {
        "InvalidRequest": 400,
        "NotAuthenticated": 401,
        "NotPermitted": 403,
        "UnknownParticipant": 404,
        "WrongState": 409,
        "InconsistentRequest": 422,
    }
    assert all(issubclass(kind, TracktaleError) for kind in kinds)


def test_the_rules_name_no_http_error():
    for relative in RULES_WITHOUT_HTTP:
        tree = ast.parse((REPO_ROOT / relative).read_text(encoding="utf-8"))
        names = {
            node.id if isinstance(node, ast.Name) else node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Name | ast.Attribute)
        }
        assert "ApiError" not in names, relative


def test_a_refusal_keeps_its_details_for_the_client():
    error = errors.WrongState("closed", reason="closed", participant_status="completed")
    assert (error.message, error.details) == (
        "closed",
        {"reason": "closed", "participant_status": "completed"},
    )
    assert str(error) == "closed"
