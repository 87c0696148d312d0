"""Write docs/reference/design-yaml.md, every key of the item-table design file, from its models.

Usage: ``python scripts/design_reference.py`` (rewrite the page) or ``--check`` (exit 1 when it
is not current). tests/stimuli/test_items_design.py fails when the page is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "reference" / "design-yaml.md"


def main(argv: list[str]) -> int:
    """Write the page, or with ``--check`` say whether it is current."""
    from tracktale.stimuli.items.reference import reference_markdown

    text = reference_markdown()
    if "--check" in argv:
        current = PAGE.is_file() and PAGE.read_text(encoding="utf-8") == text
        if not current:
            print(f"{PAGE} is stale: run python scripts/design_reference.py", file=sys.stderr)
        return 0 if current else 1
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
