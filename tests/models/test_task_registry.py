"""Tasks are registered objects with a declared result model; the stages follow the registry."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated

import pytest

from tests.scripted_scorers import ScriptedScorer
from tracktale.analysis.data import load
from tracktale.analysis.data import tidy as data
from tracktale.app.cli import main
from tracktale.errors import TracktaleError
from tracktale.models import registry, runner, store, tasks
from tracktale.models.cli import TASK_CHOICES, task_choices
from tracktale.models.tasks import TASK_REGISTRY, Task, TaskRow, get_task, score_items
from tracktale.schema.results import CARRIED, ImplicitResult, Judgement, SequenceResult
from tracktale.scorer import TASKS

OLD_STANDARD_COLUMNS = (
    *("model_id", "revision", "item_id", "task", "stimulus_sha256", "paradigm", "resolved_sha"),
    *("backend", "dtype", "device", "bos_policy", "model_source", "source_file"),
    *("source_sha256", "source_package", "quantization", "n_parameters", "has_chat_template"),
    *("chat_template_used", "correct", "logprob_good", "logprob_bad", "mean_good", "mean_bad"),
    *("n_tokens_good", "n_tokens_bad", "prior_good", "prior_bad", "correct_calibrated"),
    *("output", "prompt_format", "logprob", "n_tokens", "written_at"),
)
"""The store's hand-written list before it was derived: stored shards read as they did."""


@pytest.fixture
def registered():
    """Register a task for one test; the registry is as it was afterwards."""
    before = dict(TASK_REGISTRY.items())

    def register(task: Task) -> Task:
        TASK_REGISTRY.add(task.name, task, lazy=False)
        return task

    yield register
    for name in TASK_REGISTRY.names():
        if name not in before:
            TASK_REGISTRY.remove(name)
    for name, task in before.items():
        TASK_REGISTRY.add(name, task, lazy=False)


def test_the_registry_holds_the_contracts_tasks_and_the_stages_follow_it():
    assert tasks.task_names() == TASKS
    assert TASK_CHOICES["all"] == TASKS
    assert registry.backend_tasks("hf") == TASKS
    assert registry.backend_tasks("openai") == ("explicit",)
    assert store.STANDARD_COLUMNS == store.standard_columns() == OLD_STANDARD_COLUMNS
    assert set(data.model_carry()) == {
        *("resolved_sha", "model_source", "source_file", "source_sha256", "source_package"),
        *("quantization", "stimulus_sha256", "backend", "dtype", "correct_calibrated"),
        *("logprob_good", "logprob_bad", "mean_good", "mean_bad", "n_tokens_good"),
        *("n_tokens_bad", "output", "prompt_format", "logprob", "n_tokens"),
    }
    with pytest.raises(TracktaleError, match="unknown task 'cloze'"):
        get_task("cloze")


def _implicit_with(**more):
    implicit = get_task("implicit")

    def run(scorer, items, options):
        return [TaskRow({**row.scores, **more}) for row in implicit.run(scorer, items, options)]

    return run


@pytest.mark.parametrize(
    ("more", "message"),
    [
        ({"surprise": 1}, "the implicit task wrote 'surprise', which ImplicitResult does not"),
        ({"correct": 1}, "the implicit task wrote 'correct' against ImplicitResult"),
        ({"tokens_good": ["a", 2]}, "wrote 'tokens_good.1' against ImplicitResult"),
        ({"n_tokens_good": 1.0}, "wrote 'n_tokens_good' against ImplicitResult"),
    ],
)
def test_a_task_writing_an_undeclared_or_ill_typed_field_fails(
    registered, stimulus_set, more, message
):
    registered(dataclasses.replace(get_task("implicit"), run=_implicit_with(**more)))
    with pytest.raises(TracktaleError, match=message):
        score_items(ScriptedScorer(), stimulus_set.items[:2], "implicit", stimulus_sha256="s")


def test_a_task_leaving_out_a_required_field_fails(registered, stimulus_set):
    sequence = get_task("sequence")

    def run(scorer, items, options):
        rows = sequence.run(scorer, items, options)
        return [TaskRow({k: v for k, v in row.scores.items() if k != "logprob"}) for row in rows]

    registered(dataclasses.replace(sequence, run=run))
    with pytest.raises(TracktaleError, match="'logprob' against SequenceResult .missing"):
        score_items(ScriptedScorer(), stimulus_set.items[:1], "sequence", stimulus_sha256="s")


@dataclass(frozen=True, kw_only=True)
class OutputJudgement(Judgement):
    """A judgement that names one of its fields as the explicit task's own ``output``."""

    output: str


def test_a_paradigm_key_cannot_shadow_a_declared_explicit_field(monkeypatch, stimulus_set):
    paradigm = type(get_paradigm_of(stimulus_set))
    monkeypatch.setattr(paradigm, "judgement", OutputJudgement)
    monkeypatch.setattr(
        paradigm,
        "score_response",
        lambda self, item, response: OutputJudgement(correct=True, output="x"),
    )
    with pytest.raises(TracktaleError, match="'output' is a field of the explicit task's rows"):
        score_items(ScriptedScorer(), stimulus_set.items[:1], "explicit", stimulus_sha256="s")


def get_paradigm_of(stimulus_set):
    from tracktale.stimuli.registry import get_paradigm

    return get_paradigm(stimulus_set.manifest.paradigm)


@dataclass(frozen=True, kw_only=True)
class ImplicitWithEntropy(ImplicitResult):
    """The implicit result with one more field: the only edit a new field needs."""

    entropy: Annotated[float | None, CARRIED] = None
    flagged: bool | None = None


def test_adding_a_field_to_a_result_model_is_one_edit(registered, stimulus_set, tmp_path):
    registered(
        dataclasses.replace(
            get_task("implicit"),
            result=ImplicitWithEntropy,
            run=_implicit_with(entropy=0.5, flagged=True),
        )
    )
    old = tmp_path / "store"
    items = stimulus_set.items[:2]
    scorer = ScriptedScorer()
    store.write_shard(old, score_items(scorer, items[:1], "sequence", stimulus_sha256="s"))
    store.write_shard(old, score_items(scorer, items, "implicit", stimulus_sha256="s"))
    # The store's columns and dtypes follow, a row that lacks the field reads as NA ...
    assert "entropy" in store.standard_columns() and "flagged" not in store.standard_columns()
    frame = store.read_results(old)
    assert frame["flagged"].dtype == "boolean" and frame["entropy"].dtype == "float64"
    by_task = frame.set_index("task")
    assert by_task.loc["implicit", "entropy"].tolist() == [0.5, 0.5]
    assert by_task.loc["sequence", "flagged"] is pd_na()
    # ... and the analysis carries it into the trial table.
    assert "entropy" in data.model_carry()
    tidy = data.model_trial_rows(load.load_model_results(old))
    assert tidy.loc[tidy["task"] == "implicit", "entropy"].tolist() == [0.5, 0.5]


def pd_na():
    import pandas as pd

    return pd.NA


def test_a_new_task_is_one_registration(registered, stimulus_set, tmp_path):
    @dataclass(frozen=True, kw_only=True)
    class EchoResult(SequenceResult):
        """The sequence task's fields again (a task of its own)."""

    sequence = get_task("sequence")
    registered(dataclasses.replace(sequence, name="echo", result=EchoResult))
    assert tasks.task_names() == (*TASKS, "echo") and "echo" in registry.backend_tasks("hf")
    assert "echo" not in registry.backend_tasks("openai")
    with pytest.raises(TracktaleError, match="the openai backend answers the explicit task only"):
        registry.check_backend("openai", ["echo"], {})
    rows = score_items(ScriptedScorer(), stimulus_set.items[:1], "echo", stimulus_sha256="s")
    store.write_shard(tmp_path, rows)
    assert load.load_model_results(tmp_path)["task"].tolist() == ["echo"]


def test_the_judged_tasks_are_those_with_a_judged_result():
    assert tasks.judged_tasks() == ("implicit", "explicit")  # the order --task both scores in
    assert task_choices()["both"] == TASK_CHOICES["both"] == ("implicit", "explicit")
    assert not get_task("sequence").judged


def _result_frame(rows):
    import pandas as pd

    keys = ("model_id", "revision", "item_id", "task", "correct")
    return pd.DataFrame([dict(zip(keys, row, strict=True)) for row in rows])


def test_a_registered_judged_task_is_scored_by_both_and_analysed(
    registered, stimulus_dir, monkeypatch, capsys
):
    registered(dataclasses.replace(get_task("implicit"), name="cloze"))
    registered(dataclasses.replace(get_task("sequence"), name="echo"))
    assert tasks.judged_tasks() == ("implicit", "explicit", "cloze")
    # The command line's `both` scores it (after the two built-in judged tasks) ...
    jobs = []

    def run_scoring(job, reporter):
        jobs.append(job)
        raise TracktaleError("stopped before scoring")

    monkeypatch.setattr(runner, "run_scoring", run_scoring)
    with pytest.raises(SystemExit):
        main(["models", "score", "--stimuli", str(stimulus_dir), "--model", "m", "--task", "both"])
    capsys.readouterr()
    assert [job.tasks for job in jobs] == [("implicit", "explicit", "cloze")]
    # ... and the analysis holds its rows to the judged tasks' rule: each has a judgement.
    judged = _result_frame([("m", "", "i1", "cloze", None)])
    with pytest.raises(TracktaleError, match="row 1: correct is missing"):
        load.load_model_results(judged)
    unjudged = load.load_model_results(_result_frame([("m", "", "i1", "echo", None)]))
    assert unjudged["task"].tolist() == ["echo"]
