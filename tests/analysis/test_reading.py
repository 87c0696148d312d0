"""analysis reading: the per-word table, the join with stored word surprisal, exclusions,
recovery of a planted surprisal slope, ΔLL near zero without one, and the command."""

from __future__ import annotations

import math
import sys
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tracktale.analysis.reading.analyse import ReadingOptions, analyse_reading
from tracktale.analysis.reading.calibration import null_design, run_study, wilson
from tracktale.analysis.reading.predictors import Exclusions, exclude, word_table
from tracktale.analysis.reading.records import check_reading_times, read_reading_times
from tracktale.analysis.reading.simulate import SIMULATED_MODEL, ReadingDesign, simulate_study
from tracktale.analysis.reading.surprisal import join_surprisal, model_words
from tracktale.errors import TracktaleError
from tracktale.models import store
from tracktale.scorer import ModelInfo, ResultRecord

SMALL = ReadingDesign(participants=16, items=10, words=10)
FAST = ReadingOptions(engine="statsmodels", folds=4, permutations=19)


def _sequence_record(model: str, revision: str, item: str, words: list[str], surprisals):
    info = ModelInfo(model, revision, "abc", "hf", "float32", "cpu", "add")
    scores = {
        "logprob": -float(sum(surprisals)),
        "n_tokens": len(words),
        "mean": -1.0,
        "tokens": [" " + w for w in words],
        "logprobs": [-s for s in surprisals],
        "token_offsets": list(range(len(words))),
        "words": words,
        "word_surprisals": list(surprisals),
    }
    return ResultRecord(model, revision, item, "sequence", "sha", "items", info, scores)


def _reading(item: str, words: list[str], participants=("p1", "p2")) -> pd.DataFrame:
    rows = [
        {"participant": p, "item": item, "word_index": i, "word": w, "rt_ms": 300.0 + 10 * i}
        for p in participants
        for i, w in enumerate(words)
    ]
    return pd.DataFrame(rows)


def test_the_table_names_a_missing_column_and_a_bad_value(tmp_path):
    table = _reading("s1", ["The", "dog", "ran."])
    with pytest.raises(TracktaleError, match=r"missing column\(s\) rt_ms$"):
        check_reading_times(table.drop(columns="rt_ms"))
    table["rt_ms"] = table["rt_ms"].astype(object)
    table.loc[2, "rt_ms"] = "fast"
    path = tmp_path / "rt.csv"
    table.to_csv(path, index=False)
    with pytest.raises(TracktaleError, match=r"rt.csv: row 3: rt_ms is not a number \('fast'\)"):
        read_reading_times(path)


def test_store_words_join_per_model_and_revision(tmp_path):
    words = ["The", "dog", "ran."]
    store.write_shard(
        tmp_path / "store",
        [
            _sequence_record("EleutherAI/pythia-70m", "step1000", "s1", words, [5.0, 9.0, 3.0]),
            _sequence_record("EleutherAI/pythia-70m", "step143000", "s1", words, [4.0, 7.0, 2.0]),
        ],
    )
    table, columns = model_words(tmp_path / "store")
    assert [c.label for c in columns] == [
        "EleutherAI/pythia-70m@step1000",
        "EleutherAI/pythia-70m@step143000",
    ]
    joined = join_surprisal(_reading("s1", words), table, columns)
    first = joined[joined["participant"] == "p1"]
    assert first["surprisal_0"].tolist() == [5.0, 9.0, 3.0]
    assert first["surprisal_1"].tolist() == [4.0, 7.0, 2.0]


def test_words_that_do_not_align_are_named(tmp_path):
    store.write_shard(tmp_path / "s", [_sequence_record("m", "", "s1", ["A", "cat"], [1.0, 2.0])])
    table, columns = model_words(tmp_path / "s")
    with pytest.raises(TracktaleError, match=r"item s1 word 1: read 'dog' but the models scored"):
        join_surprisal(_reading("s1", ["A", "dog"]), table, columns)
    with pytest.raises(TracktaleError, match=r"item s1 word 2 \('ran'\): the models scored no"):
        join_surprisal(_reading("s1", ["A", "cat", "ran"]), table, columns)


def test_exclusions_are_counted_under_the_first_rule():
    words = pd.DataFrame(
        {"item": "s1", "word_index": range(5), "model_word": ["A", "big", "dog", "sat,", "down."]}
    )
    words["surprisal_0"] = [1.0, 2.0, 3.0, 4.0, 5.0]
    reading = _reading("s1", list(words["model_word"]))
    reading["log_frequency"] = -5.0
    reading.loc[1, "rt_ms"] = 50.0  # p1's "big": too fast
    table = word_table(words, reading, ["surprisal_0"], 1)
    joined = join_surprisal(reading.drop(columns="log_frequency"), table, [])
    kept, counts = exclude(joined, Exclusions(), ["length_1", "surprisal_0_1"])
    rows = dict(zip(counts["rule"], counts["rows"], strict=True))
    assert rows["RT below 100 ms"] == 1
    assert rows["first or last word of a item"] == 4
    assert rows["word with punctuation"] == 2  # "sat," for both people
    assert rows["kept"] == 3 and sorted(kept["word"]) == ["big", "dog", "dog"]
    assert rows["words read"] == sum(counts["rows"].iloc[1:-1]) + rows["kept"]

    maze = joined.assign(correct=True)
    maze.loc[2, "correct"] = False  # p1's "dog": the distractor was chosen
    kept, counts = exclude(maze, Exclusions(), ["length_1", "surprisal_0_1"])
    assert dict(zip(counts["rule"], counts["rows"], strict=True))["Maze error"] == 1
    assert sorted(kept["word"]) == ["big", "dog"]
    kept, _ = exclude(maze, Exclusions(maze_errors=False), ["length_1", "surprisal_0_1"])
    assert len(kept) == 3


def test_frequencies_need_wordfreq_or_a_column(monkeypatch):
    words = pd.DataFrame({"item": "s", "word_index": [0, 1], "model_word": ["The", "aardvark."]})
    monkeypatch.setitem(sys.modules, "wordfreq", None)  # as if it were not installed
    with pytest.raises(TracktaleError, match="pip install wordfreq"):
        word_table(words, pd.DataFrame({"item": ["s"]}), [], 1)
    monkeypatch.undo()
    pytest.importorskip("wordfreq")
    table = word_table(words, pd.DataFrame({"item": ["s"]}), [], 1)
    frequent, rare = table["log_frequency"]
    assert frequent > rare > math.log(1e-9)  # punctuation stripped: "aardvark" is a word


@pytest.mark.parametrize(("seed", "fold_by"), [(1, "participants"), (2, "items")])
def test_a_planted_slope_is_recovered_within_its_interval(seed, fold_by):
    outcome = run_study(SMALL, replace(FAST, fold_by=fold_by), seed)
    assert outcome.covered, outcome
    assert outcome.delta_ll > 0 and outcome.p_permutation <= 0.05


def test_no_surprisal_effect_gives_delta_ll_near_zero():
    null = [run_study(null_design(SMALL), FAST, seed) for seed in range(3)]
    planted = [run_study(SMALL, FAST, seed) for seed in range(3)]
    # Under the null the held-out gain is within a few millinats of zero (cross-validation
    # costs the full model a little), and below what a planted slope gives on the same words.
    assert all(abs(o.delta_ll) < 2.5e-3 for o in null), null
    assert all(n.delta_ll < p.delta_ll for n, p in zip(null, planted, strict=True))
    assert all(o.p_permutation > 0.01 for o in null)


def test_the_permutation_p_value_is_not_always_small():
    """The test can fail: on shuffled surprisal (no relation to RT) p is spread out."""
    reading, words = simulate_study(null_design(SMALL), 7)
    words["surprisal_0"] = np.random.default_rng(0).permutation(words["surprisal_0"])
    result = analyse_reading(reading, words, [SIMULATED_MODEL], FAST)
    assert result.delta_ll["p_permutation"].iloc[0] > 0.05


def test_wilson_interval():
    low, high = wilson(5, 100)
    assert 0.02 < low < 0.05 < high < 0.12
    assert all(math.isnan(x) for x in wilson(0, 0))


def test_the_command_writes_tables_figures_and_summary(tmp_path):
    from tracktale.app.cli import cli

    out = tmp_path / "out"
    # Through the root group: invoked alone, a subgroup caches a help option without -h.
    arguments = ["analysis", "reading", "--simulate", "--participants", "12", "--items", "8",
                 "--out", str(out), "--engine", "statsmodels", "--folds", "3",
                 "--permutations", "9"]  # fmt: skip
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code == 0, result.output
    assert "simulated-model: ΔLL" in result.output and "(statsmodels)" in result.output
    for name in ("reading_delta_ll.csv", "reading_exclusions.csv", "summary.md",
                 "reading_rt_by_surprisal.png", "simulated_reading_times.csv"):  # fmt: skip
        assert (out / name).is_file(), name
    assert "statsmodels" in (out / "summary.md").read_text()
    missing = CliRunner().invoke(cli, ["analysis", "reading", "--out", str(out)])
    assert isinstance(missing.exception, TracktaleError)
    assert "give --times and --models" in str(missing.exception)


def test_imported_items_are_joined_by_their_table_name(tmp_path):
    from tracktale.analysis.reading.surprisal import item_names
    from tracktale.app.cli import cli

    (tmp_path / "stories.csv").write_text("item,story,text\ns1,a,A big dog.\ns2,b,It ran.\n")
    (tmp_path / "design.yaml").write_text(
        "language: en\nfactors:\n  story:\n    levels: [a, b]\n    within_items: false\n"
        "columns:\n  item: item\n  text: text\n"
    )
    arguments = ["stimuli", "import", str(tmp_path / "stories.csv"), "--design",
                 str(tmp_path / "design.yaml"), "--out", str(tmp_path / "set")]  # fmt: skip
    assert CliRunner().invoke(cli, arguments).exit_code == 0
    names = item_names(tmp_path / "set")
    assert sorted(names.values()) == ["s1", "s2"] and all(len(key) == 16 for key in names)
    hashed = {name: key for key, name in names.items()}
    record = _sequence_record("m", "", hashed["s1"], ["A", "big", "dog."], [1.0, 2.0, 3.0])
    store.write_shard(tmp_path / "store", [record])
    table, columns = model_words(tmp_path / "store", names)
    joined = join_surprisal(_reading("s1", ["A", "big", "dog."]), table, columns)
    assert joined["surprisal_0"].tolist() == [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]


def test_checkpoints_and_sizes_get_their_tokens_and_figures(tmp_path):
    from tracktale.analysis.reading.outputs import write_outputs
    from tracktale.analysis.reading.surprisal import SurprisalColumn

    reading, words = simulate_study(SMALL, 5)
    noise = np.random.default_rng(1)
    columns = [
        SurprisalColumn("surprisal_0", "EleutherAI/pythia-70m", "step1000"),
        SurprisalColumn("surprisal_1", "EleutherAI/pythia-70m", "step143000"),
        SurprisalColumn("surprisal_2", "EleutherAI/pythia-160m", ""),
    ]
    base = words["surprisal_0"].to_numpy()
    words["surprisal_1"] = base + noise.normal(0, 0.5, len(base))
    words["surprisal_2"] = base + noise.normal(0, 1.0, len(base))
    words["surprisal_0"] = noise.permutation(base)  # an early checkpoint: unrelated
    options = ReadingOptions(engine="statsmodels", folds=4, permutations=0)
    result = analyse_reading(reading, words, columns, options)
    delta = result.delta_ll.set_index("revision")
    assert delta.loc["step1000", "training_tokens"] == 1000 * 2_097_152
    assert delta.loc["step143000", "delta_ll_per_word"] > delta.loc["step1000", "delta_ll_per_word"]
    assert delta.loc["", "parameters"] == 160e6
    write_outputs(result, options, tmp_path)
    for name in ("reading_delta_ll_by_tokens", "reading_delta_ll_by_size"):
        assert (tmp_path / f"{name}.png").is_file(), name
    assert "EleutherAI/pythia-70m | step1000" in (tmp_path / "summary.md").read_text()


def test_lmer_recovers_the_planted_slope(lme4):
    design = replace(SMALL, participants=12)
    reading, words = simulate_study(design, 11)
    options = replace(FAST, engine="lme4", permutations=0)
    result = analyse_reading(reading, words, [SIMULATED_MODEL], options)
    assert result.engine == "lme4" and set(result.coefficients["engine"]) == {"lme4"}
    row = result.delta_ll.iloc[0]
    assert row["slope_ci_low"] <= design.surprisal_slope <= row["slope_ci_high"]
    # The baseline has no surprisal term; the full model has it and its two spillovers.
    terms = result.coefficients.groupby("model")["term"].apply(set)
    assert terms["simulated-model"] - terms["baseline"] == {
        "surprisal_0", "surprisal_0_1", "surprisal_0_2"
    }  # fmt: skip


def test_each_random_choice_gives_its_slopes_and_the_baseline_only_intercepts():
    from tracktale.analysis.reading.regression import (
        RANDOM_CHOICES,
        baseline_terms,
        lmer_formula,
        random_slopes,
        surprisal_terms,
    )

    baseline = baseline_terms(2)
    full = baseline + surprisal_terms("surprisal_3", 2)
    tested = ["surprisal_3", "surprisal_3_1", "surprisal_3_2"]
    own = ["surprisal_3"]
    assert random_slopes(full, "surprisal") == {"participant": own, "item": own}
    assert random_slopes(full, "surprisal-spillover") == {"participant": tested, "item": tested}
    assert random_slopes(full, "participant-slope") == {"participant": ["surprisal_3"], "item": []}
    assert random_slopes(full, "intercepts") == {"participant": [], "item": []}
    assert lmer_formula(full, random_slopes(full, "surprisal")).endswith(
        "+ surprisal_3_2 + (1 + surprisal_3 || participant) + (1 + surprisal_3 || item)"
    )
    assert lmer_formula(full, random_slopes(full, "surprisal-spillover")).endswith(
        "+ surprisal_3_2 + (1 + surprisal_3 + surprisal_3_1 + surprisal_3_2 || participant)"
        " + (1 + surprisal_3 + surprisal_3_1 + surprisal_3_2 || item)"
    )
    for random in RANDOM_CHOICES:  # the baseline lacks every slope's fixed term
        assert lmer_formula(baseline, random_slopes(baseline, random)).endswith(
            "+ log_frequency_2 + (1 | participant) + (1 | item)"
        )


def test_the_summary_prints_the_fitted_random_part_and_the_ladder_steps():
    from tracktale.analysis.reading.outputs import random_lines

    full = "log_rt ~ a + s + (1 + s || participant) + (1 + s || item)"
    steps = pd.DataFrame(
        {
            "model": ["baseline", "m", "m"],
            "step": [1, 1, 2],
            "action": ["declared", "declared", "drop zero-variance slopes"],
            "reason": ["as declared", "as declared", "singular fit; SD < 3e-05: s by item"],
            "formula": [
                "log_rt ~ a + (1 | participant) + (1 | item)",
                full,
                "log_rt ~ a + s + (1 + s || participant) + (1 | item)",
            ],  # fmt: skip
            "singular": [False, True, False],
            "converged": [True, True, True],
            "fitted": ["(1 | participant) + (1 | item)"]
            + ["(1 + s || participant) + (1 | item)"] * 2,
        }
    )
    assert random_lines(steps) == [
        "- baseline: `(1 | participant) + (1 | item)`",
        "- m: `(1 + s || participant) + (1 | item)`",
        "    1. declared (as declared): `(1 + s || participant) + (1 + s || item)` -> singular",
        "    2. drop zero-variance slopes (singular fit; SD < 3e-05: s by item): "
        "`(1 + s || participant) + (1 | item)` -> ok",
    ]


def test_the_command_takes_only_the_declared_random_choices(tmp_path):
    from tracktale.app.cli import cli

    arguments = ["analysis", "reading", "--simulate", "--out", str(tmp_path), "--random"]
    result = CliRunner().invoke(cli, [*arguments, "maximal"])
    assert result.exit_code == 2 and "'maximal' is not one of" in result.output


def test_lmer_drops_the_zero_slopes_along_the_ladder_and_records_each_step(lme4):
    # Readers differ widely in their surprisal slope; items not at all (none planted).
    design = replace(SMALL, participants=20, surprisal_slope=0.05, surprisal_slope_sd=0.05)
    reading, words = simulate_study(design, 4)
    options = replace(FAST, engine="lme4", permutations=0, spillover=0)
    result = analyse_reading(reading, words, [SIMULATED_MODEL], options)
    steps = result.random_effects.set_index("model")
    assert steps.loc["baseline", "fitted"] == "(1 | participant) + (1 | item)"
    model = steps.loc[[SIMULATED_MODEL.label]]
    assert model["action"].tolist() == ["declared", "drop zero-variance slopes"], model
    assert (
        model["formula"]
        .iloc[0]
        .endswith("(1 + surprisal_0 || participant) + (1 + surprisal_0 || item)")
    )
    assert "surprisal_0 by item (SD 0" in model["reason"].iloc[1]
    assert model["singular"].tolist() == [True, False]
    assert set(model["fitted"]) == {"(1 + surprisal_0 || participant) + (1 | item)"}
    row = result.delta_ll.iloc[0]
    assert row["slope_ci_low"] <= design.surprisal_slope <= row["slope_ci_high"]
    # Chosen structures are fitted as given, one fit each, singular or not.
    given = analyse_reading(
        reading, words, [SIMULATED_MODEL], replace(options, random="intercepts")
    ).random_effects
    assert given["action"].tolist() == ["declared", "declared"]
    assert set(given["fitted"]) == {"(1 | participant) + (1 | item)"}
