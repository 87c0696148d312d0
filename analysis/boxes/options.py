"""The boxes paradigm's report options, which its plug-in declares.

The report's command line offers them as ``--boxes-functor`` and ``--boxes-unparsed``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tracktale.analysis.report.options import ParadigmOptions


class BoxesReportOptions(ParadigmOptions):
    """Where the boxes report's scoring follows ours or the authors' code.

    Attributes:
        functor: ``strict`` (ours) or ``any`` (the authors' code).
        unparsed: ``per-state`` (ours) or ``whole-step`` (the authors' code).
    """

    functor: Literal["strict", "any"] = Field(
        "strict",
        description="Boxes: a state needs its own functor (strict) or its argument only (any: "
        "the authors' code).",
    )
    unparsed: Literal["per-state", "whole-step"] = Field(
        "per-state",
        description="Boxes: mark missing or conflicting states one by one, or set the whole "
        "answer aside (whole-step: the authors' code).",
    )

    def describe(self) -> str:
        """The options as the page's options line states them."""
        return f"boxes functor rule {self.functor}, unparsed answers {self.unparsed}"
