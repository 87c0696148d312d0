"""The narrative paradigm as one plug-in: where each stage finds its part.

Registered once, in :data:`tracktale.stimuli.registry.PLUGINS`.
"""

from tracktale.plugin import ParadigmPlugin

PLUGIN = ParadigmPlugin(
    name="narrative",
    stimuli="tracktale.stimuli.narrative:PARADIGM",
    human_study="tracktale.experiment.paradigms.narrative.study:STUDY",
    model_tasks=("implicit", "explicit", "sequence"),
    reading_modes=("self_paced", "maze"),
    report="tracktale.analysis.narrative:SECTIONS",
)
