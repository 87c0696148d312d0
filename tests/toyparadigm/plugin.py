"""The toy paradigm's plug-in: where each stage finds its part (see the package docstring)."""

from tracktale.plugin import ParadigmPlugin

PLUGIN = ParadigmPlugin(
    name="toy",
    stimuli="tests.toyparadigm.stimuli:PARADIGM",
    human_study="tests.toyparadigm.study:STUDY",
    model_tasks=("implicit",),
    report="tests.toyparadigm.report:SECTIONS",
)
