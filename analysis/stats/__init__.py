"""Statistical models: proportions and intervals, GLMs, mixed models, tests."""
