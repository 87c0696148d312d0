"""tracktale: the same state-tracking experiment on people and on language models.

The top-level folders of the repository are the stages of the pipeline and are mapped onto this
namespace: ``tracktale.stimuli``, ``tracktale.experiment``, ``tracktale.models``,
``tracktale.analysis`` and ``tracktale.ethics``. This package holds only the CLI and the
contracts every stage shares (``tracktale.item``, ``tracktale.stimulus_set``, ...).
"""

__version__ = "0.1.0"
