"""The boxes and arithmetic paradigms through the real scoring path, then the report.

A tiny random-init model makes the answers meaningless but exercises everything a real run
does: generation over the items' plain prompts and chat messages, the paradigms' stop strings
and budgets, their scorers, the results store and the paradigms' report sections.
"""

from __future__ import annotations

import pytest

from tests.conftest import _generated
from tracktale.app.cli import main
from tracktale.models.store import read_results
from tracktale.stimulus_set import write_stimulus_set


def _cli(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    captured = capsys.readouterr()
    assert exit_info.value.code == 0, captured.err
    return captured.out


@pytest.fixture(scope="module")
def paradigm_sets(tmp_path_factory):
    root = tmp_path_factory.mktemp("paradigm-sets")
    boxes = _generated("boxes", "smoke", 1, (("prompt_format", ("single-turn", "multi-round")),))
    arithmetic = _generated(
        "arithmetic", "pilot", 1,
        (("datasets", ("int_1-10_mixed_lb2",)), ("horizons", (5,)), ("per_horizon", 3)),
    )  # fmt: skip
    return {
        "boxes": (boxes, write_stimulus_set(boxes, root / "boxes")),
        "arithmetic": (arithmetic, write_stimulus_set(arithmetic, root / "arithmetic")),
    }


@pytest.mark.slow  # 15-20 s each: generation end to end; the full lane runs it
@pytest.mark.parametrize("paradigm", ["boxes", "arithmetic"])
def test_explicit_scoring_runs_the_paradigm_end_to_end(
    paradigm, paradigm_sets, model_dirs, tmp_path, capsys
):
    stimulus_set, folder = paradigm_sets[paradigm]
    results = tmp_path / "results"
    model = "olmo2-instruct" if paradigm == "boxes" else "pythia"
    _cli(
        [
            "models",
            "score",
            "--stimuli",
            str(folder),
            "--model",
            str(model_dirs[model]),
            "--task",
            "explicit",
            "--max-new-tokens",
            "12",
            "--out",
            str(results),
        ],
        capsys,
    )
    rows = read_results(results)
    assert sorted(rows["item_id"]) == sorted(item.item_id for item in stimulus_set)
    assert set(rows["task"]) == {"explicit"}
    assert rows["output"].map(type).eq(str).all()
    if paradigm == "boxes":
        # Random output is garbage: scored as unparsed, never a crash.
        assert {"state_em", "step_em", "parse_rate"} <= set(rows.columns)
        multi = [i.item_id for i in stimulus_set if i.condition["prompt_format"] == "multi-round"]
        formats = rows.set_index("item_id").loc[multi, "prompt_format"]
        assert set(formats) == {"chat"}  # faked multi-round turns through the chat template
    else:
        # FAA is `correct`; CAA, PAR, AP and SFB beside it.
        assert {"correct_any", "parseable", "answer_position", "step_following"} <= set(
            rows.columns
        )
        assert not rows["correct"].any()
    _cli(
        [
            "analysis",
            "report",
            "--stimuli",
            str(folder),
            "--models",
            str(results),
            "--out",
            str(tmp_path / "report"),
        ],
        capsys,
    )
    assert (tmp_path / "report" / paradigm).is_dir()
    assert f"{paradigm}: models" in (tmp_path / "report" / "report.html").read_text()


def test_generation_stops_at_a_stop_string_and_at_each_requests_budget(model_dirs):
    from tracktale.models.registry import load_scorer
    from tracktale.scorer import GenerationRequest

    scorer = load_scorer(str(model_dirs["pythia"]))
    prompt = "Anna began tidying up her room. She picked up a key and"
    free = scorer.generate([GenerationRequest(prompt, max_new_tokens=24)])[0]
    stop = free[len(free) // 2 : len(free) // 2 + 3]
    assert stop.strip(), f"need a visible stop string in {free!r}"
    cut, short = scorer.generate([
        GenerationRequest(prompt, max_new_tokens=24, stop=(stop,)),
        GenerationRequest(prompt, max_new_tokens=3),
    ])  # fmt: skip
    assert cut == free[: free.index(stop)]
    assert len(scorer.tokenizer(short, add_special_tokens=False)["input_ids"]) <= 3
    finished = scorer._finished_check(
        [GenerationRequest(prompt, max_new_tokens=50, stop=("\nStep-",))]
    )
    ids = scorer.tokenizer("OPENED(BOX-1)=True\nStep-2", add_special_tokens=False)["input_ids"]
    assert finished(0, ids)
    assert not finished(0, ids[:3])
