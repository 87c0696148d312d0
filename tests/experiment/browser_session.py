"""What the whole-session browser tests of the single-task studies share (arithmetic, boxes).

The screens every session ends with, answered the same way, and the checks of what the
database holds after the session: every trial stored once, the practice and main counts, the
one timeout stored without an answer, and each answer's score and times as recorded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from types import SimpleNamespace
from typing import Any

from tests.experiment.test_browser import _survey


def answer_closing_screen(page, screen: str, shoot: Callable[[str], None]) -> None:
    """Answer one of the screens after the trials (survey, debrief, final, info); wait else."""
    if screen == "survey":
        _survey(page, SimpleNamespace(shoot=shoot))
    elif screen == "debrief":
        page.get_by_role("button", name="Finish").click()
    elif screen == "final":
        assert page.locator(".tt-code").inner_text() == "DONE123"
        page.wait_for_url("https://app.prolific.com/**", timeout=30000)
    elif screen == "info":
        page.locator("#jspsych-html-button-response-btngroup button").first.click()
    else:
        page.wait_for_timeout(200)


def stored_trials(records: Iterable[Any], *, practice: int, main: int) -> list[Any]:
    """The stored trials in session order, after checking each was stored once."""
    trials = sorted(records, key=lambda record: record.trial_index)
    assert [record.trial_index for record in trials] == list(range(practice + main))
    assert Counter(record.role for record in trials) == {"practice": practice, "main": main}
    return trials


def check_scores_and_times(
    trials: list[Any], correct: Callable[[Any], bool], *, reading_ms: int, response_ms: int
) -> Any:
    """Each answer scored as ``correct`` scores it, within the limits; returns the timeout.

    There must be exactly one timed-out trial, a main one, stored without an answer.
    """
    (timeout,) = [record for record in trials if record.timed_out]
    assert timeout.response is None and not timeout.correct and timeout.role == "main"
    for record in trials:
        assert 0 < record.reading_time_ms < reading_ms + 1000
        assert "faster_than_reported" not in record.flag_set
        if record is not timeout:
            assert record.correct == correct(record)
            assert 0 < record.response_time_ms < response_ms + 1000
    return timeout
