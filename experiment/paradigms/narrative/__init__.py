"""The narrative entity-tracking study (the source paper's procedure, our list design)."""
