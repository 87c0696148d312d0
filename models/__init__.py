"""Model scoring: backends, log-probability comparison, generation, sweeps, results store.

- :mod:`~tracktale.models.registry`: backend name -> :class:`~tracktale.scorer.Scorer`
  (``hf``: :mod:`~tracktale.models.hf`, any transformers causal LM).
- :mod:`~tracktale.models.tasks`: items -> requests -> result rows (implicit, explicit,
  sequence), for any scorer.
- :mod:`~tracktale.models.runner`: a stimulus set x revisions x tasks into a resumable store.
- :mod:`~tracktale.models.store`: the Parquet results store (no torch; the analysis reads it).
- :mod:`~tracktale.models.revisions` and :mod:`~tracktale.models.hub`: checkpoint presets,
  revision resolution and listing.
- :mod:`~tracktale.models.testing`: random-init models of the real architectures, offline.

Nothing here imports torch until a backend is loaded.
"""
