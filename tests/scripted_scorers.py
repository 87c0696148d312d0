"""Scorers without a model, for tests that need a backend's answers but not a network's."""

from __future__ import annotations

from collections.abc import Mapping

from tracktale.scorer import ModelInfo, Scorer, TokenScores


class ScriptedScorer(Scorer):
    """Answers every request alike: ``box``, and the same log-probabilities."""

    def __init__(self, model_id: str = "scripted") -> None:
        self.info = ModelInfo(model_id, None, None, "scripted", "none", "cpu", "none", {})

    def conditional_score(self, requests):
        return [[TokenScores(("a",), (-1.0,)), TokenScores(("b",), (-2.0,))] for _ in requests]

    def sequence_score(self, requests):
        return [TokenScores(("x",), (-1.0,), (0,)) for _ in requests]

    def generate(self, requests):
        return ["box" for _ in requests]


class Answering(Scorer):
    """Generates the answer given for each prompt; asks for no log-probabilities."""

    def __init__(self, answers: Mapping[str, str]) -> None:
        self.info = ModelInfo("toy/model", None, None, "toy", "none", "cpu", "none", {})
        self.answers = answers

    def conditional_score(self, requests):
        raise NotImplementedError

    def sequence_score(self, requests):
        raise NotImplementedError

    def generate(self, requests):
        return [self.answers[request.prompt] for request in requests]
