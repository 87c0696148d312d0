"""``tracktale ethics``: the study's consent, information, debrief and data plan.

In the experiment stage, not in ethics/, because it fills the documents from a study file
(:func:`tracktale.experiment.study.config.load_study`); the ethics stage itself imports no stage
above it.
"""

from __future__ import annotations

from pathlib import Path

import click

from tracktale.ethics import DOCUMENTS, load_document, write_documents


def _study_details(study_file: Path | None):
    from tracktale.experiment.study.config import load_study

    config = load_study(study_file)
    timing = {
        "reading_seconds": config.timing.reading_ms / 1000,
        "response_seconds": config.timing.response_ms / 1000,
    }
    return config.ethics, timing


STUDY_OPTION = click.option(
    "--study",
    "study_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Study file whose ethics: section fills the documents [default: placeholders].",
)


@click.group()
def ethics() -> None:
    """Show or write the ethics documents, filled in for a study."""


@ethics.command()
@click.argument("name", type=click.Choice(DOCUMENTS))
@STUDY_OPTION
def show(name: str, study_file: Path | None) -> None:
    """Print one document (Markdown) filled in for the study."""
    details, timing = _study_details(study_file)
    click.echo(load_document(name, details, timing).markdown)


@ethics.command()
@STUDY_OPTION
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the documents into (Markdown and HTML).",
)
def render(study_file: Path | None, out_dir: Path) -> None:
    """Write every document, filled in, for an ethics-board application."""
    details, timing = _study_details(study_file)
    for path in write_documents(out_dir, details, timing):
        click.echo(f"wrote {path}")
    unfilled = details.unfilled()
    if unfilled:
        click.echo(f"warning: placeholders left: {', '.join(unfilled)}", err=True)
