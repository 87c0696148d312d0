"""Analysis: tidy trial tables, exclusions, GLMs and mixed models, figures, reports, power."""
