"""A scripted stand-in for the PsychoPy window: answers from the stimulus set, no PsychoPy."""

from __future__ import annotations

import itertools

from tracktale.experiment.lab.runner import Interrupted
from tracktale.experiment.lab.session import Reading, Response


class ScriptedDisplay:
    """Plays a participant through :func:`run_session`'s screens.

    Args:
        stimuli: The study's stimulus set (the answers come from the items).
        consent: ``y`` to agree, ``n`` to decline.
        escape_at: Press ESC on the story of this trial position.
        reading_timeouts: Positions whose story runs out of time.
        response_timeouts: Positions whose question runs out of time.
        wrong: Positions answered wrongly.
    """

    size = (1920, 1080)

    def __init__(
        self,
        stimuli,
        *,
        consent="y",
        escape_at=None,
        reading_timeouts=(),
        response_timeouts=(),
        wrong=(),
    ):
        self.stimuli = stimuli
        self.consent = consent
        self.escape_at = escape_at
        self.reading_timeouts = set(reading_timeouts)
        self.response_timeouts = set(response_timeouts)
        self.wrong = set(wrong)
        self.clock = itertools.count(start=10)
        self.shown: list[str] = []
        self.texts: dict[str, str] = {}
        self.current = None

    def _onset(self) -> float:
        return float(next(self.clock))

    def page(self, kind, text, keys, *, footer="", timeout_s=None):
        self.shown.append(kind)
        self.texts.setdefault(kind, text)
        if kind == "survey-gender":
            return "3"
        if kind.startswith("survey-"):
            return "y"
        if kind == "feedback" and len([k for k in self.shown if k == "feedback"]) == 1:
            return None  # the first feedback times out
        return keys[0]

    def document(self, kind, markdown, keys, *, footer):
        self.shown.append(kind)
        self.texts.setdefault(kind, markdown)
        if kind == "consent":
            if "information" not in self.shown:
                return "i"
            return self.consent
        return keys[0]

    def read(self, story, limit_s, *, trial, minimum_s, **options):
        self.shown.append("reading")
        self.current = trial
        if trial == self.escape_at:
            raise Interrupted("reading")
        onset = self._onset()
        if trial in self.reading_timeouts:
            # The story stayed up for its whole limit: the question's flip comes that late.
            self.clock = itertools.count(start=int(onset + limit_s))
            return Reading(onset, None, True)
        return Reading(onset, 1500.0 + trial, False)

    def type_word(self, kind, prompt, probe, *, limit_s, max_length, trial=None, **options):
        self.shown.append(kind)
        onset = self._onset()
        if kind == "survey-age":
            return Response(onset, "37", 900.0)
        if kind == "survey-language":
            return Response(onset, "Dutch", 900.0)
        if trial in self.response_timeouts:
            return Response(onset, None, None)
        answer = self._item(trial, probe).answer
        return Response(onset, "nowhere" if trial in self.wrong else answer, 2100.0)

    def choose(self, kind, question, options, *, limit_s, keys, trial, minimum_s):
        self.shown.append(kind)
        onset = self._onset()
        if trial in self.response_timeouts:
            return Response(onset, None, None)
        item = self.stimuli.get(self.plan[trial].item_id)
        good = "left" if options[0] == item.choice.good.strip() else "right"
        bad = "right" if good == "left" else "left"
        return Response(onset, bad if trial in self.wrong else good, 1200.0)

    def focus_changes(self):
        return (0, 0)

    def _item(self, trial, probe):
        item = self.stimuli.get(self.plan[trial].item_id)
        assert item.question == probe
        return item

    def play(self, session, **kwargs):
        """Run the session with this display; ``plan`` comes from the session."""
        from tracktale.experiment.lab.runner import run_session

        self.plan = session.trials
        return run_session(session, self, **kwargs)
