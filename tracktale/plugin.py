"""A paradigm as one plug-in: the record that names every stage's part of it.

A paradigm is declared once, as a :class:`ParadigmPlugin` in its own package
(``tracktale.stimuli.<name>.plugin``), and registered once, as one line of
:data:`tracktale.stimuli.registry.PLUGINS`. The record holds no code: each stage's part is a
lazy ``"module:attribute"`` reference, which only the stage that owns it resolves, so that
importing the record imports nothing above the stimuli and the layers stay as they are
(``tests/test_architecture.py`` and the record itself check each reference of tracktale's own
against its stage; a paradigm from another package names its own modules):

========================  ==============  ==================================================
field                     stage           what the reference names
========================  ==============  ==================================================
``stimuli``               stimuli         its :class:`~tracktale.stimuli.paradigm.Paradigm`
                                          (a generator or an importer, and its items' payload)
``human_study``           experiment      its :class:`~tracktale.experiment.paradigms.HumanStudy`
                                          (trial plugins, lists, scoring, texts, simulated people)
``report``                analysis        its report sections, in page order
``power``                 analysis        its people power model
                                          (:class:`~tracktale.analysis.power.people.PowerModel`)
``report_options``        analysis        its report options: a pydantic model
                                          (:mod:`tracktale.analysis.report.options`)
                                          whose fields the report's command line offers as
                                          ``--<paradigm>-<field>``
========================  ==============  ==================================================

``model_tasks`` names the registered model tasks (:data:`tracktale.models.tasks.TASK_REGISTRY`)
its items are built for; ``reading_modes`` the word-by-word reading modes its human study
serves besides whole texts (a study file's ``reading_mode``: ``self_paced``, ``maze``).
Shared code asks the registry for a paradigm's part instead of switching on its name.
"""

from __future__ import annotations

import pkgutil
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

Part = Literal["stimuli", "human_study", "report", "power", "report_options"]
"""The parts of a paradigm that are lazy references."""
ReadingMode = Literal["self_paced", "maze"]
"""A word-by-word reading mode a human study may serve (whole texts are always served)."""


@dataclass(frozen=True)
class ParadigmPlugin:
    """Everything the stages need to find of one paradigm (see the module docstring).

    Attributes:
        name: The paradigm's name (in items, stimulus sets, result rows, on the command line).
        stimuli: ``module:attribute`` of its stimulus paradigm.
        human_study: ``module:attribute`` of its human study (``None``: models only).
        model_tasks: The model tasks its items are built for, by registered name.
        report: ``module:attribute`` of its report sections (``None``: no sections).
        power: ``module:attribute`` of its people power model (``None``: none).
        report_options: ``module:attribute`` of its report options model (``None``: the
            report takes no options of this paradigm).
        reading_modes: The word-by-word reading modes its human study serves (empty: whole
            texts only): its texts' words, regions and Maze distractors come from
            ``HumanStudy.reading_units`` and the items' ``meta.distractors``.
    """

    name: str
    stimuli: str
    human_study: str | None = None
    model_tasks: tuple[str, ...] = ()
    report: str | None = None
    power: str | None = None
    report_options: str | None = None
    reading_modes: tuple[ReadingMode, ...] = ()

    STAGES: ClassVar[dict[str, str]] = {
        "stimuli": "stimuli",
        "human_study": "experiment",
        "report": "analysis",
        "power": "analysis",
        "report_options": "analysis",
    }
    """Part -> the stage (``tracktale.<stage>``) that owns it and alone resolves it."""

    def __post_init__(self) -> None:
        if self.reading_modes and self.human_study is None:
            raise ValueError(
                f"paradigm {self.name!r}: reading_modes needs a human study to serve them"
            )
        for part, stage in self.STAGES.items():
            reference = getattr(self, part)
            if reference is None:
                continue
            if ":" not in reference:
                raise ValueError(
                    f"paradigm {self.name!r}: its {part} must be a 'module:attribute' "
                    f"reference, got {reference!r}"
                )
            # A part of tracktale's own belongs to its stage; a paradigm from another package
            # names its own modules.
            inside = reference.startswith("tracktale.")
            if inside and not reference.startswith(f"tracktale.{stage}."):
                raise ValueError(
                    f"paradigm {self.name!r}: its {part} must be a tracktale.{stage} "
                    f"'module:attribute' reference, got {reference!r}"
                )

    def references(self) -> dict[str, str]:
        """Part -> its reference, for the parts the paradigm has."""
        return {part: getattr(self, part) for part in self.STAGES if getattr(self, part)}

    def has(self, part: Part) -> bool:
        """Whether the paradigm declares ``part``."""
        return getattr(self, part) is not None

    def load(self, part: Part) -> Any:
        """The object ``part`` names, imported now (the caller's stage must own it).

        Raises:
            LookupError: If the paradigm does not declare ``part`` (callers check
                :meth:`has` and raise their own domain error).
        """
        reference = getattr(self, part)
        if reference is None:
            raise LookupError(f"paradigm {self.name!r} declares no {part}")
        return pkgutil.resolve_name(reference)
