"""The items paradigm as one plug-in: where each stage finds its part.

Registered once, in :data:`tracktale.stimuli.registry.PLUGINS`.
"""

from tracktale.plugin import ParadigmPlugin

PLUGIN = ParadigmPlugin(
    name="items",
    stimuli="tracktale.stimuli.items:PARADIGM",
    human_study="tracktale.experiment.paradigms.items:STUDY",
    model_tasks=("implicit", "explicit", "sequence"),
    reading_modes=("self_paced", "maze"),
    report="tracktale.analysis.items:SECTIONS",
)
