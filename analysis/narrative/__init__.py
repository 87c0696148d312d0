"""Analysis of the narrative paradigm: the entity-tracking paper's tables, figures and tests.

The report sections of the paradigm are declared here, in the order the page shows them
(:data:`SECTIONS`; :mod:`tracktale.analysis.report.build` imports them when a report has narrative
rows): the human participants (:mod:`.sections`, with the inference of
:mod:`.human_inference`), the models as case studies (:mod:`.casestudies`, :mod:`.figures`),
people and models side by side (:mod:`.side_by_side`), the template manipulation check
(:mod:`.manipulation`) and the scorecard against the paper's published numbers
(:mod:`.scorecard`). The statistics they use (GLMs, mixed models, permutation tests,
intervals) are shared by every paradigm and stay in :mod:`tracktale.analysis`.
"""

SECTIONS = (
    "tracktale.analysis.narrative.sections:human_section",
    "tracktale.analysis.narrative.sections:model_section",
    "tracktale.analysis.narrative.side_by_side:side_by_side_section",
    "tracktale.analysis.narrative.sections:manipulation_section",
    "tracktale.analysis.narrative.scorecard:scorecard_section",
)
"""The paradigm's report sections (``module:function``), in page order."""
