"""The paradigm registry: name -> the paradigm's plug-in declaration, imported when asked for.

Each paradigm is registered here once, as a lazy reference to the
:class:`~tracktale.plugin.ParadigmPlugin` its own package declares
(``tracktale.stimuli.<name>.plugin:PLUGIN``); every stage finds its part of a paradigm through
that declaration (:func:`get_paradigm` the stimulus paradigm here,
:func:`tracktale.experiment.paradigms.get_human_study` the human study, the report its
sections, the power analysis its model). This module is the one place that lists the paradigms.

A paradigm of another package (a lab's own) is registered by that package, in the same one
line, as an entry point of the group :data:`ENTRY_POINTS` in its ``pyproject.toml``::

    [project.entry-points."tracktale.paradigms"]
    toy = "mylab.toy.plugin:PLUGIN"

Installed, it is listed after tracktale's own (it cannot replace one of theirs), still lazily:
only its reference is read until a stage asks for it.
"""

from __future__ import annotations

import importlib.metadata

from tracktale.errors import TracktaleError
from tracktale.plugin import ParadigmPlugin
from tracktale.registry import Registry
from tracktale.stimuli.paradigm import Paradigm


class PluginRegistry(Registry[ParadigmPlugin]):
    """The paradigms' registry, which checks each registration when it is first asked for.

    A registration that does not give its paradigm's plug-in (a lab's entry point naming a
    module that is not installed, or something else than the plug-in of that name) is a
    one-line :class:`TracktaleError`.
    """

    def get(self, name: str) -> ParadigmPlugin:
        """The plug-in registered as ``name`` (see :meth:`Registry.get`).

        Raises:
            UnknownName: If nothing is registered as ``name``.
            TracktaleError: If the registration cannot be imported, or is not a
                :class:`ParadigmPlugin` named ``name``.
        """
        try:
            plugin: object = super().get(name)
        except (ImportError, AttributeError, ValueError) as error:
            raise TracktaleError(f"paradigm {name!r} cannot be loaded: {error}") from error
        if not isinstance(plugin, ParadigmPlugin) or plugin.name != name:
            raise TracktaleError(
                f"paradigm {name!r} is registered as {plugin!r}, not as the ParadigmPlugin "
                f"named {name!r}"
            )
        return plugin


PLUGINS: Registry[ParadigmPlugin] = PluginRegistry("paradigm")
"""Paradigm name -> its plug-in declaration, in registration order."""
PLUGINS.add("narrative", "tracktale.stimuli.narrative.plugin:PLUGIN")
PLUGINS.add("boxes", "tracktale.stimuli.boxes.plugin:PLUGIN")
PLUGINS.add("arithmetic", "tracktale.stimuli.arithmetic.plugin:PLUGIN")
PLUGINS.add("items", "tracktale.stimuli.items.plugin:PLUGIN")

ENTRY_POINTS = "tracktale.paradigms"
"""The entry-point group through which installed packages register their own paradigms."""
for _entry in importlib.metadata.entry_points(group=ENTRY_POINTS):
    if _entry.name not in PLUGINS:
        PLUGINS.add(_entry.name, _entry.value)

DEFAULT_PARADIGM = "narrative"
"""What a command that needs a paradigm and is given none uses (the first paper's)."""
FOLDER_PARADIGM = "items"
"""What a study folder (``items.csv`` and ``design.yaml``, ``tracktale init``) is imported with:
an importer whose stimulus paradigm ships an example (:attr:`Paradigm.example`)."""


def paradigm_names() -> tuple[str, ...]:
    """The registered paradigm names, in registration order."""
    return PLUGINS.names()


def get_plugin(name: str) -> ParadigmPlugin:
    """The plug-in declaration of the paradigm ``name``.

    Raises:
        UnknownName: If no paradigm has that name (a ``TracktaleError`` listing the names).
    """
    return PLUGINS.get(name)


def paradigms_with(part: str) -> tuple[str, ...]:
    """The paradigms that declare ``part`` (``human_study``, ``report``, ``power``), in order."""
    return tuple(name for name, plugin in PLUGINS.items() if getattr(plugin, part) is not None)


def get_paradigm(name: str) -> Paradigm:
    """The stimulus paradigm registered as ``name``.

    Raises:
        TracktaleError: If no paradigm has that name.
    """
    paradigm: Paradigm = get_plugin(name).load("stimuli")
    return paradigm
