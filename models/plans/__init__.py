"""Ready sweep plans for the papers' own models (``tracktale models plan NAME --out FILE``).

Each plan is a YAML file of this package; its ``stimuli`` and ``store`` paths are relative to
the plan file, so a plan written next to the ``sets/`` folder runs as it is once the stimulus
sets named in its header are generated.
"""

from __future__ import annotations

from importlib import resources

from tracktale.errors import TracktaleError

PLANS = {
    "arithmetic-table1": "the arithmetic paper's Table 1: its 15 models, greedy, 32,768 tokens, "
    "reruns at full context",
    "boxes-chatgpt": "the boxes paper's models (ChatGPT, Vicuna-13B) through the OpenAI-compatible "
    "backend, sampled at temperature 1 as the paper ran them",
    "boxes-chatgpt-greedy": "the same models decoded greedily (the deterministic variant)",
}
"""Plan name -> what it runs."""


def plan_text(name: str) -> str:
    """The YAML of a shipped plan.

    Raises:
        TracktaleError: For a name that is not in :data:`PLANS`.
    """
    if name not in PLANS:
        raise TracktaleError(f"no shipped plan {name!r} (choose from {', '.join(PLANS)})")
    return resources.files(__name__).joinpath(f"{name.replace('-', '_')}.yaml").read_text("utf-8")
