"""The boxes paradigm as one plug-in: where each stage finds its part.

Registered once, in :data:`tracktale.stimuli.registry.PLUGINS`.
"""

from tracktale.plugin import ParadigmPlugin

PLUGIN = ParadigmPlugin(
    name="boxes",
    stimuli="tracktale.stimuli.boxes:PARADIGM",
    human_study="tracktale.experiment.paradigms.boxes:STUDY",
    model_tasks=("explicit", "sequence"),
    report="tracktale.analysis.boxes:SECTIONS",
    power="tracktale.analysis.boxes.power:POWER",
    report_options="tracktale.analysis.boxes.options:BoxesReportOptions",
)
