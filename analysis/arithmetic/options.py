"""The arithmetic paradigm's report options, which its plug-in declares.

The report's command line offers them as ``--arithmetic-interval``, ``--arithmetic-reference``
and ``--arithmetic-first-answer``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tracktale.analysis.report.options import ParadigmOptions


class ArithmeticReportOptions(ParadigmOptions):
    """Which intervals, reference and first-answer rule the arithmetic tables use.

    Attributes:
        interval: ``wilson`` (ours) or the paper's percentile ``bootstrap`` over items (which
            collapses at 0/n and n/n).
        reference: ``paper`` (the paper's executor) or ``ieee`` (ours).
        first_answer: ``span`` (the first extracted span) or ``numeric``.
    """

    interval: Literal["wilson", "bootstrap"] = Field(
        "wilson",
        description="Intervals of the arithmetic paradigm's rates (bootstrap: the paper's "
        "percentile bootstrap over items, which collapses to [1, 1] at 20/20).",
    )
    reference: Literal["paper", "ieee"] = Field(
        "paper",
        description="Arithmetic tables score against the paper's executor (a step that raises "
        "is skipped) or ours (IEEE inf/nan); both are always reported side by side.",
    )
    first_answer: Literal["span", "numeric"] = Field(
        "span",
        description="Arithmetic FAA: the first extracted <answer> span (the paper's words) or "
        "the first one that is a number.",
    )

    def describe(self) -> str:
        """The options as the page's options line states them."""
        return (
            f"arithmetic reference {self.reference} (first answer: {self.first_answer}, "
            f"intervals {self.interval})"
        )
