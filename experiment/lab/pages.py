"""How the lab window splits a long document (consent, information, debrief) into pages.

Pure text work, apart from the window (:mod:`.screens` draws the pages), so that a test or a
tool can tell how many pages a document takes without PsychoPy.
"""

from __future__ import annotations

DOCUMENT_LINES = 24
CHARS_PER_LINE = 88


def paginate(markdown: str, lines_per_page: int = DOCUMENT_LINES) -> list[str]:
    """Split a Markdown document into pages for TextBox2 (headings bold, bullets as dots).

    Blocks (paragraphs, headings, list items) are never split; a page holds as many as fit
    in about ``lines_per_page`` lines of ``CHARS_PER_LINE`` characters.
    """
    blocks: list[tuple[str, bool]] = []  # (text, is a list item)
    current: list[str] = []
    in_item = False

    def close() -> None:
        if current:
            blocks.append((" ".join(current), in_item))
            current.clear()

    for raw in markdown.splitlines():
        line = raw.strip()
        if not line:
            close()
            in_item = False
        elif line.startswith("#"):
            close()
            in_item = False
            blocks.append((f"**{line.lstrip('#').strip()}**", False))
        elif line.startswith("- "):
            close()
            in_item = True
            current.append("\u2022 " + line[2:].removeprefix("[ ] "))
        else:
            if in_item and not raw.startswith(" "):
                close()
                in_item = False
            current.append(line)
    close()
    pages: list[str] = [""]
    used = 0
    previous_item = False
    for text, item in blocks:
        lines = -(-len(text) // CHARS_PER_LINE) + (0 if item and previous_item else 1)
        if pages[-1] and used + lines > lines_per_page:
            pages.append("")
            used = 0
        separator = "\n" if item and previous_item else "\n\n"
        pages[-1] = f"{pages[-1]}{separator}{text}" if pages[-1] else text
        used += lines
        previous_item = item
    return pages
