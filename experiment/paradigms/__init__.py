"""How each paradigm runs as a human study: one :class:`HumanStudy` per paradigm.

The study server (sessions, serving, timing, storage, export) is the same for every paradigm;
what differs is declared here, in one module per paradigm (``narrative.py``, ``boxes.py``,
...), named by the paradigm's plug-in
(:class:`tracktale.plugin.ParadigmPlugin`, ``human_study``):

- the study's defaults (``study_id``, title, time limits) when a study file names only its
  ``paradigm:``;
- its list design (:meth:`HumanStudy.build_session`: counterbalanced lists, practice);
- what a trial serves to the browser when it starts (:meth:`HumanStudy.served_content`: no
  answer in it) and which jsPsych plugin shows a task (:attr:`HumanStudy.trial_plugins`, with
  the served ``parameters``; tasks not named there use the narrative trial screens);
- how a text is cut for word-by-word reading (:meth:`HumanStudy.reading_units`, for the
  reading modes its plug-in declares);
- how a response is scored (:meth:`HumanStudy.score_trial`, which calls the paradigm's
  ``score_response``) and what practice feedback says;
- the participant-facing instructions and the ethics documents (consent, information,
  debrief);
- a simulated participant's behaviour (:meth:`HumanStudy.behave`);
- where its texts and lists come from its stimulus set rather than the paradigm (an imported
  set's language, lists, participant-facing texts): :meth:`HumanStudy.stimulus_defaults`,
  :meth:`HumanStudy.list_ids` and :meth:`HumanStudy.bind`, which gives the study for one set
  and one locale catalogue (:mod:`tracktale.experiment.study.locale`).

A new paradigm adds one module and names it in its plug-in; nothing else in the server changes.
"""

from __future__ import annotations

import abc
import random
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.errors import TracktaleError
from tracktale.experiment.study.design import LIST_IDS, DesignConfig, PlannedTrial, SessionPlan
from tracktale.experiment.study.locale import Catalogue
from tracktale.experiment.study.words import ReadingUnits, sentence_units
from tracktale.item import Item
from tracktale.stimuli.registry import DEFAULT_PARADIGM as DEFAULT_PARADIGM
from tracktale.stimuli.registry import get_plugin, paradigms_with
from tracktale.stimulus_set import StimulusSet

if TYPE_CHECKING:
    from tracktale.experiment.study.scoring import ScoredResponse


class HumanStudy(abc.ABC):
    """What one paradigm's human study declares (see the module docstring)."""

    paradigm: str
    """The stimulus paradigm (:func:`tracktale.stimuli.registry.get_paradigm`)."""
    study_id: str
    """Default ``study_id`` of a study file that names only the paradigm."""
    title: str
    """Default title (the browser tab)."""
    timing: Mapping[str, int]
    """Default ``timing:`` (``reading_ms``, ``response_ms``, ``feedback_ms``)."""
    duration_minutes: int = 25
    """Default ``ethics.duration_minutes`` (what the consent form says the study takes)."""
    scripts: tuple[str, ...] = ()
    """Extra static scripts the page loads after the shared plugins (``plugins/x.js``)."""
    trial_plugins: Mapping[str, str] = {}
    """Task -> global name of the jsPsych plugin that shows its response screen, with the
    served trial's ``parameters``; tasks not listed use the narrative screens."""
    documents: Mapping[str, str] = {
        "consent": "consent",
        "information": "information",
        "debrief": "debrief",
    }
    """Which ethics document (:data:`tracktale.ethics.DOCUMENTS`) the page shows for each."""
    lab_documents: Mapping[str, str] = {
        "consent": "lab_consent",
        "information": "lab_information",
        "debrief": "lab_debrief",
    }
    """... and which the lab mode shows (keys instead of buttons, the experimenter instead of
    Prolific)."""
    reading_prompt: str | None = None
    """The hint under the text to read (``None``: the reading plugin's, which names a story)."""
    trial_noun: str = "Story"
    """What the progress line and the timeout notice call a trial ("Story 12 of 50")."""
    lab: bool = False
    """Whether the PsychoPy lab mode can run this study."""
    asks_probe_values: bool = False
    """Whether its main trials can ask for intermediate values (the study file's
    ``probe_values``)."""
    paper_timing: Mapping[str, int] | None = None
    """The source paper's time limits (``reading_ms``, ``response_ms``), where it set any: a
    study that departs from them is warned (``None``: the paper set none, the defaults are
    ours)."""

    def nouns(self) -> dict[str, str]:
        """What the page calls a trial: ``title``, ``singular`` and ``plural``.

        ``title`` starts the progress line ("Story 12 of 50"). In English, from
        :attr:`trial_noun`; a study in other languages takes them from its catalogue.
        """
        singular = self.trial_noun.lower()
        plural = singular[:-1] + "ies" if singular.endswith("y") else singular + "s"
        return {"title": self.trial_noun, "singular": singular, "plural": plural}

    def list_ids(self, stimulus_set: StimulusSet) -> tuple[str, ...]:
        """The counterbalancing lists participants are spread over, in order (``L1``-``L4``)."""
        return LIST_IDS

    def stimulus_defaults(self, folder: Path) -> dict[str, Any]:
        """Study-file defaults the stimulus set in ``folder`` declares (none by default).

        A mapping like a study file's (``title``, ``language``, ``timing``, ...), laid over the
        paradigm's defaults and under the study file's own keys; a set that is not there yet
        declares nothing.
        """
        return {}

    def bind(self, stimulus_set: StimulusSet, texts: Catalogue | None) -> HumanStudy:
        """The study as it runs one set in one language (the study itself by default).

        ``texts`` is ``None`` where no participant reads anything (simulated people).
        """
        return self

    def stimulus_dir_name(self, seed: int) -> str:
        """Folder name of the default stimulus set under ``$TRACKTALE_DATA/stimuli``."""
        return f"{self.paradigm}-human-s{seed}"

    def generate_stimuli(self, seed: int) -> StimulusSet:
        """The default human-protocol set."""
        from tracktale.stimuli.registry import get_paradigm

        return get_paradigm(self.paradigm).generate_set("human", seed)

    @abc.abstractmethod
    def check_stimuli(self, stimulus_set: StimulusSet, design: DesignConfig, where: str) -> None:
        """Refuse a set the study cannot run (raise ``TracktaleError`` naming the problem)."""

    @abc.abstractmethod
    def build_session(
        self, stimulus_set: StimulusSet, list_id: str, session_seed: int, design: DesignConfig
    ) -> SessionPlan:
        """One participant's session for a list (deterministic for its inputs)."""

    @abc.abstractmethod
    def served_content(self, item: Item, planned: PlannedTrial) -> dict[str, Any]:
        """What the browser gets when the trial starts; never the answer.

        ``index``, ``block``, ``task``, ``role``, ``item_id``, ``story`` and the task's own
        fields (``parameters`` of a task in :attr:`trial_plugins`).
        """

    def reading_units(self, item: Item) -> ReadingUnits:
        """How a word-by-word trial (its plug-in's ``reading_modes``) cuts ``item``'s text.

        By default its words, split on white space, one a key press, with its sentences as
        the regions.

        Raises:
            TracktaleError: If the text cannot be read word by word (naming the item).
        """
        return sentence_units(item)

    def probe_variables(self, item: Item, count: int) -> list[str]:
        """The variables a main trial asks for on the way (``probe_values``); none by default."""
        return []

    @abc.abstractmethod
    def score_trial(
        self, item: Item, planned: PlannedTrial, response: str | None, rule: str
    ) -> ScoredResponse:
        """Score a response (``None``: a timeout, always incorrect)."""

    @abc.abstractmethod
    def practice_feedback(
        self, item: Item, planned: PlannedTrial, correct: bool, timed_out: bool
    ) -> dict[str, Any]:
        """The verdict a practice trial's feedback screen shows.

        ``correct``, ``timed_out`` and ``answer`` (shown as "The answer was: ...") or
        ``good_side``.
        """

    @abc.abstractmethod
    def instructions(self, reading_ms: int, response_ms: int, source: str) -> dict[str, Any]:
        """Every instruction text, keyed by screen (as :func:`.instructions.instructions`).

        ``welcome``, one per block format, ``main_start``, ``resume``, ``survey``, ``saving``,
        ``completed_before`` (lists of paragraphs) and ``keys``.
        """

    def word_by_word_instructions(
        self, screens: dict[str, Any], reading_ms: int, mode: str, redo: bool
    ) -> dict[str, Any]:
        """The online instruction ``screens`` of a study read word by word (``reading_mode``).

        Called with what :meth:`instructions` gave; unchanged by default (the study's
        instructions stand). ``redo``: the study's ``maze_redo``.
        """
        return screens

    @abc.abstractmethod
    def behave(
        self,
        rng: random.Random,
        person: Any,
        item: Item,
        shown: Mapping[str, Any],
        timing: Mapping[str, int],
    ) -> dict[str, Any]:
        """A simulated participant's answer: the request body the page would send."""


def human_study_names() -> tuple[str, ...]:
    """The paradigms that have a human study."""
    return paradigms_with("human_study")


def get_human_study(paradigm: str) -> HumanStudy:
    """The human study of ``paradigm``.

    Raises:
        TracktaleError: If the paradigm has no human study.
    """
    if paradigm not in human_study_names():
        raise TracktaleError(
            f"paradigm {paradigm!r} has no human study "
            f"(choose from {', '.join(human_study_names())})"
        )
    study: HumanStudy = get_plugin(paradigm).load("human_study")
    return study
