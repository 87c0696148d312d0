"""Write docs/cli.md, the reference of every ``tracktale`` command, from the commands' own help.

Usage: ``python scripts/cli_reference.py`` (rewrite docs/cli.md) or ``--check`` (exit 1 when it
is not current). tests/app/test_cli_reference.py fails when docs/cli.md is stale.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import click

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO / "docs" / "cli.md"
WIDTH = 100
"""Help is wrapped at this width whatever the terminal, so the file is the same everywhere."""

HEADER = """\
# Command-line reference

Every `tracktale` command's `--help`, generated from the commands themselves by
`python scripts/cli_reference.py`; do not edit it by hand (the tests fail when it is stale:
run that command after changing a command or its help). The README explains what the commands
are for; this page lists what each one takes.
"""


def commands(
    command: click.Command, name: str = "tracktale", parent: click.Context | None = None
) -> Iterator[tuple[str, str]]:
    """Each command's full name and help text, the group before its commands, by name."""
    settings = {**command.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(command, info_name=name, parent=parent, **settings)
    yield ctx.command_path, command.get_help(ctx)
    if isinstance(command, click.Group):
        for child_name in command.list_commands(ctx):
            child = command.get_command(ctx, child_name)
            if child is not None and not child.hidden:
                yield from commands(child, child_name, ctx)


def anchor(path: str) -> str:
    """The anchor GitHub gives the heading of ``path`` (a code span of words)."""
    return path.replace(" ", "-").lower()


def render() -> str:
    """The whole reference as Markdown."""
    from tracktale.app.cli import cli

    found = list(commands(cli))
    lines = [HEADER, "## Commands", ""]
    for path, _ in found:
        depth = path.count(" ")
        lines.append(f"{'  ' * depth}- [`{path}`](#{anchor(path)})")
    for path, text in found:
        lines += ["", f"## `{path}`", "", "```text", text.rstrip(), "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Write the reference, or with ``--check`` say whether the written one is current."""
    text = render()
    if argv == ["--check"]:
        current = REFERENCE.is_file() and REFERENCE.read_text(encoding="utf-8") == text
        if not current:
            stale = REFERENCE.relative_to(REPO)
            print(f"{stale} is not current: run python scripts/cli_reference.py")
        return 0 if current else 1
    if argv:
        print("usage: python scripts/cli_reference.py [--check]", file=sys.stderr)
        return 2
    from tracktale.atomic import atomic_write

    REFERENCE.parent.mkdir(exist_ok=True)
    with atomic_write(REFERENCE) as handle:
        handle.write(text)
    print(f"wrote {REFERENCE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
