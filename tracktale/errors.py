"""The one exception type that reaches users as a one-line message."""


class TracktaleError(Exception):
    """A problem with the user's input or environment, explained in one line.

    The CLI prints ``tracktale: error: <message>`` and exits non-zero; library callers can catch
    it. Messages name the offending thing (a file and line, an option and its value).
    """


class InputProblems(TracktaleError):
    """Every problem found in one input, one line each (a file's bad rows); nothing was written.

    The CLI prints each of :attr:`problems` on a line of its own, then the summary.
    """

    def __init__(self, source: object, problems: list[str] | tuple[str, ...]) -> None:
        self.problems = tuple(problems)
        count = len(self.problems)
        super().__init__(
            f"{source}: {count} problem{'s' if count != 1 else ''}; nothing was written"
        )


class ConflictError(TracktaleError):
    """A write that contradicts what is already stored, where the first one wins.

    Attributes:
        reason: A short machine-readable word for the client (``already_recorded``: what the
            write would store is stored already, by this or another tab; ``decided``: the
            opposite decision is stored).
    """

    def __init__(self, message: str, reason: str = "already_recorded") -> None:
        super().__init__(message)
        self.reason = reason


class StorageUnavailable(TracktaleError):
    """The database cannot take the request now (read-only, full, locked, unreachable).

    Nothing was written; the same request may succeed later, so clients should retry.

    Attributes:
        retry_after: Seconds worth waiting before the next try.
    """

    def __init__(self, message: str, retry_after: int = 5) -> None:
        super().__init__(message)
        self.retry_after = retry_after
