"""The application: the ``tracktale`` command line and the main job (``tracktale run``).

The one layer that imports every stage. It sits above them, not beside the contracts of the
``tracktale/`` folder, which every stage imports and which import no stage
(``tests/test_architecture.py`` checks both directions).
"""
