"""Model scoring: backends, log-probability comparison, generation, sweeps, results store.

- :mod:`~tracktale.models.registry`: backend name -> :class:`~tracktale.scorer.Scorer`
  (``hf``: :mod:`~tracktale.models.hf`, any transformers causal LM, across GPUs with
  :mod:`~tracktale.models.devices`; ``openai``: :mod:`~tracktale.models.openai`, an
  OpenAI-compatible chat endpoint, for generation).
- :mod:`~tracktale.models.tasks`: the task registry, items -> requests -> result rows
  (implicit, explicit in :mod:`~tracktale.models.explicit`, sequence), for any scorer.
- :mod:`~tracktale.models.runner`: a stimulus set x revisions x tasks into a resumable store.
- :mod:`~tracktale.models.sweep`: plans (:mod:`~tracktale.models.plan`) of models x revisions x
  tasks x stimulus sets, one job per model revision, run here or on SLURM through submitit
  (:mod:`~tracktale.models.scheduler`).
- :mod:`~tracktale.models.store`: the Parquet results store (no torch; the analysis reads it).
- :mod:`~tracktale.models.revisions` and :mod:`~tracktale.models.hub`: checkpoint presets,
  revision resolution and listing.
- :mod:`~tracktale.models.testing`: random-init models of the real architectures, offline.

Nothing here imports torch until a backend is loaded.
"""
