"""``tracktale stimuli import``: the researcher's own items, their errors, lists and languages."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tracktale.app.cli import main
from tracktale.errors import InputProblems
from tracktale.item import item_from_dict
from tracktale.stimuli.items import EXAMPLE_DIR, ItemsJudgement
from tracktale.stimuli.items.importer import import_table
from tracktale.stimuli.items.lists import study_lists
from tracktale.stimuli.registry import get_paradigm
from tracktale.stimulus_set import read_stimulus_set

DATA = Path(__file__).parent / "data" / "items"


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


@pytest.fixture
def example(tmp_path):
    """A copy of the shipped example (items.csv, design.yaml) to edit."""
    for name in ("items.csv", "design.yaml"):
        shutil.copy(EXAMPLE_DIR / name, tmp_path / name)
    return tmp_path


def rows(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def write_rows(path, table):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(table)


def edit_cell(path, line, column, value):
    """Set the cell of ``column`` on file line ``line`` (the header is line 1)."""
    table = rows(path)
    table[line - 1][table[0].index(column)] = value
    write_rows(path, table)


def test_the_example_imports_as_a_two_by_two_design_with_four_latin_square_lists(example, capsys):
    out_dir = example / "set"
    status, out, err = run(
        ["stimuli", "import", str(example / "items.csv"), "--design",
         str(example / "design.yaml"), "--out", str(out_dir)],
        capsys,
    )  # fmt: skip
    assert status == 0, err
    assert "38 items" in out and "distance=far,movement=moved" in out
    stimulus_set = read_stimulus_set(out_dir)
    roles = Counter(item.role for item in stimulus_set)
    assert roles == {"main": 32, "filler": 4, "practice": 2}
    assert {item.paradigm for item in stimulus_set} == {"items"}
    manifest = stimulus_set.manifest
    assert manifest.paradigm == "items" and manifest.protocol == "imported"
    source = manifest.config["source"]
    assert source == {
        "file": "items.csv",
        "format": "csv",
        "sha256": hashlib.sha256((example / "items.csv").read_bytes()).hexdigest(),
    }
    design_sha = hashlib.sha256((example / "design.yaml").read_bytes()).hexdigest()
    assert manifest.config["design_file"] == {"file": "design.yaml", "sha256": design_sha}
    assert manifest.config["lists"] == ["L1", "L2", "L3", "L4"]
    lists = study_lists(stimulus_set)
    for list_id, members in lists.items():
        tests = [item for item in members if item.role == "main"]
        assert len(tests) == 8, list_id
        assert len({item.truth["item"] for item in tests}) == 8  # every item once
        cells = Counter(tuple(sorted(item.condition.items())) for item in tests)
        assert set(cells.values()) == {2}  # every condition twice
        assert sum(item.role == "filler" for item in members) == 4
    status, out, _ = run(["stimuli", "validate", str(out_dir)], capsys)
    assert status == 0 and "all 38 items verified" in out


def test_items_are_content_hashed_and_importing_again_gives_the_same_bytes(example):
    first = import_table(example / "items.csv", example / "design.yaml")
    again = import_table(example / "items.csv", example / "design.yaml")
    assert first.sha256 == again.sha256 and first.manifest == again.manifest
    for item in first:
        assert item_from_dict(json.loads(item.to_json())) == item  # the id is its content's hash
    (example / "design.yaml").write_text(
        (example / "design.yaml").read_text() + "# a comment changes the file, not the items\n"
    )
    commented = import_table(example / "items.csv", example / "design.yaml")
    assert commented.sha256 == first.sha256
    assert commented.manifest.config["design_file"] != first.manifest.config["design_file"]


def test_the_explicit_prompt_continuations_and_answers_of_an_item(example):
    stimulus_set = import_table(example / "items.csv", example / "design.yaml")
    item = stimulus_set.select(role="main", movement="moved", distance="near")[0]
    assert item.context == "Anna put the ball in the box. Then Anna moved the ball to the basket."
    assert item.choice.prefix == item.context
    assert item.choice.good == " The ball is in the basket."
    assert item.choice.bad == " The ball is in the box."
    assert item.prompt == f"{item.context}\nQuestion: Where is the ball?\nAnswer:"
    assert item.messages == ({"role": "user", "content": item.prompt},)
    assert item.answer == "basket" and item.truth["response"]["accepted"] == [
        "basket",
        "the basket",
    ]
    assert item.meta == {"max_new_tokens": 8}
    filler = stimulus_set.select(role="filler")[0]
    assert filler.choice is None and filler.truth["list"] is None


# Every kind of bad row: one line naming file, line, column and problem; nothing is written.


def _missing_column(example):
    table = rows(example / "items.csv")
    column = table[0].index("question")
    write_rows(example / "items.csv", [row[:column] + row[column + 1 :] for row in table])
    return (
        "items.csv:1: column 'question': no such column (design.yaml names it as "
        "columns.question; the header has item, type, movement, distance, story, answer, good, "
        "bad)"
    )


def _unknown_level(example):
    edit_cell(example / "items.csv", 3, "distance", "middle")
    return (
        "items.csv:3: column 'distance': 'middle' is not a level of factor distance (levels: "
        "near, far)"
    )


def _missing_condition(example):
    table = rows(example / "items.csv")
    del table[6]  # line 7: item 2, stayed/far (the item's first line is 6)
    write_rows(example / "items.csv", table)
    return "items.csv:6: column 'item': item '2' lacks the condition movement=stayed, distance=far"


def _duplicate(example):
    table = rows(example / "items.csv")
    table.insert(3, list(table[1]))  # line 4 repeats line 2
    write_rows(example / "items.csv", table)
    return (
        "items.csv:4: column 'item': test item '1' in movement=stayed, distance=near is also on "
        "line 2"
    )


def _empty_text(example):
    edit_cell(example / "items.csv", 5, "story", "  ")
    return "items.csv:5: column 'story': the text is empty"


def _answer_not_an_option(example):
    table = rows(example / "items.csv")
    table[0] += ["option1", "option2"]
    answer = table[0].index("answer")
    for row in table[1:]:
        row[answer] = row[answer].split("|")[0]
        row += [row[answer], "the moon"]
    table[9][answer] = "drawer"  # line 10
    write_rows(example / "items.csv", table)
    design = (example / "design.yaml").read_text()
    design = design.replace("  answer: answer", "  answer: answer\n  options: [option1, option2]")
    (example / "design.yaml").write_text(design)
    return "items.csv:10: column 'answer': 'drawer' is not among the options (jar, the moon)"


def _bad_encoding(example):
    text = (example / "items.csv").read_text(encoding="utf-8")
    text = text.replace("Clara", "Cläre", 1)
    (example / "items.csv").write_bytes(text.encode("latin-1"))
    return "items.csv:10: not UTF-8 (byte 0xE4 at character 22; save the file as UTF-8)"


def _bad_yaml_key(example):
    design = (example / "design.yaml").read_text()
    (example / "design.yaml").write_text(
        design.replace("  question: question", "  qestion: question")
    )
    return "design.yaml:11:3: unknown key 'columns.qestion' (did you mean 'question'?)"


@pytest.mark.parametrize(
    "make",
    [
        _missing_column,
        _unknown_level,
        _missing_condition,
        _duplicate,
        _empty_text,
        _answer_not_an_option,
        _bad_encoding,
        _bad_yaml_key,
    ],
    ids=lambda make: make.__name__.strip("_"),
)
def test_each_kind_of_problem_is_one_line_and_nothing_is_written(example, capsys, make):
    expected = make(example)
    out_dir = example / "set"
    status, _, err = run(
        ["stimuli", "import", str(example / "items.csv"), "--design",
         str(example / "design.yaml"), "--out", str(out_dir)],
        capsys,
    )  # fmt: skip
    lines = err.splitlines()
    assert status == 1
    assert lines[0] == f"{example}/{expected}"
    assert lines[-1].startswith("tracktale: error: ") and "nothing was written" in lines[-1]
    assert len(lines) == 2  # one problem, one summary
    assert not out_dir.exists()


def test_every_bad_row_is_reported_in_line_order(example):
    edit_cell(example / "items.csv", 8, "movement", "gone")
    edit_cell(example / "items.csv", 3, "story", "")
    edit_cell(example / "items.csv", 36, "type", "extra")
    with pytest.raises(InputProblems) as caught:
        import_table(example / "items.csv", example / "design.yaml")
    lines = [line.split(": column", 1)[0] for line in caught.value.problems]
    assert lines == [f"{example / 'items.csv'}:{n}" for n in (3, 8, 36)]
    assert "not a type (test, filler, practice" in caught.value.problems[2]


def test_design_problems_name_the_key_line_and_column(example):
    design = (example / "design.yaml").read_text()
    design = design.replace("    levels: [near, far]", "    levels: [near, near]")
    design = design.replace(
        "  models: [implicit, explicit, sequence]", "  models: [implicit, guess]"
    )
    (example / "design.yaml").write_text(design)
    with pytest.raises(InputProblems) as caught:
        import_table(example / "items.csv", example / "design.yaml")
    path = example / "design.yaml"
    assert caught.value.problems == (
        f"{path}:22:13: factors.distance.levels: the level 'near' is listed twice",
        f"{path}:30:22: tasks.models.1: input should be 'implicit', 'explicit' or 'sequence'",
    )


def test_a_design_that_contradicts_itself_is_refused(example):
    design = (example / "design.yaml").read_text().replace("  bad: bad", "  prefix: good")
    (example / "design.yaml").write_text(design)
    with pytest.raises(InputProblems) as caught:
        import_table(example / "items.csv", example / "design.yaml")
    assert [line.split(": ", 1)[1] for line in caught.value.problems] == [
        "columns.good the implicit task needs both good and bad",
        "tasks.models implicit needs columns.good and columns.bad",
        "columns.good column 'good' is already columns.prefix",
    ]


# Lists.


def _design(factors, *, group=False):
    lines = ["columns:", "  item: item", "  text: text"]
    lines += ["  group: group"] if group else []
    lines += ["factors:"]
    for name, (levels, within_items, within_participants) in factors.items():
        lines += [
            f"  {name}:",
            f"    levels: [{', '.join(levels)}]",
            f"    within_items: {str(within_items).lower()}",
            f"    within_participants: {str(within_participants).lower()}",
        ]
    return "\n".join(lines) + "\n"


def test_latin_square_lists_rotate_conditions_and_split_between_participant_levels(tmp_path):
    # c: 3 levels within items and participants; g: 2 levels within items, between participants.
    table = [["item", "c", "g", "text"]]
    for item in range(1, 7):
        for g in ("g1", "g2"):
            for c in ("a", "b", "c"):
                table.append([str(item), c, g, f"item {item} in {c} and {g}"])
    write_rows(tmp_path / "items.csv", table)
    factors = {"c": (["a", "b", "c"], True, True), "g": (["g1", "g2"], True, False)}
    (tmp_path / "design.yaml").write_text(_design(factors))
    stimulus_set = import_table(tmp_path / "items.csv", tmp_path / "design.yaml")
    assert stimulus_set.manifest.config["lists"] == [f"L{n}" for n in range(1, 7)]
    by_list = study_lists(stimulus_set)
    # The rule: item n (from 0) in condition c goes to list b * k + (c - n) mod k + 1.
    first = {item.truth["item"]: item.condition for item in by_list["L1"]}
    assert first == {
        "1": {"c": "a", "g": "g1"},
        "2": {"c": "b", "g": "g1"},
        "3": {"c": "c", "g": "g1"},
        "4": {"c": "a", "g": "g1"},
        "5": {"c": "b", "g": "g1"},
        "6": {"c": "c", "g": "g1"},
    }
    for members in by_list.values():
        assert len(members) == 6 and len({item.truth["item"] for item in members}) == 6
        assert len({item.condition["g"] for item in members}) == 1  # one level of g
        assert Counter(item.condition["c"] for item in members) == {"a": 2, "b": 2, "c": 2}
    assert {item.condition["g"] for item in by_list["L4"]} == {"g2"}


def test_a_group_column_gives_the_lists_and_a_list_may_not_show_an_item_twice(tmp_path):
    table = [["item", "group", "n", "text"]]
    table += [["1", "A", "sg", "one dog"], ["1", "B", "pl", "two dogs"]]
    table += [["2", "B", "sg", "one cat"], ["2", "A", "pl", "two cats"]]
    write_rows(tmp_path / "items.csv", table)
    (tmp_path / "design.yaml").write_text(_design({"n": (["sg", "pl"], True, True)}, group=True))
    stimulus_set = import_table(tmp_path / "items.csv", tmp_path / "design.yaml")
    assert stimulus_set.manifest.config["lists"] == ["A", "B"]
    assert [i.context for i in study_lists(stimulus_set)["A"]] == ["one dog", "two cats"]
    table[4][1] = "B"
    write_rows(tmp_path / "items.csv", table)
    with pytest.raises(InputProblems) as caught:
        import_table(tmp_path / "items.csv", tmp_path / "design.yaml")
    assert caught.value.problems == (
        f"{tmp_path / 'items.csv'}:5: column 'group': list 'B' shows item '2' twice (also on "
        "line 4)",
    )


def test_a_filler_with_a_group_is_in_that_list_only(tmp_path):
    table = [["item", "type", "group", "n", "text"]]
    table += [["1", "test", "A", "sg", "one dog"], ["1", "test", "B", "pl", "two dogs"]]
    table += [["f1", "filler", "A", "", "a filler for A"], ["f2", "filler", "", "", "for all"]]
    write_rows(tmp_path / "items.csv", table)
    design = _design({"n": (["sg", "pl"], True, True)}, group=True)
    (tmp_path / "design.yaml").write_text(design.replace("columns:", "columns:\n  type: type"))
    lists = study_lists(import_table(tmp_path / "items.csv", tmp_path / "design.yaml"))
    assert [item.context for item in lists["A"]] == ["one dog", "a filler for A", "for all"]
    assert [item.context for item in lists["B"]] == ["two dogs", "for all"]


def test_a_between_item_factor_must_not_change_within_an_item(tmp_path):
    table = [["item", "n", "verb", "text"]]
    table += [["1", "sg", "tr", "a"], ["1", "pl", "in", "b"]]
    write_rows(tmp_path / "items.csv", table)
    factors = {"n": (["sg", "pl"], True, True), "verb": (["tr", "in"], False, True)}
    (tmp_path / "design.yaml").write_text(_design(factors))
    with pytest.raises(InputProblems) as caught:
        import_table(tmp_path / "items.csv", tmp_path / "design.yaml")
    assert caught.value.problems == (
        f"{tmp_path / 'items.csv'}:2: column 'item': item '1' has verb=tr here and verb=in on "
        "line 3, but verb varies between items (within_items: false)",
    )


# Formats.


def test_tsv_by_extension_semicolons_sniffed_and_xlsx(example):
    reference = import_table(example / "items.csv", example / "design.yaml")
    table = rows(example / "items.csv")
    with open(example / "items.tsv", "w", newline="", encoding="utf-8-sig") as handle:
        csv.writer(handle, delimiter="\t", lineterminator="\r\n").writerows(table)
    assert import_table(example / "items.tsv", example / "design.yaml").sha256 == reference.sha256
    with open(example / "semi.csv", "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, delimiter=";").writerows(table)
    assert import_table(example / "semi.csv", example / "design.yaml").sha256 == reference.sha256
    openpyxl = pytest.importorskip("openpyxl")
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    for row in table:
        sheet.append([int(cell) if cell.isdigit() else (cell or None) for cell in row])
    workbook.save(example / "items.xlsx")
    imported = import_table(example / "items.xlsx", example / "design.yaml")
    assert imported.sha256 == reference.sha256
    assert imported.manifest.config["source"]["format"] == "xlsx"
    sheet["D3"] = "middle"
    workbook.save(example / "items.xlsx")
    with pytest.raises(InputProblems) as caught:
        import_table(example / "items.xlsx", example / "design.yaml")
    assert caught.value.problems == (
        f"{example / 'items.xlsx'}:3: column 'distance' (D): 'middle' is not a level of factor "
        "distance (levels: near, far)",
    )


# Languages.


def test_dutch_forced_choice_with_a_prefix_and_text_made_nfc():
    stimulus_set = import_table(DATA / "nl.csv", DATA / "nl.yaml")
    item = stimulus_set.select(role="main", getal="meervoud")[1]
    assert item.truth["response"] == {
        "kind": "choice",
        "accepted": ["de katten"],
        "options": ["het dak", "de katten"],
        "match": "exact",
    }
    assert item.choice.prefix == "De katten op het dak"
    assert (item.choice.good, item.choice.bad) == (" slapen.", " slaapt.")
    filler = stimulus_set.select(role="filler")[0]
    assert filler.context == "Het caf\u00e9 in Zwolle is \u00e9\u00e9n uur open."  # NFC
    assert stimulus_set.select(role="practice")[0].question == "Regent het?"
    assert stimulus_set.manifest.config["direction"] == "ltr"


def test_hebrew_is_read_right_to_left_and_kept_as_written():
    stimulus_set = import_table(DATA / "he.tsv", DATA / "he.yaml")
    assert stimulus_set.manifest.config["direction"] == "rtl"
    item = stimulus_set.select(role="main", number="רבים")[0]
    assert item.context == "הילדים הלכו לבית הספר."
    assert [item.context[a:b] for a, b in item.truth["segments"]] == [
        "הילדים", "הלכו", "לבית", "הספר.",
    ]  # fmt: skip
    judged = get_paradigm("items").score_response(item, "  לבית  הספר ")
    assert judged == ItemsJudgement(correct=True, matched="לבית הספר", options_named=0)
    assert all(not get_paradigm("items").verify(item) for item in stimulus_set)


def test_regions_segment_the_text_and_must_spell_it(tmp_path):
    table = [["item", "n", "screen1", "screen2", "regions"]]
    table.append(
        [
            "1",
            "sg",
            "The key to the cabinets",
            "was rusty.",
            "The key | to the cabinets | was rusty.",
        ]
    )
    table.append(["1", "pl", "The keys to the cabinet", "were rusty.", ""])
    write_rows(tmp_path / "items.csv", table)
    design = _design({"n": (["sg", "pl"], True, True)}).replace(
        "  text: text", "  text: [screen1, screen2]\n  regions: regions"
    )
    (tmp_path / "design.yaml").write_text(design)
    stimulus_set = import_table(tmp_path / "items.csv", tmp_path / "design.yaml")
    regioned, plain = stimulus_set.items
    assert regioned.truth["screens"] == ["The key to the cabinets", "was rusty."]
    assert [regioned.context[a:b] for a, b in regioned.truth["segments"]] == [
        "The key", "to the cabinets", "was rusty.",
    ]  # fmt: skip
    assert regioned.truth["segments_from"] == "regions"
    assert plain.truth["segments_from"] == "segmenter" and len(plain.truth["segments"]) == 7
    assert get_paradigm("items").word_spans(regioned) == [(0, 7), (8, 23), (24, 34)]
    table[1][4] = "The key | to the cabinet | was rusty."
    write_rows(tmp_path / "items.csv", table)
    with pytest.raises(InputProblems) as caught:
        import_table(tmp_path / "items.csv", tmp_path / "design.yaml")
    assert caught.value.problems == (
        f"{tmp_path / 'items.csv'}:2: column 'regions': region 3 ('was rusty.') is not the "
        "text's next part",
    )


def test_the_items_paradigm_is_imported_not_generated(capsys):
    paradigm = get_paradigm("items")
    assert paradigm.source == "importer" and not paradigm.protocols
    status, _, err = run(["stimuli", "generate", "--paradigm", "items"], capsys)
    assert status == 2 and "'items' is not one of" in err
    assert get_paradigm("narrative").source == "generator"
