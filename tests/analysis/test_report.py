import contextlib
import dataclasses
import io
import pkgutil
import re

import pandas as pd
import pytest

from tests.app.test_cli import run
from tests.conftest import SMALL_PERMUTATIONS, small_report
from tracktale.analysis.data.tidy import select
from tracktale.analysis.report import build as report_module
from tracktale.analysis.report.build import ReportOptions, SectionResult, build_report, run_sections
from tracktale.analysis.stats.primary import RECENCY_INTERVAL_LABELS
from tracktale.app.cli import main
from tracktale.stimulus_set import write_stimulus_set


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, human_set, small_model_set, simulated_human, model_results):
    root = tmp_path_factory.mktemp("report-inputs")
    write_stimulus_set(human_set, root / "human-set")
    write_stimulus_set(small_model_set, root / "model-set")
    (root / "export").mkdir()
    simulated_human.trials.to_csv(root / "export" / "trials.csv", index=False)
    simulated_human.participants.to_csv(root / "export" / "participants.csv", index=False)
    model_results.to_parquet(root / "results.parquet")
    return root


def _argv(inputs, out, *extra):
    return [
        "analysis", "report",
        "--stimuli", str(inputs / "human-set"),
        "--stimuli", str(inputs / "model-set"),
        "--human", str(inputs / "export"),
        "--models", str(inputs / "results.parquet"),
        "--out", str(out),
        *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def report(inputs, tmp_path_factory):
    """The report of the simulated people and the results file, built once for the module.

    Small (:func:`~tests.analysis.conftest.small_report`: PNG figures, 199 resamples, 99
    permutations); the statsmodels engine asked for by name. Returns the exit status, stdout,
    stderr and the output folder.
    """
    out = tmp_path_factory.mktemp("report") / "report"
    argv = _argv(inputs, out, "--engine", "statsmodels", "--permutations", SMALL_PERMUTATIONS)
    stdout, stderr = io.StringIO(), io.StringIO()
    with (
        small_report(),
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
        pytest.raises(SystemExit) as exit_info,
    ):
        main(argv)
    return exit_info.value.code, stdout.getvalue(), stderr.getvalue(), out


def test_the_report_from_simulated_people_and_a_results_file(report):
    status, stdout, err, out = report
    assert status == 0 and "report:" in stdout
    # The variational Bayes engine is said loudly on the CLI (here asked for by name).
    assert "warning: --engine statsmodels: the mixed models are statsmodels' variational" in err
    page = (out / "report.html").read_text()
    # Self-contained: every image is embedded, nothing is fetched from elsewhere.
    assert page.count("src='data:image/png;base64,") >= 9
    assert not re.search(r"src=['\"]http", page) and "<script" not in page
    for expected in (
        "Exclusion rules, in order",
        "accuracy below 50% on a task excludes from that task",
        "participants analysed",
        "complexity x task",
        "Mixed model 1 (variational Bayes, APPROXIMATE)",
        "Inference: GLM, SEs clustered by participant and item (two-way)",
        "The paper's specification: GLM, SEs clustered by participant",
        "times less likely than standard",
    ):
        assert expected in page, expected
    figures = {p.name for p in (out / "figures").iterdir()}
    for name in ("fig3_humans_vs_reference", "fig4_scaling", "fig5_instruction_tuning",
                 "fig6_templates", "fig7_olmo_instruct_explicit"):  # fmt: skip
        # PNG only in a small report; PDF and SVG beside it: test_figures.py.
        assert f"{name}.png" in figures
    tables = {p.name for p in (out / "tables").iterdir()}
    assert {"glm_complexity.csv", "glm_recency.tex", "exclusions_summary.csv"} <= tables
    assert {"glm2way_complexity.csv", "inference_model1.csv", "task_contrasts.csv"} <= tables
    assert {"marginal_probabilities.csv", "se_comparison.csv", "mixed_random.csv"} <= tables
    points = pd.read_csv(out / "tables" / "effects_points.csv").set_index(["effect", "task"])
    assert "Effects in percentage points, averaged over participants and items" in page
    explicit = points.loc[("C1 to C4", "explicit")]
    assert explicit["low"] < explicit["points"] < explicit["high"] < 0  # the paper's drop
    sensitivity = pd.read_csv(out / "tables" / "sensitivity_exclusions.csv")
    variants = ["as analysed", "no accuracy exclusion", "chance-level rule", "timeouts dropped"]
    assert list(sensitivity["variant"].unique()) == variants
    counts = sensitivity.drop_duplicates("variant").set_index("variant")["explicit_analysed"]
    assert counts["no accuracy exclusion"] >= counts["as analysed"]
    assert set(sensitivity["term"]) >= {"complexity_c", "complexity_c:task_s", "recency_c"}
    lead = pd.read_csv(out / "tables" / "inference_model1.csv")
    assert set(lead["method"]) == {"glm-2way"}
    # Complexity's own test (the items' HC3 slope, t): its p beside model 1's own, a table, a line.
    assert {"complexity_permutation.csv", "recency_permutation.csv"} <= tables
    permuted = lead.set_index("term")["p_permutation"]
    assert 0 < permuted["complexity_c"] <= 1 and permuted.drop("complexity_c").isna().all()
    assert "Complexity is tested across its 36 items by the slope of their empirical logits" in page
    # Each fit is one table on the page; its full text summary is a file beside it.
    assert "<pre>" not in page
    assert "APPROXIMATE" in (out / "tables" / "mixed_model1_fixed.txt").read_text()
    mixed = pd.read_csv(out / "tables" / "mixed_model1_fixed.csv")
    assert mixed["approximate"].all()
    accuracy = pd.read_csv(out / "tables" / "human_accuracy_by_complexity.csv")
    assert set(accuracy["interval"]) == {"participants and items (two-way clustered, t)"}
    assert (out / "trial_table.csv").stat().st_size > 0


def test_the_old_recency_permutations_flag_is_the_permutations_option(inputs, tmp_path, capsys):
    status, _, err = run(_argv(inputs, tmp_path, "--recency-permutations", "-1"), capsys)
    assert status == 2 and "Invalid value for '--permutations' / '--recency-permutations'" in err


def test_a_report_of_models_alone(inputs, tmp_path, small_reports):
    result = build_report(
        stimuli=[inputs / "model-set"],
        models=inputs / "results.parquet",
        out=tmp_path,
        options=ReportOptions(engine="none"),
    )
    titles = [section.title for section in result.sections]
    assert titles == [
        "narrative: human participants",
        "narrative: models as case studies",
        "narrative: people and models side by side",
        "narrative: template manipulation check",
        "narrative: paper versus this run (scorecard)",
    ]
    page = result.html_path.read_text()
    assert "No human data was given" in page
    # The options line states the narrative report's options, no other paradigm's.
    assert "model correctness column correct" in page
    assert "boxes functor" not in page and "arithmetic reference" not in page


def test_sections_plug_in_through_the_registry(trial_table, tmp_path, monkeypatch):
    def extra(context):
        return SectionResult(title="extra", html=f"<p>{len(context.models)} model rows</p>")

    report_module.SECTIONS.add("narrative", [extra], lazy=False)
    try:
        _run_the_extra_section(trial_table, tmp_path)
    finally:
        report_module.SECTIONS.remove("narrative")


def _run_the_extra_section(trial_table, tmp_path):
    other = trial_table.assign(paradigm="chess")
    sections = run_sections(trial_table.head(0), None, tmp_path, ReportOptions())
    assert sections == []
    sections = run_sections(trial_table, None, tmp_path, ReportOptions())
    assert [s.title for s in sections] == ["extra"]
    sections = run_sections(other, None, tmp_path, ReportOptions())
    assert "No report sections are registered for chess" in sections[0].html


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda t: t.drop(columns=["item_id"]), "column 'item_id' is missing"),
        (lambda t: t.assign(task="recall"), "task 'recall' is not one of"),
        (lambda t: t.assign(correct="maybe"), "correct 'maybe' is not true or false"),
    ],
)
def test_bad_human_data_gets_a_one_line_error(inputs, tmp_path, capsys, mutate, fragment):
    import pandas as pd

    export = tmp_path / "bad"
    export.mkdir()
    mutate(pd.read_csv(inputs / "export" / "trials.csv")).to_csv(export / "trials.csv")
    (export / "participants.csv").write_text((inputs / "export" / "participants.csv").read_text())
    argv = _argv(inputs, tmp_path / "out")
    argv[argv.index("--human") + 1] = str(export)
    status, _, err = run(argv, capsys)
    assert status == 1 and fragment in err and len(err.strip().splitlines()) == 1


def test_the_report_needs_some_data(inputs, tmp_path, capsys):
    argv = ["analysis", "report", "--stimuli", str(inputs / "human-set"), "--out", str(tmp_path)]
    status, _, err = run(argv, capsys)
    assert status == 1 and "give --human, --models or both" in err


def test_rows_of_sets_not_given_are_left_aside_and_unknown_items_of_a_given_set_refused(
    human_set, small_model_set, simulated_human, model_results
):
    from tracktale.analysis.data.load import load_model_results
    from tracktale.analysis.data.tidy import build_trial_table, describe_left_aside, item_table
    from tracktale.errors import TracktaleError

    results = load_model_results(model_results)
    table = build_trial_table(item_table([human_set]), simulated_human, results)
    shared = results["item_id"].isin({item.item_id for item in human_set})
    assert 0 < shared.sum() < len(results)  # some model items are also in the human set
    # Rows on items of the given set stay; the others are set aside, counted by their set.
    assert (table["agent_kind"] == "model").sum() == shared.sum()
    aside = int((~shared).sum())
    assert table.attrs["left_aside"] == {"model results": {small_model_set.sha256: aside}}
    (line,) = describe_left_aside(table.attrs["left_aside"])
    assert line.startswith(f"model results: {aside:,} rows of 1 stimulus set(s) not given")
    # A row that says it belongs to a given set but names no item of it is an error.
    stray = results.head(1).assign(item_id="0" * 16, stimulus_sha256=human_set.sha256)
    with pytest.raises(TracktaleError, match="is not in the given stimulus sets"):
        build_trial_table(item_table([human_set]), simulated_human, stray)


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--template", "fancy"], "unknown template 'fancy' (the data has: improbable, "),
        (["--model", "gpt-9"], "unknown agent 'gpt-9'"),
        (
            ["--model", "EleutherAI/pythia-70m", "--template", "nothing"],
            "unknown template 'nothing'",
        ),
    ],
)
def test_an_unknown_template_or_model_is_named(inputs, tmp_path, capsys, extra, fragment):
    status, _, err = run(_argv(inputs, tmp_path / "out", *extra), capsys)
    assert status == 1 and fragment in err and len(err.strip().splitlines()) == 1


def test_an_empty_selection_is_named(trial_table):
    from tracktale.analysis.report.build import restrict_models
    from tracktale.errors import TracktaleError

    humans_only = trial_table[trial_table["agent_kind"] == "human"]
    with pytest.raises(TracktaleError, match="none were given"):
        restrict_models(humans_only, ReportOptions(templates=("standard",)))
    # Both values exist, but only pythia-1.4b has checkpoints: the combination is empty.
    with pytest.raises(TracktaleError, match="no trials match agent=.*revision=step1000"):
        select(trial_table, agent="EleutherAI/pythia-70m", revision="step1000")
    kept = restrict_models(trial_table, ReportOptions(models=("EleutherAI/pythia-70m",)))
    assert set(kept.loc[kept["agent_kind"] == "model", "agent"]) == {"EleutherAI/pythia-70m"}


def test_sections_that_write_files_become_report_sections(tmp_path):
    import pandas as pd

    from tracktale.analysis.report.build import SectionResult, render_html
    from tracktale.analysis.report.outputs import Outputs

    scores = pd.DataFrame({"model": ["m"], "score": [0.5]})
    scores.to_csv(tmp_path / "scores.csv", index=False)
    (tmp_path / "scores.tex").write_text("tex")
    from tracktale.analysis.report.style import new_figure, save_figure, styled

    with styled():
        curve = save_figure(new_figure(1), tmp_path, "curve", "A curve of scores")
    outputs = Outputs()
    outputs.table(scores, [tmp_path / "scores.csv", tmp_path / "scores.tex"], "Scores per model")
    outputs.figures_saved(curve)
    outputs.figures_saved(None)  # a plot function with nothing to draw
    (tmp_path / "scores.csv").unlink()  # the section shows the table it holds, not the file
    section = SectionResult.from_outputs("boxes: models", outputs)
    assert [f.name for f in section.figures] == ["curve"]
    assert list(section.figures[0].paths) == ["png", "pdf", "svg"]
    assert section.tables[0].table.loc[0, "score"] == 0.5
    assert outputs.written == [
        tmp_path / "scores.csv",
        tmp_path / "scores.tex",
        *curve.paths.values(),
    ]
    page = render_html([section], [], ReportOptions())
    assert "data:image/png;base64," in page
    assert "Scores per model" in page and "A curve of scores" in page


def _perfect_and_garbage_results(stimulus_set):
    """Explicit-task rows for a set: two thirds answered right, a third with garbage."""
    import pandas as pd

    from tracktale.stimuli.registry import get_paradigm

    paradigm = get_paradigm(stimulus_set.manifest.paradigm)
    rows = []
    for index, item in enumerate(stimulus_set):
        output = item.answer if index % 3 else "no idea"
        if stimulus_set.manifest.paradigm == "arithmetic":
            output = f"Step 1 done. <answer>{output}</answer>"
        scores = dataclasses.asdict(paradigm.score_response(item, output))
        rows.append(
            {
                "model_id": "org/tiny",
                "revision": None,
                "resolved_sha": None,
                "item_id": item.item_id,
                "task": "explicit",
                "stimulus_sha256": stimulus_set.sha256,
                "paradigm": stimulus_set.manifest.paradigm,
                "backend": "hf",
                "dtype": "float32",
                "device": "cpu",
                "bos_policy": "none",
                "n_parameters": 1000,
                "output": output,
                "prompt_format": "plain",
                **scores,
            }
        )
    return pd.DataFrame(rows)


def _human_argv(inputs, human, out, *extra):
    return ["analysis", "report", "--stimuli", str(inputs / "human-set"), "--human", str(human),
            "--out", str(out), *extra]  # fmt: skip


def test_without_r_the_report_leads_with_the_two_way_glm_and_says_so(
    inputs, tmp_path, capsys, monkeypatch, small_reports
):
    monkeypatch.setenv("TRACKTALE_RSCRIPT", str(tmp_path / "no-such-Rscript"))
    out = tmp_path / "report"
    argv = _human_argv(inputs, inputs / "export", out, "--permutations", SMALL_PERMUTATIONS)
    status, _, err = run(argv, capsys)
    assert status == 0
    assert "warning: R with lme4 is not installed" in err and "marked approximate" in err
    page = (out / "report.html").read_text()
    assert "class='warning'" in page and "APPROXIMATE" in page
    assert "Inference: GLM, SEs clustered by participant and item" in page
    status, _, err = run(
        _human_argv(inputs, inputs / "export", out, "--inference", "glmer"), capsys
    )
    assert status == 1 and "--inference glmer needs glmer" in err


def test_with_r_the_report_shows_lrts_random_effects_and_contrasts(inputs, tmp_path, capsys, lme4):
    out = tmp_path / "report"
    status, _, err = run(_human_argv(inputs, inputs / "export", out), capsys)
    assert status == 0 and "not installed" not in err
    page = (out / "report.html").read_text()
    for expected in (
        "Inference: mixed model (glmer)",
        "Likelihood-ratio tests (glmer)",
        "Random effects: variances, SDs, correlations (glmer)",
        "Random effects: the maximal model and every ladder step",
        "Intraclass correlations, latent scale (glmer)",
        "Model comparison: AIC and BIC (glmer)",
        "Task contrast at each complexity",
        "Marginal probabilities",
    ):
        assert expected in page, expected
    ladder = (out / "tables" / "mixed_ladder.txt").read_text()
    assert "random effects of model 1: maximal" in ladder and "model 2" in ladder
    lead = pd.read_csv(out / "tables" / "inference_model1.csv")
    assert set(lead["method"]) == {"glmer"} and {"singular", "warnings"} <= set(lead.columns)
    permuted = lead.set_index("term")["p_permutation"]
    assert permuted.notna().sum() == 1 and 0 < permuted["complexity_z"] <= 1
    # The default random effects are the design's maximal ones, and every step is shown.
    ladder = pd.read_csv(out / "tables" / "mixed_ladder.csv")
    first = ladder[ladder["model"] == "model 1"].iloc[0]
    assert first["action"] == "maximal" and "(1 + task_s | item_id)" in first["formula"]
    lrt = pd.read_csv(out / "tables" / "mixed_lrt.csv")
    assert list(lrt["models"]) == ["model 2 vs model 1"]
    contrasts = pd.read_csv(out / "tables" / "task_contrasts.csv")
    assert list(contrasts["complexity"]) == [1, 2, 3, 4]
    assert (contrasts["or_low"] < contrasts["odds_ratio"]).all()
    assert (contrasts["p_holm"] >= contrasts["p"]).all()


def test_with_r_slopes_keep_the_old_structure_and_its_slope_lrt(
    inputs, tmp_path, capsys, lme4, small_reports
):
    out = tmp_path / "report"
    status, _, _ = run(_human_argv(inputs, inputs / "export", out, "--slopes"), capsys)
    assert status == 0 and "by-participant complexity slopes" in (out / "report.html").read_text()
    lrt = pd.read_csv(out / "tables" / "mixed_lrt.csv")
    assert list(lrt["models"]) == ["model 2 vs model 1", "slopes vs intercepts only"]
    assert not (out / "tables" / "mixed_ladder.csv").exists()


def _export_with(tmp_path, inputs, name, trials_text=None, participants_text=None):
    folder = tmp_path / name
    folder.mkdir()
    export = inputs / "export"
    trials = (export / "trials.csv").read_text() if trials_text is None else trials_text
    people = (export / "participants.csv").read_text()
    (folder / "trials.csv").write_text(trials)
    (folder / "participants.csv").write_text(people if participants_text is None else
                                             participants_text)  # fmt: skip
    return folder


def test_empty_and_header_only_trials_and_a_bad_participants_file_are_named(
    inputs, tmp_path, capsys
):
    header = (inputs / "export" / "trials.csv").read_text().splitlines()[0] + "\n"
    cases = [
        (_export_with(tmp_path, inputs, "empty", trials_text=""), "trials.csv: the file is empty"),
        (_export_with(tmp_path, inputs, "header", trials_text=header), "no trials (the table has"),
        (
            _export_with(tmp_path, inputs, "people", participants_text="participant_id\nx\n"),
            "people/participants.csv: column 'source' is missing",
        ),
    ]
    for folder, fragment in cases:
        status, _, err = run(
            _human_argv(inputs, folder, tmp_path / "out", "--engine", "none"), capsys
        )
        assert status == 1 and fragment in err and len(err.strip().splitlines()) == 1, err


def test_everyone_excluded_is_a_warning_not_a_traceback(inputs, tmp_path, capsys):
    people = (
        (inputs / "export" / "participants.csv").read_text().replace(",completed,", ",started,")
    )
    folder = _export_with(tmp_path, inputs, "nobody", participants_text=people)
    status, _, err = run(_human_argv(inputs, folder, tmp_path / "out", "--engine", "none"), capsys)
    assert status == 0
    assert "warning: no human trials are left after the exclusions" in err
    summary = pd.read_csv(tmp_path / "out" / "tables" / "exclusions_summary.csv")
    assert (summary["analysed"] == 0).all() and (summary["excluded_incomplete"] == 48).all()


def test_text_in_tables_captions_and_warnings_is_escaped(tmp_path):
    import pandas as pd

    from tracktale.analysis.report.build import SectionResult, render_html
    from tracktale.analysis.report.style import new_figure, save_figure, styled
    from tracktale.analysis.report.tables import save_table

    attack = "<script>alert(1)</script>"
    table = pd.DataFrame({attack: [attack, "plain"]})
    saved = save_table(table, tmp_path / "tables", "scores", f"caption {attack}")
    with styled():
        figure = save_figure(new_figure(1), tmp_path / "figures", "curve", f"figure {attack}")
    section = SectionResult(
        title=f"title {attack}",
        html="<p>a fragment the section escaped</p>",
        figures=[figure],
        tables=[saved],
        warnings=[f"warning {attack}"],
    )
    page = render_html([section], [f"source {attack}"], ReportOptions())
    assert "<script>" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 8
    assert "<p>a fragment the section escaped</p>" in page  # a section's own HTML stays HTML
    assert "<td>plain</td>" in page and "href='tables/scores.csv'" in page


def test_whole_number_columns_show_integers_and_real_ones_keep_their_decimals():
    import pandas as pd

    from tracktale.analysis.report.render import html_table
    from tracktale.analysis.report.tables import to_latex

    table = pd.DataFrame(
        {
            "complexity": [1.0, 2.0, None],  # float only because of the missing value
            "accuracy": [0.5, 1.0, 0.25],
            "n": [10, 20, 30],
            "exact": [1.0, 0.0, 1.0],
            "rate": [2.0, float("inf"), 1.0],
        }
    )
    rows = re.findall(r"<tr>(.*?)</tr>", html_table(table), re.S)[1:]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    assert cells == [
        ["1", "50.0%", "10", "1", "2.000"],
        ["2", "100.0%", "20", "0", "inf"],
        ["", "25.0%", "30", "1", "1.000"],
    ]
    tex = to_latex(table, "caption", "label")
    assert r"1 & 50.0\% & 10 & 1 & 2.000 \\" in tex and r"100.0\% & 20" in tex


def test_accuracies_read_in_percent_like_the_text_and_other_quantities_keep_their_scale():
    import pandas as pd

    from tracktale.analysis.report.render import html_table
    from tracktale.analysis.report.tables import to_latex

    # Before: 0.746 in the accuracy tables beside "74.6%" in the text, figures and scorecard.
    accuracy = pd.DataFrame(
        {"task": ["explicit"], "n": [3], "accuracy": [0.0], "ci_low": [0.0], "ci_high": [0.5615]}
    )
    cells = re.findall(r"<td[^>]*>(.*?)</td>", html_table(accuracy))
    assert cells == ["explicit", "3", "0.0%", "0.0%", "56.1%"]
    assert r"0.0\% & 0.0\% & 56.1\%" in to_latex(accuracy, "caption", "label")
    ratio = pd.DataFrame({"log10_ratio": [0.25], "ci_low": [0.1], "ci_high": [0.4]})
    assert re.findall(r"<td[^>]*>(.*?)</td>", html_table(ratio)) == ["0.250", "0.100", "0.400"]
    rates = pd.DataFrame({"accuracy": [74.6], "ci_low": [70.5], "ci_high": [80.5]})
    assert re.findall(r"<td[^>]*>(.*?)</td>", html_table(rates)) == ["74.600", "70.500", "80.500"]


def test_every_registered_paradigm_declares_its_report_sections_beside_its_stimuli():
    from tracktale.stimuli.registry import paradigm_names

    assert set(report_module.section_paradigms()) == set(paradigm_names())
    for paradigm in paradigm_names():
        assert report_module.sections_of(paradigm) is pkgutil.resolve_name(
            f"tracktale.analysis.{paradigm}:SECTIONS"
        )
        functions = report_module._resolve(f"tracktale.analysis.{paradigm}:SECTIONS")
        assert functions and all(callable(function) for function in functions)


def test_exclude_flagged_reaches_the_exclusion_rules(inputs, tmp_path, capsys, monkeypatch):
    seen = []

    def capture(**kwargs):
        seen.append(kwargs["options"].rules)
        raise SystemExit(0)  # the report itself is tested above

    monkeypatch.setattr(report_module, "build_report", capture)
    for extra in ((), ("--exclude-flagged",)):
        assert run(_argv(inputs, tmp_path / "out", *extra), capsys)[0] == 0
    assert [rules.exclude_flagged for rules in seen] == [False, True]


def test_the_recency_interval_reaches_the_options(inputs, tmp_path, capsys, monkeypatch):
    seen = []

    def capture(**kwargs):
        seen.append(kwargs["options"].recency_interval)
        raise SystemExit(0)  # the report itself is tested elsewhere

    monkeypatch.setattr(report_module, "build_report", capture)
    for extra in ((), ("--recency-interval", "two-way")):
        assert run(_argv(inputs, tmp_path / "out", *extra), capsys)[0] == 0
    assert seen == ["larger", "two-way"]


def test_one_primary_test_per_hypothesis_and_the_rest_as_robustness(inputs, tmp_path, capsys):
    out = tmp_path / "report"
    status, _, _ = run(_human_argv(inputs, inputs / "export", out, "--engine", "none"), capsys)
    assert status == 0
    primary = pd.read_csv(out / "tables" / "primary_tests.csv")
    assert list(primary["hypothesis"]) == ["complexity", "interaction", "recency"]
    assert primary["p"].notna().all()
    assert primary.set_index("hypothesis").loc["recency", "test"].startswith("item permutation")
    # A permutation test's estimate is its statistic, and the row says so.
    notes = primary.set_index("hypothesis")["note"].fillna("")
    assert notes["complexity"].startswith("estimate: the test's statistic")
    assert notes["recency"] == notes["complexity"] and notes["interaction"] == ""
    robustness = pd.read_csv(out / "tables" / "robustness_tests.csv")
    recency = robustness[robustness["hypothesis"] == "recency"]
    # The paper's GLM and the two-way GLM are there, not among the primary tests.
    assert {"paper's GLM (participant-clustered, z)", "GLM, two-way clustered"} <= set(
        recency["test"]
    )
    assert len(primary.merge(robustness, on=["hypothesis", "test", "model"])) == 0
    equivalence = pd.read_csv(out / "tables" / "recency_equivalence.csv").iloc[0]
    # The TOST's SE is the larger of the permutation and two-way ones by default, as said.
    assert equivalence["interval"] == RECENCY_INTERVAL_LABELS["larger"]
    assert equivalence["df"] < 30 and equivalence["se_points"] > 0
    page = (out / "report.html").read_text()
    assert "SE: the larger of the item-permutation SE and the two-way GLM" in page
