"""Model scoring: backends, log-probability comparison, generation, sweeps, results store."""
