"""The 15 models of the arithmetic paper's Table 1: abbreviations, sizes, scale groups, hub ids.

The paper names each model (``DeepSeek-R1-Distill-Qwen-1.5B``, ``Olmo-3-7B-Think``, ...) and
gives no hub ids; the ids here are our mapping of those names to the Hugging Face hub, checked
against the names only (no network where this was written). Figures and tables label a model
with the paper's abbreviation (``DS-1.5``) when its id (without a revision) is listed here.
The shipped sweep plan (``tracktale models plan arithmetic-table1``) lists the same ids.
"""

from __future__ import annotations

from dataclasses import dataclass

SCALES = (
    "small (<4B)",
    "mid-scale (4B-8B)",
    "large (14B-18B)",
    "very large (20B-30B)",
    "frontier-scale (>100B)",
)
"""The paper's parameter-scale groups, in its order."""


@dataclass(frozen=True)
class PaperModel:
    """One row of the paper's Table 1.

    Attributes:
        abbreviation: The paper's short name (``DS-1.5``).
        name: The model as the paper names it.
        hub_id: Our reading of it as a Hugging Face hub id.
        parameters: The paper's parameter count (``1.5B``).
        scale: Its scale group (one of :data:`SCALES`).
    """

    abbreviation: str
    name: str
    hub_id: str
    parameters: str
    scale: str


def _group(scale: int, *models: tuple[str, str, str, str]) -> list[PaperModel]:
    return [PaperModel(*model, SCALES[scale]) for model in models]


PAPER_MODELS: tuple[PaperModel, ...] = (
    *_group(
        0,
        ("DS-1.5", "DeepSeek-R1-Distill-Qwen-1.5B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
         "1.5B"),
        ("QW-4", "Qwen3-4B-Thinking-2507", "Qwen/Qwen3-4B-Thinking-2507", "4B"),
    ),
    *_group(
        1,
        ("OL-7", "Olmo-3-7B-Think", "allenai/Olmo-3-7B-Think", "7B"),
        ("MI-7", "Mistral-7B-Instruct-v0.3", "mistralai/Mistral-7B-Instruct-v0.3", "7B"),
        ("DS-7", "DeepSeek-R1-Distill-Qwen-7B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "7B"),
        ("OT-7", "OpenThinker2-7B", "open-thoughts/OpenThinker2-7B", "7B"),
    ),
    *_group(
        2,
        ("MN-14", "Ministral-3-14B-Reasoning-2512", "mistralai/Ministral-3-14B-Reasoning-2512",
         "14B"),
        ("DS-14", "DeepSeek-R1-Distill-Qwen-14B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B",
         "14B"),
        ("QW-14", "Qwen3-14B", "Qwen/Qwen3-14B", "14B"),
    ),
    *_group(
        3,
        ("MG-24", "Magistral-Small-2509", "mistralai/Magistral-Small-2509", "24B"),
        ("SV-30", "Sarvam-30B", "sarvamai/sarvam-30b", "30B"),
        ("NM-30", "NVIDIA-Nemotron-3-Nano-30B", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
         "30B"),
    ),
    *_group(
        4,
        ("OA-120", "OpenAI-OSS", "openai/gpt-oss-120b", "120B"),
        ("DS-685", "DeepSeek-V3.2", "deepseek-ai/DeepSeek-V3.2", "685B"),
        ("KK-1T", "Kimi-K2.5", "moonshotai/Kimi-K2.5", "1.1T"),
    ),
)  # fmt: skip
"""The paper's Table 1, in its order."""

BY_HUB_ID = {model.hub_id: model for model in PAPER_MODELS}


def paper_model(model: str) -> PaperModel | None:
    """The Table 1 entry of a model label (``model_id`` or ``model_id@revision``), if any."""
    return BY_HUB_ID.get(model.split("@", 1)[0])


def short_label(model: str) -> str:
    """The paper's abbreviation for its models, the label itself for any other."""
    known = paper_model(model)
    if known is None:
        from tracktale.analysis.data.catalog import describe_model

        name, _, revision = model.partition("@")
        return describe_model(name).label + (f"@{revision}" if revision else "")
    revision = model.split("@", 1)[1] if "@" in model else ""
    return known.abbreviation + (f"@{revision}" if revision else "")
