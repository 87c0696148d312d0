"""A Wuggy language plugin for English orthography whose lexicon lives wherever the caller says.

Wuggy (``pip install wuggy``) normally downloads its English plugin, a small class plus a lexicon
file, at run time. This module is our own plugin, so regeneration works offline and the lexicon
(whose licence is not stated) never enters the repository: its path is given at run time.

This is the only module of the project that imports ``wuggy``, and only
:mod:`tracktale.stimuli.pseudowords` imports it, lazily, when regenerating; the rest of the project
runs without Wuggy installed.
"""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path
from typing import Any

from wuggy import WuggyGenerator
from wuggy.plugins.baselanguageplugin import BaseLanguagePlugin

PLUGIN_NAME = "tracktale_orthographic_english"
"""The name the plugin is loaded under in a :class:`wuggy.WuggyGenerator`."""

# Pairs of vowel letters that usually spell one vowel; listed before the single letters so that
# "oo" wins over "o". A 'u' after 'q' belongs to the onset (quill, queen).
_DIGRAPHS = (
    "ai", "au", "ea", "ee", "ei", "eu", "ie", "io", "oa", "oe", "oi", "oo", "ou",
    "(?<!q)ue", "(?<!q)ui",
)  # fmt: skip
# 'y' is the nucleus only when it is the syllable's sole vowel (my, gym, rhy-thm). Before a vowel
# it is an onset consonant (yes, be-yond), and after one a glide in the coda (key, day, boy), as
# 'w' is (saw, cow, new); the lazy onset below reaches the earlier vowel first in that case.
_SINGLES = ("a", "e", "i", "o", "(?<!q)u", "y(?![aeiou])")
_ONC_PATTERN = re.compile(rf"(.*?)({'|'.join(_DIGRAPHS + _SINGLES)})(.*)")


class EnglishOrthographyPlugin(BaseLanguagePlugin):
    """English orthography split into onset, nucleus and coda, with the lexicon at a given path.

    Wuggy finds a plugin's data files relative to the folder of the plugin's source file: it
    joins ``default_data`` with :func:`os.path.join` but the word, neighbour and lookup lexicons
    with ``"%s/%s"``, so an absolute path only works for the first. Every file name is therefore
    stored as a path relative to this module's folder, which both joins resolve correctly.

    Args:
        lexicon_path: Wuggy's orthographic lexicon: ``word<TAB>syl-la-bi-fied<TAB>frequency``.
    """

    oncpattern = _ONC_PATTERN

    def __init__(self, lexicon_path: str | os.PathLike[str]) -> None:
        self.lexicon_path = Path(lexicon_path)
        relative = _relative_to_plugin_folder(self.lexicon_path, type(self))
        self.default_data = relative
        self.default_neighbor_lexicon = relative
        self.default_word_lexicon = relative
        self.default_lookup_lexicon = relative

    def transform(self, input_sequence: str, frequency: float = 1) -> Any:
        """Represent a hyphen-syllabified word as Wuggy's onset/nucleus/coda segments.

        Args:
            input_sequence: A syllabified word such as ``"wal-let"``.
            frequency: The weight the sequence contributes to the bigram chain.

        Returns:
            A ``BaseLanguagePlugin.Sequence`` of segments framed by ``^`` and ``$``. A syllable
            without a vowel (the ``"thm"`` of ``"rhy-thm"``) becomes an onset with an empty
            nucleus and coda.
        """
        return self.pre_transform(input_sequence, frequency=frequency, language=self)


def load_generator(lexicon_path: str | os.PathLike[str]) -> WuggyGenerator:
    """A Wuggy generator loaded with :class:`EnglishOrthographyPlugin` on ``lexicon_path``.

    Loading calls :func:`random.randint` once per lexicon line (Wuggy's line sampling, which at
    its default keeps every line) and generation shuffles with Python's global :mod:`random`, so
    seed it first for reproducible candidates.
    """
    generator = WuggyGenerator()
    generator.load(PLUGIN_NAME, EnglishOrthographyPlugin(lexicon_path))
    return generator


def _relative_to_plugin_folder(lexicon_path: Path, plugin_class: type) -> str:
    # Wuggy's folder is the directory of inspect.getfile(plugin class). Both sides are resolved
    # so that '..' steps through real directories, not through symlinks the kernel would follow.
    # (On Windows, relpath fails across drives; the project runs on POSIX machines.)
    plugin_folder = Path(os.path.dirname(inspect.getfile(plugin_class))).resolve()
    return os.path.relpath(lexicon_path.resolve(), plugin_folder).replace(os.sep, "/")
