"""The human study of an imported item set (the ``items`` paradigm): read a text, then answer.

A set imported with ``tracktale stimuli import`` (:mod:`tracktale.stimuli.items`) runs as a
study with ``paradigm: items`` and ``stimuli:`` naming the set; its language, title and time
limits come from the set's design (:meth:`ItemsStudy.stimulus_defaults`), a study file may
change any of them. The design is the researcher's; what this study adds:

- **Trials.** A trial shows the item's text, on one screen or on the set's screens one after
  another (the screens share the reading time), then its question: a typed answer (task
  ``explicit``), judged by the paradigm's ``score_response`` (the accepted answers under the
  design's match rule), or a forced choice between the item's options in table order (task
  ``comprehension``), correct when it is the right option. Two options sit left and right,
  chosen with F and J; more are numbered 1, 2, ... A row without a question gets the design's
  ``texts.question``, else the catalogue's.
- **Lists.** The set's lists (``lists`` of its manifest: the importer's Latin squares, or the
  table's group column), over which the server balances participants
  (:meth:`ItemsStudy.list_ids`).
- **Order.** The list's practice items first, in table order, with feedback (block 0); then
  its test items and fillers in a new random order for each participant (block 1), the
  fillers never first and never two in a row when there are at least as many test items.
  Every practice item of the list is shown (``design.practice_per_format`` does not apply).
- **Word by word** (``reading_mode: self_paced`` or ``maze``): the text's words, split on
  white space; with the table's region column, self-paced reading shows a region a key press
  (:meth:`ItemsStudy.reading_units`), else a word. The Maze needs ``meta.distractors``
  (``tracktale stimuli maze-distractors`` and ``maze-apply``).
- **Texts.** Every word around the researcher's comes from the study's locale catalogue
  (``read_and_answer.*``); the design's ``texts.instructions`` follow the welcome screen's
  own paragraphs.
- **Simulated people** (:meth:`ItemsStudy.behave`): P(correct) on a test item is the design's
  ``simulation.accuracy`` shifted in log-odds by the participant's ability and by the
  ``simulation.effects`` of the item's factor levels; fillers have ``filler_accuracy``;
  inattentive people guess. Wrong typed answers are other items' answers.
"""

from __future__ import annotations

import html
import math
import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tracktale.errors import TracktaleError
from tracktale.ethics import markdown_to_html
from tracktale.experiment.paradigms import HumanStudy
from tracktale.experiment.paradigms.single_task import simulated_request
from tracktale.experiment.simulation.run import lognormal_ms
from tracktale.experiment.study.design import DesignConfig, PlannedTrial, SessionPlan
from tracktale.experiment.study.instructions import CHOICE_KEYS, session_screens
from tracktale.experiment.study.locale import Catalogue, load_catalogue
from tracktale.experiment.study.scoring import MAX_TYPED_LENGTH, SIDES, ScoredResponse
from tracktale.experiment.study.words import ReadingUnits, sentence_units
from tracktale.item import Item
from tracktale.stimulus_set import StimulusSet, is_stimulus_set, read_manifest

FORMAT = "text"
"""The one block format (read, then answer) and the instruction screen of its blocks."""
TASKS = {"typed": "explicit", "choice": "comprehension"}
"""An item's response kind -> the trial task it is stored under."""
TEXTS = "read_and_answer"
"""The catalogue section of this study's own texts."""
INATTENTIVE_TYPED = 0.1
"""An inattentive simulated person's chance of typing an accepted answer."""


def choice_keys(count: int) -> list[str]:
    """The keys of ``count`` options: F and J for two, else 1, 2, ..."""
    if count == 2:
        return list(CHOICE_KEYS)
    return [str(number) for number in range(1, count + 1)]


def chosen_index(response: str, count: int) -> int:
    """The option a choice response names (``left``/``right`` of two, else ``1``...).

    Raises:
        TracktaleError: If the response names no option.
    """
    names = list(SIDES) if count == 2 else [str(n) for n in range(1, count + 1)]
    if response not in names:
        raise TracktaleError(f"a choice must be one of {', '.join(names)}, got {response!r}")
    return names.index(response)


def choice_response(index: int, count: int) -> str:
    """What the page sends for the option at ``index`` (the inverse of :func:`chosen_index`)."""
    return SIDES[index] if count == 2 else str(index + 1)


class ItemsStudy(HumanStudy):
    """Read, then answer: the study of the researcher's own items (see the module docstring).

    Args:
        stimuli: The set it runs (``None``: not bound yet; :meth:`bind` gives a bound one).
        texts: The participants' catalogue.
    """

    paradigm = "items"
    study_id = "own-items"
    title = "Reading short texts"
    timing = {"reading_ms": 30_000, "response_ms": 15_000, "feedback_ms": 2_500}
    duration_minutes = 20
    trial_noun = "Text"
    lab = True
    documents = {
        "consent": "general_consent",
        "information": "general_information",
        "debrief": "general_debrief",
    }
    lab_documents = {
        "consent": "general_lab_consent",
        "information": "general_lab_information",
        "debrief": "general_lab_debrief",
    }

    def __init__(self, stimuli: StimulusSet | None = None, texts: Catalogue | None = None):
        self.stimuli = stimuli
        self.texts = texts
        self.design = _design(stimuli.manifest.config) if stimuli is not None else None

    # the set ------------------------------------------------------------------------------

    def bind(self, stimulus_set: StimulusSet, texts: Catalogue | None = None) -> ItemsStudy:
        """This study for one imported set (its design, lists and texts)."""
        return ItemsStudy(stimulus_set, texts)

    def _bound(self) -> tuple[StimulusSet, Any, Catalogue]:
        if self.stimuli is None or self.design is None:
            raise TracktaleError("the items study runs a stimulus set: bind it first")
        return self.stimuli, self.design, self.texts or load_catalogue()

    def generate_stimuli(self, seed: int) -> StimulusSet:
        """Imported items are not generated: the study file names the set."""
        raise TracktaleError(
            "an items study shows an imported set: import it (tracktale stimuli import ITEMS "
            "--design DESIGN.yaml --out SET) and name it in the study file (stimuli: SET)"
        )

    def stimulus_defaults(self, folder: Path) -> dict[str, Any]:
        """The set's language, direction, title and time limits; its folder as the study id."""
        if not is_stimulus_set(folder):
            return {}
        manifest = read_manifest(folder)
        if manifest.paradigm != self.paradigm or "design" not in manifest.config:
            return {}
        design = _design(manifest.config)
        found: dict[str, Any] = {"language": design.language}
        found["direction"] = manifest.config.get("direction", "auto")
        if design.texts.title:
            found["title"] = design.texts.title
        timing = {key: value for key, value in design.timing.model_dump().items() if value}
        if timing:
            found["timing"] = timing
        name = Path(folder).resolve().name
        if name and name[0].isalnum() and all(c.isalnum() or c in "._-" for c in name[:64]):
            found["study_id"] = name[:64]
        return found

    def list_ids(self, stimulus_set: StimulusSet) -> tuple[str, ...]:
        """The set's lists, in the manifest's order."""
        from tracktale.stimuli.items.lists import list_ids

        return list_ids(stimulus_set)

    def nouns(self) -> dict[str, str]:
        """What the catalogue calls a text ("Text 3 of 20", "Tekst 3 van 20")."""
        texts = self.texts or load_catalogue()
        return {
            form: texts.text(f"{TEXTS}.noun.{form}") for form in ("title", "singular", "plural")
        }

    def check_stimuli(self, stimulus_set: StimulusSet, design: DesignConfig, where: str) -> None:
        """An imported set with lists, every item with a question to answer."""
        if "design" not in stimulus_set.manifest.config:
            raise TracktaleError(f"{where}: not an imported set (its manifest has no design)")
        for item in stimulus_set:
            if item.truth["response"]["kind"] not in TASKS:
                raise TracktaleError(
                    f"{where}: item {item.truth['item']} ({item.item_id}) has no answer or "
                    "options: every trial of the study ends with a question"
                )
        lists = self.list_ids(stimulus_set)
        if not lists:
            raise TracktaleError(f"{where}: the set declares no lists")
        for list_id in lists:
            self.build_session(stimulus_set, list_id, 0, design)

    # a session ------------------------------------------------------------------------------

    def build_session(
        self, stimulus_set: StimulusSet, list_id: str, session_seed: int, design: DesignConfig
    ) -> SessionPlan:
        """The list's practice items (block 0), then its test items and fillers (block 1)."""
        from tracktale.stimuli.items.lists import study_lists

        lists = study_lists(stimulus_set)
        if list_id not in lists:
            raise TracktaleError(f"unknown list {list_id!r} (choose from {', '.join(lists)})")
        shown = lists[list_id]
        practice = [item for item in shown if item.role == "practice"]
        tests = [item for item in shown if item.role == "main"]
        if not tests:
            raise TracktaleError(f"list {list_id} has no test items")
        fillers = [item for item in shown if item.role == "filler"]
        rng = random.Random(f"session|{design.seed}|{session_seed}|items")
        main = spaced(rng, tests, fillers)
        blocks = [practice, main] if practice else [main]
        trials: list[PlannedTrial] = []
        for block, items in enumerate(blocks):
            for item in items:
                planned = PlannedTrial(
                    len(trials), item.item_id, item.role, task_of(item), block, None
                )
                trials.append(planned)
        formats = (FORMAT,) * len(blocks)
        return SessionPlan(list_id, design.seed, session_seed, formats, tuple(trials))

    # a trial ------------------------------------------------------------------------------

    def served_content(self, item: Item, planned: PlannedTrial) -> dict[str, Any]:
        """The text (its screens), the question and, for a choice, the options and their keys."""
        if item.item_id != planned.item_id:
            raise TracktaleError(f"trial {planned.trial_index} plans item {planned.item_id}")
        truth = item.truth
        kind = truth["response"]["kind"]
        shown: dict[str, Any] = {
            "index": planned.trial_index,
            "block": planned.block,
            "task": planned.task,
            "role": planned.role,
            "item_id": item.item_id,
            "story": item.context,
            "probe": self.question(item),
        }
        if len(truth["screens"]) > 1:
            shown["screens"] = list(truth["screens"])
        if kind == "choice":
            options = list(truth["response"]["options"])
            shown["options"] = options
            shown["keys"] = choice_keys(len(options))
        return shown

    def reading_units(self, item: Item) -> ReadingUnits:
        """The text's words; with the table's region column, its regions, read a region a press.

        Without a region column the words are read one a press, their sentences as regions.

        Raises:
            TracktaleError: If a region ends inside a word (the words are split on white space).
        """
        if item.truth["segments_from"] != "regions":
            return sentence_units(item)
        spans = item.truth["segments"]
        words, regions, region = [], [], 0
        for match in re.finditer(r"\S+", item.context):
            while region < len(spans) and match.start() >= spans[region][1]:
                region += 1
            if region == len(spans) or match.end() > spans[region][1]:
                raise TracktaleError(
                    f"item {item.truth['item']} ({item.item_id}): a region ends inside the "
                    f"word {match.group()!r}; word-by-word reading needs regions of whole words"
                )
            words.append(match.group())
            regions.append(region)
        return ReadingUnits(words, regions, "region")

    def question(self, item: Item) -> str:
        """The item's question, else the design's, else the catalogue's."""
        if item.question:
            return item.question
        _, design, texts = self._bound()
        if design.texts.question:
            return str(design.texts.question)
        kind = item.truth["response"]["kind"]
        return texts.text(f"{TEXTS}.{'choice' if kind == 'choice' else 'typed'}_question")

    def score_trial(
        self, item: Item, planned: PlannedTrial, response: str | None, rule: str
    ) -> ScoredResponse:
        """A typed answer by the paradigm's judgement; a choice by its option (stored as text).

        ``rule`` (the narrative study's ``typed_answer_rule``) does not apply: the design's
        ``scoring.match`` does.
        """
        if response is None:
            return ScoredResponse(None, False, False)
        truth = item.truth["response"]
        if truth["kind"] == "choice":
            options = truth["options"]
            chosen = options[chosen_index(response, len(options))]
            correct = chosen == item.answer
            return ScoredResponse(chosen, correct, correct)
        from tracktale.stimuli.registry import get_paradigm

        text = response.strip()[:MAX_TYPED_LENGTH]
        correct = get_paradigm(self.paradigm).score_response(item, text).correct
        return ScoredResponse(text, correct, correct)

    def practice_feedback(
        self, item: Item, planned: PlannedTrial, correct: bool, timed_out: bool
    ) -> dict[str, Any]:
        """The verdict and the (first accepted, or right) answer."""
        return {"correct": correct, "timed_out": timed_out, "answer": item.answer}

    # texts --------------------------------------------------------------------------------

    def instructions(self, reading_ms: int, response_ms: int, source: str) -> dict[str, Any]:
        """The catalogue's screens, with the set's own instructions on the welcome screen."""
        stimuli, design, texts = self._bound()
        where = "lab" if source == "lab" else "online"
        reading, response = texts.seconds(reading_ms), texts.seconds(response_ms)
        welcome = texts.paragraphs(f"{TEXTS}.welcome")
        welcome.append(texts.text(f"{TEXTS}.reading_{where}", reading=reading))
        if any(len(item.truth["screens"]) > 1 for item in stimuli):
            welcome.append(texts.text(f"{TEXTS}.parts_{where}", reading=reading))
        if where == "online":
            welcome.append(texts.text(f"{TEXTS}.keep_open"))
        kinds = {item.truth["response"]["kind"] for item in stimuli}
        block = [
            texts.text(f"{TEXTS}.{kind}_{where}", response=response)
            for kind in ("typed", "choice")
            if kind in kinds
        ]
        own = (design.texts.instructions or "").strip()
        screens = {
            "welcome": welcome,
            FORMAT: block,
            "main_start": texts.paragraphs(f"{TEXTS}.main_start"),
            "typed_prompt": texts.text(
                f"{TEXTS}.typed_prompt" + ("_lab" if where == "lab" else "")
            ),
            "empty_answer": texts.text(f"{TEXTS}.empty_answer"),
            **session_screens(texts),
        }
        if own and where == "online":
            screens["welcome_html"] = markdown_to_html(own)
        elif own:  # the lab window shows plain text: the Markdown's words, paragraph by paragraph
            blocks = re.split(r"</(?:p|li|h\d)>", markdown_to_html(own))
            plain = (html.unescape(re.sub(r"<[^>]+>", "", block)).strip() for block in blocks)
            welcome.extend(block for block in plain if block)
        return screens

    def word_by_word_instructions(
        self, screens: dict[str, Any], reading_ms: int, mode: str, redo: bool
    ) -> dict[str, Any]:
        """The welcome screen says how the texts are read: dashes and SPACE, or the Maze.

        Its paragraphs on reading a whole text (and its parts) give way to one on the mode
        (``read_and_answer.spr_online``, ``spr_regions_online``, ``maze_online``,
        ``maze_redo_online``).
        """
        stimuli, _, texts = self._bound()
        reading = texts.seconds(reading_ms)
        whole = {
            texts.text(f"{TEXTS}.{part}_online", reading=reading) for part in ("reading", "parts")
        }
        if mode == "maze":
            key = "maze_redo" if redo else "maze"
        elif any(self.reading_units(item).step == "region" for item in stimuli):
            key = "spr_regions"
        else:
            key = "spr"
        welcome = [paragraph for paragraph in screens["welcome"] if paragraph not in whole]
        welcome.insert(
            len(texts.paragraphs(f"{TEXTS}.welcome")),
            texts.text(f"{TEXTS}.{key}_online", reading=reading),
        )
        return {**screens, "welcome": welcome}

    # simulated people ---------------------------------------------------------------------

    def p_correct(self, person: Any, item: Item) -> float:
        """A simulated person's chance of answering ``item`` correctly."""
        _, design, _ = self._bound()
        if not person.attentive:
            options = item.truth["response"]["options"]
            return 1 / len(options) if options else INATTENTIVE_TYPED
        simulation = design.simulation
        if item.role == "main":
            logit = _logit(simulation.accuracy)
            effects = simulation.level_effects(design.factors)
            for factor, level in item.condition.items():
                logit += effects.get(factor, {}).get(str(level), 0.0)
        else:
            logit = _logit(simulation.filler_accuracy)
        return 1 / (1 + math.exp(-(logit + person.ability)))

    def behave(
        self,
        rng: random.Random,
        person: Any,
        item: Item,
        shown: Mapping[str, Any],
        timing: Mapping[str, int],
    ) -> dict[str, Any]:
        """A simulated person: reading time by length, an answer right with :meth:`p_correct`."""
        words = max(1, len(item.truth["segments"]))
        screens = len(shown.get("screens") or [shown["story"]])
        reading = lognormal_ms(rng, (words * 230 + 600 * screens) * person.speed, 0.25)
        correct = rng.random() < self.p_correct(person, item)
        options = shown.get("options")
        if options:
            right = options.index(item.answer)
            wrong = [index for index in range(len(options)) if index != right]
            index = right if correct else rng.choice(wrong)
            answer: str = choice_response(index, len(options))
            median = 2200.0 + 450.0 * len(options)
        else:
            answer = self._typed(rng, item, correct)
            median = 3500.0
        response_ms = lognormal_ms(rng, median * person.speed, 0.4)
        return simulated_request(rng, person, shown, timing, (answer, reading, response_ms))

    def _typed(self, rng: random.Random, item: Item, correct: bool) -> str:
        accepted = item.truth["response"]["accepted"]
        if correct:
            answer = str(rng.choice(accepted))
            return answer.capitalize() if rng.random() < 0.2 else answer
        from tracktale.stimuli.registry import get_paradigm

        stimuli, _, _ = self._bound()
        judge = get_paradigm(self.paradigm).score_response
        others = sorted({other.answer for other in stimuli if other.answer} - set(accepted))
        wrong = [answer for answer in others if not judge(item, answer).correct]
        return rng.choice(wrong) if wrong else "?"


def task_of(item: Item) -> str:
    """The trial task of an item: ``explicit`` (typed) or ``comprehension`` (a choice)."""
    return TASKS[item.truth["response"]["kind"]]


def spaced(rng: random.Random, tests: list[Item], fillers: list[Item]) -> list[Item]:
    """Test items in a random order with the fillers spread among them.

    A filler never comes first and never right after another when there are at least as many
    test items as fillers; otherwise everything is shuffled together.
    """
    order = list(tests)
    rng.shuffle(order)
    rest = list(fillers)
    rng.shuffle(rest)
    if len(rest) > len(order):
        mixed = order + rest
        rng.shuffle(mixed)
        return mixed
    gaps = set(rng.sample(range(1, len(order) + 1), len(rest)))  # after the k-th test item
    block: list[Item] = []
    for position, item in enumerate(order, start=1):
        block.append(item)
        if position in gaps:
            block.append(rest.pop())
    return block


def _design(config: Mapping[str, Any]) -> Any:
    from tracktale.stimuli.items.design import Design

    return Design.model_validate(config["design"])


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


STUDY = ItemsStudy()
