"""Ready sweep plans for the papers' own models (``tracktale models plan NAME --out FILE``).

Each plan is a YAML file of this package; its ``stimuli`` and ``store`` paths are relative to
the plan file, so a plan written next to the ``sets/`` folder runs as it is once the stimulus
sets named in its header are generated.
"""

from __future__ import annotations

from importlib import resources

from tracktale.errors import TracktaleError


def _summary(text: str) -> str:
    """The first sentence of a plan's header comment (its first paragraph of ``#`` lines)."""
    lines = []
    for line in text.splitlines():
        words = line.removeprefix("#").strip()
        if not line.startswith("#") or not words:
            break
        lines.append(words)
    paragraph = " ".join(lines)
    end = paragraph.find(". ")
    return paragraph[: end + 1] if end >= 0 else paragraph


def _shipped() -> dict[str, str]:
    """Every plan file of this package: its name (hyphens for underscores) -> its summary."""
    found = sorted(
        (path.name.removesuffix(".yaml").replace("_", "-"), path.read_text("utf-8"))
        for path in resources.files(__name__).iterdir()
        if path.name.endswith(".yaml")
    )
    return {name: _summary(text) for name, text in found}


PLANS = _shipped()
"""Plan name -> what it runs (the first sentence of its header), for every shipped plan file."""


def plan_text(name: str) -> str:
    """The YAML of a shipped plan.

    Raises:
        TracktaleError: For a name that is not in :data:`PLANS`.
    """
    if name not in PLANS:
        raise TracktaleError(f"no shipped plan {name!r} (choose from {', '.join(PLANS)})")
    return resources.files(__name__).joinpath(f"{name.replace('-', '_')}.yaml").read_text("utf-8")
