"""Reading times against language-model surprisal: per-word tables, exclusions, regressions, ΔLL."""
