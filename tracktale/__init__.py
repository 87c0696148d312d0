"""tracktale: the same state-tracking experiment on people and on language models.

The top-level folders of the repository are the stages of the pipeline and are mapped onto this
namespace: ``tracktale.stimuli``, ``tracktale.experiment``, ``tracktale.models``,
``tracktale.analysis`` and ``tracktale.ethics``, and the application above them (``app/``:
``tracktale.app``, the CLI and the main job). This package holds only the contracts every stage
shares (``tracktale.item``, ``tracktale.stimulus_set``, ...) and imports no stage.
"""

__version__ = "0.1.0"
