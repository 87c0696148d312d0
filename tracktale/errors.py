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
