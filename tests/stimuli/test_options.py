"""Generation options: one strict validator per option, with messages naming the flag."""

from __future__ import annotations

import math
import re

import pytest

from tracktale.errors import TracktaleError
from tracktale.stimuli.paradigm import Option

RATE = Option("adjective_rate", float, "A rate.", minimum=0, maximum=1)
COMPRESS = Option("compress", int, "Steps.", minimum=0, words=("random",))
LANGUAGES = Option("language", str, "Languages.", choices=("en", "de"), multiple=True, minimum=1)
SHOTS = Option("shots", int, "Shots.", multiple=True, minimum=1, maximum=9)


def test_values_are_checked_and_normalised():
    assert RATE.check(1) == 1.0 and type(RATE.check(1)) is float
    assert COMPRESS.check("random") == "random" and COMPRESS.check(3) == 3
    assert LANGUAGES.check(("de", "en")) == ["de", "en"]
    assert SHOTS.check([1, 9]) == [1, 9]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        (RATE, 2, "--adjective-rate must be at most 1, got 2.0"),
        (RATE, -0.5, "--adjective-rate must be at least 0, got -0.5"),
        (RATE, "high", "--adjective-rate must be float, got 'high'"),
        (RATE, math.nan, "--adjective-rate must be at most 1, got nan"),
        (COMPRESS, True, "--compress must be int or 'random', got True"),
        (COMPRESS, -1, "--compress must be at least 0, got -1"),
        (LANGUAGES, ["fr"], "--language: 'fr' is not one of en, de"),
        (LANGUAGES, [3], "--language must be str, got 3"),
        (LANGUAGES, [], "--language needs at least 1 value(s)"),
        (LANGUAGES, "en", "--language must be a list, got 'en'"),
        (SHOTS, [10], "--shots must be at most 9, got 10"),
    ],
)
def test_a_bad_value_names_the_flag_and_what_is_allowed(option, value, message):
    with pytest.raises(TracktaleError, match=f"^{re.escape(message)}$"):
        option.check(value)
