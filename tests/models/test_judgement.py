"""The explicit task's parts are declared records: each paradigm's judgement, each backend's
generation details; the task checks them and the store types their columns from them."""

from __future__ import annotations

import dataclasses
import pkgutil
import typing
from dataclasses import dataclass

import pytest

from tests.scripted_scorers import ScriptedScorer
from tracktale.errors import TracktaleError
from tracktale.item import Item
from tracktale.models import registry, store
from tracktale.models.tasks import score_items
from tracktale.schema.results import Judgement
from tracktale.scorer import Generation, GenerationDetails
from tracktale.stimuli.narrative import NarrativeJudgement, NarrativeParadigm
from tracktale.stimuli.paradigm import Paradigm
from tracktale.stimuli.registry import get_paradigm, paradigm_names


class DetailedScorer(ScriptedScorer):
    """Generates ``box`` and reports ``details`` with every generation."""

    def __init__(self, details: dict[str, object] | None = None) -> None:
        super().__init__()
        self.details = details or {}

    def generate_detailed(self, requests):
        return [Generation("box", details=dict(self.details)) for _ in requests]


@dataclass(frozen=True, kw_only=True)
class LatencyDetails(GenerationDetails):
    """A backend that reports how long each generation took."""

    latency: float


class TimedScorer(DetailedScorer):
    generation_details = LatencyDetails


def _judging(monkeypatch, record=None, **more):
    """The narrative paradigm's judgement built as ``record`` with ``more`` fields set."""
    original = NarrativeParadigm.score_response

    def score_response(self, item, response):
        fields = dataclasses.asdict(original(self, item, response))
        return (record or NarrativeJudgement)(**{**fields, **more})

    monkeypatch.setattr(NarrativeParadigm, "score_response", score_response)


def _explicit(stimulus_set, scorer=None):
    return score_items(
        scorer or DetailedScorer(), stimulus_set.items[:1], "explicit", stimulus_sha256="s"
    )


def test_every_paradigm_declares_a_judgement_with_correct():
    for name in paradigm_names():
        judgement = get_paradigm(name).judgement
        assert issubclass(judgement, Judgement) and judgement is not Judgement
    assert get_paradigm("narrative").judgement is NarrativeJudgement


def _an_item(paradigm: Paradigm) -> Item:
    """The first item of the paradigm's example (an importer) or of its first protocol."""
    if paradigm.source == "importer":
        assert paradigm.example is not None
        example = paradigm.example
        return paradigm.import_set(example / "items.csv", example / "design.yaml").items[0]
    config = paradigm.resolve_config(next(iter(paradigm.protocols)))
    return next(iter(paradigm.generate(config, seed=7)))


@pytest.mark.parametrize("name", ["narrative", "boxes", "arithmetic", "items"])
def test_each_paradigm_scores_a_response_as_its_declared_judgement(name):
    paradigm = get_paradigm(name)
    item = _an_item(paradigm)
    for response in (item.answer, "", "no idea"):
        judged = paradigm.score_response(item, response)
        assert type(judged) is paradigm.judgement, (name, response)
    # ... and says so in its signature, which is what the type checker holds its fields to.
    returns = typing.get_type_hints(type(paradigm).score_response)["return"]
    assert returns is paradigm.judgement
    assert name in paradigm_names()


def test_a_judgement_built_with_a_misspelt_field_fails_where_it_is_built():
    with pytest.raises(TypeError, match="unexpected keyword argument 'answer_named'"):
        NarrativeJudgement(correct=True, matched=None, answer_named=1, several_answers=False)
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'matched'"):
        NarrativeJudgement(correct=True, answers_named=1, several_answers=False)


def test_a_judgement_of_another_record_fails_the_run(monkeypatch, stimulus_set):
    monkeypatch.setattr(
        NarrativeParadigm, "score_response", lambda self, item, response: Judgement(correct=True)
    )
    message = (
        "^the explicit task: the narrative paradigm's judgement is a Judgement, not its "
        "NarrativeJudgement$"
    )
    with pytest.raises(TracktaleError, match=message):
        _explicit(stimulus_set)
    monkeypatch.setattr(
        NarrativeParadigm, "score_response", lambda self, item, response: {"correct": True}
    )
    with pytest.raises(TracktaleError, match="judgement is a dict, not its NarrativeJudgement$"):
        _explicit(stimulus_set)


def test_a_judgement_key_the_paradigm_does_not_declare_fails_the_run(monkeypatch, stimulus_set):
    # A subclass of the declared record passes as one, but its own fields are not columns.
    _judging(monkeypatch, SureJudgement, confidence=0.9)
    message = (
        "^the explicit task: the narrative paradigm's judgement wrote 'confidence', which "
        "NarrativeJudgement does not declare$"
    )
    with pytest.raises(TracktaleError, match=message):
        _explicit(stimulus_set)


def test_an_ill_typed_judgement_fails_the_run(monkeypatch, stimulus_set):
    _judging(monkeypatch, answers_named="2")
    message = (
        r"^the explicit task: the narrative paradigm's judgement wrote 'answers_named' against "
        r"NarrativeJudgement \(int_type: str\)$"
    )
    with pytest.raises(TracktaleError, match=message):
        _explicit(stimulus_set)


def test_a_generation_detail_the_backend_does_not_declare_fails_the_run(stimulus_set):
    message = (
        "^the explicit task: the scripted backend's generation details wrote 'latency', which "
        "GenerationDetails does not declare$"
    )
    with pytest.raises(TracktaleError, match=message):
        _explicit(stimulus_set, DetailedScorer({"latency": 0.5}))


def test_an_ill_typed_generation_detail_fails_the_run(stimulus_set):
    message = r"wrote 'latency' against LatencyDetails \(float_type: str\)$"
    with pytest.raises(TracktaleError, match=message):
        _explicit(stimulus_set, TimedScorer({"latency": "fast"}))
    (row,) = _explicit(stimulus_set, TimedScorer({"latency": 0.5}))
    assert row.scores["latency"] == 0.5 and row.scores["matched"] is None


def test_the_registry_names_each_backends_own_details_record():
    for name in registry.backend_names():
        scorer = pkgutil.resolve_name(registry.BACKENDS.get(name).scorer)
        assert registry.generation_details(name) is scorer.generation_details, name
    assert registry.generation_details("hf") is GenerationDetails


@dataclass(frozen=True, kw_only=True)
class SureJudgement(NarrativeJudgement):
    """The narrative judgement with one more field: the only edit a new field needs."""

    confidence: float | None = None
    hedged: bool | None = None


def test_a_field_added_to_a_judgement_flows_into_the_store(monkeypatch, stimulus_set, tmp_path):
    assert "confidence" not in store.typed(float)
    monkeypatch.setattr(NarrativeParadigm, "judgement", SureJudgement)
    _judging(monkeypatch, SureJudgement, confidence=1, hedged=False)
    store.write_shard(tmp_path, _explicit(stimulus_set))
    assert "confidence" in store.typed(float) and "hedged" in store.typed(bool)
    frame = store.read_results(tmp_path)
    assert frame["confidence"].dtype == "float64" and frame["confidence"].tolist() == [1.0]
    assert frame["hedged"].dtype == "boolean" and frame["answers_named"].dtype == "Int64"


def test_two_records_cannot_type_one_column_differently(monkeypatch):
    @dataclass(frozen=True, kw_only=True)
    class Clashing(Judgement):
        """``answers_named`` as text, where the narrative judgement has a count."""

        answers_named: str

    paradigm = get_paradigm("boxes")
    monkeypatch.setattr(type(paradigm), "judgement", Clashing)
    with pytest.raises(TracktaleError, match="column 'answers_named' is <class 'int'>"):
        store.typed(int)
