"""What leaves the study for the analysis: exports and per-participant accuracy."""
