"""The one exception type that reaches users as a one-line message."""


class TracktaleError(Exception):
    """A problem with the user's input or environment, explained in one line.

    The CLI prints ``tracktale: error: <message>`` and exits non-zero; library callers can catch
    it. Messages name the offending thing (a file and line, an option and its value).
    """
