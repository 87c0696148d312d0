"""The analysis's data: the tidy trial table, the model catalogue and the exclusions."""
