"""What the study refuses, as domain errors: the study rules never speak HTTP.

The study's rules (:mod:`.trialflow`, :mod:`.service`) raise these; only the web layer maps them
to HTTP statuses (:data:`tracktale.experiment.web.api.REFUSAL_STATUS`), and the lab mode turns
them into its one-line errors. Each carries a message for the participant's page and
``details``: the machine-readable fields the client reads (``reason``, ``participant_status``,
``answered``, ``waiting_for``, ...).
"""

from __future__ import annotations

from typing import Any

from tracktale.errors import TracktaleError


class StudyRefusal(TracktaleError):
    """A participant's request the study refuses.

    Attributes:
        message: What the participant's page shows.
        details: Fields for the client, beside the message.
    """

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class WrongState(StudyRefusal):
    """The participant's state does not allow the request now.

    Before consent, after the end, a trial answered already, too many served trials waiting for
    their answers.
    """


class InconsistentRequest(StudyRefusal):
    """A request that contradicts the session's plan or itself.

    A position beyond the plan or out of order, another item than was served, a response with a
    timeout.
    """


class InvalidRequest(StudyRefusal):
    """A value the study does not take: a survey answer it does not offer, a status it can't set."""


class NotAuthenticated(StudyRefusal):
    """A request without a valid session token (unknown, expired, or replaced by a takeover)."""


class NotPermitted(StudyRefusal):
    """A request the study does not allow this caller.

    A session that cannot be proven to be theirs (started in another browser), a link of
    another study, a preview key that is not the study's.
    """


class UnknownParticipant(StudyRefusal):
    """A participant id the study does not hold."""
