"""The arithmetic paradigm as one plug-in: where each stage finds its part.

Registered once, in :data:`tracktale.stimuli.registry.PLUGINS`.
"""

from tracktale.plugin import ParadigmPlugin

PLUGIN = ParadigmPlugin(
    name="arithmetic",
    stimuli="tracktale.stimuli.arithmetic:PARADIGM",
    human_study="tracktale.experiment.paradigms.arithmetic:STUDY",
    model_tasks=("explicit", "sequence"),
    report="tracktale.analysis.arithmetic:SECTIONS",
    power="tracktale.analysis.arithmetic.power:POWER",
    report_options="tracktale.analysis.arithmetic.options:ArithmeticReportOptions",
)
