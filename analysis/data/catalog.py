"""What the plots need to know about a model: family, size, base or instruct, training step.

Known models are listed in :data:`KNOWN_MODELS` (nominal sizes as the model cards give them).
Anything else is described from its id (a size like ``1.4b`` or ``7B``, ``Instruct`` in the
name) and from the results rows (``n_parameters``, the revision). The actual parameter count
recorded by the scoring engine wins over the nominal one for the log axis; the nominal label is
what the legends show.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

FAMILIES = ("Pythia", "OLMo 2", "other")


@dataclass(frozen=True)
class ModelDescription:
    """How a model appears in tables and figures.

    Attributes:
        model_id: The hub id.
        family: ``Pythia``, ``OLMo 2`` or ``other``.
        label: Short legend label (``"Pythia 1.4B"``, ``"OLMo 2 7B Instruct"``).
        size_label: Nominal size (``"1.4B"``), or ``""`` when unknown.
        nominal_parameters: The nominal size in parameters (``nan`` when unknown).
        instruct: Whether it is instruction-tuned.
        reference: A large contemporary model used as a ceiling reference (Figure 3).
    """

    model_id: str
    family: str
    label: str
    size_label: str
    nominal_parameters: float
    instruct: bool
    reference: bool = False


def _pythia(size: str) -> tuple[str, tuple[str, str, bool, bool]]:
    return f"EleutherAI/pythia-{size}", ("Pythia", size.upper(), False, False)


def _olmo(release: str, size: str, instruct: bool) -> tuple[str, tuple[str, str, bool, bool]]:
    suffix = "-Instruct" if instruct else ""
    return f"allenai/OLMo-2-{release}-{size}{suffix}", ("OLMo 2", size, instruct, False)


KNOWN_MODELS: dict[str, tuple[str, str, bool, bool]] = dict(
    [
        *(_pythia(s) for s in ("70m", "160m", "410m", "1b", "1.4b", "2.8b", "6.9b", "12b")),
        *(
            _olmo(release, size, instruct)
            for release, size in (("0425", "1B"), ("1124", "7B"), ("1124", "13B"), ("0325", "32B"))
            for instruct in (False, True)
        ),
        ("meta-llama/Llama-3.3-70B-Instruct", ("other", "70B", True, True)),
        ("Qwen/Qwen2.5-72B-Instruct", ("other", "72B", True, True)),
        # Ours, not the paper's: the embedded default model (tracktale.models.gguf) is the
        # reference of Figure 3 in the main job, where no large model can be loaded offline.
        ("smollm2-135m-instruct", ("other", "135M", True, True)),
    ]
)
"""model_id -> (family, nominal size, instruct, reference): the source paper's models (and
the embedded default model)."""
LABELS = {"smollm2-135m-instruct": "SmolLM2 135M Instruct (Q4_1)"}
"""Legend labels of models whose id makes a poor one."""

_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)([mMbB])(?![a-zA-Z])")
_STEP = re.compile(r"step(\d+)")
_TOKENS = re.compile(r"tokens(\d+)([BT])")


def describe_model(model_id: str) -> ModelDescription:
    """The family, size and variant of ``model_id`` (known models first, then its name)."""
    known = KNOWN_MODELS.get(model_id)
    name = model_id.rsplit("/", 1)[-1]
    if known:
        family, size, instruct, reference = known
    else:
        lowered = name.lower()
        family = "Pythia" if "pythia" in lowered else "OLMo 2" if "olmo-2" in lowered else "other"
        match = _SIZE.search(name.replace("-", " ").replace("_", " "))
        size = f"{match.group(1)}{match.group(2).upper()}" if match else ""
        instruct = bool(re.search(r"instruct|chat|-it\b|sft|dpo", lowered))
        reference = False
    label = name if family == "other" else f"{family} {size}".strip()
    if instruct and family != "other":
        label += " Instruct"
    label = LABELS.get(model_id, label)
    return ModelDescription(
        model_id=model_id,
        family=family,
        label=label,
        size_label=size,
        nominal_parameters=parse_size(size),
        instruct=instruct,
        reference=reference,
    )


def parse_size(size: str) -> float:
    """``"1.4B"`` -> 1.4e9, ``"70M"`` -> 7e7; ``nan`` for anything else."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([MB])", size.upper())
    if not match:
        return math.nan
    return float(match.group(1)) * (1e6 if match.group(2) == "M" else 1e9)


def training_step(revision: str | None) -> float:
    """The training step named in a checkpoint revision, ``nan`` for the final model.

    Pythia names checkpoints ``step1000``; OLMo 2 ``stage1-step140000-tokens294B``.
    """
    match = _STEP.search(revision or "")
    return float(match.group(1)) if match else math.nan


def training_tokens(revision: str | None) -> float:
    """Training tokens named in an OLMo revision (``tokens294B`` -> 2.94e11), else ``nan``."""
    match = _TOKENS.search(revision or "")
    if not match:
        return math.nan
    return float(match.group(1)) * (1e9 if match.group(2) == "B" else 1e12)
