"""Stimuli: paradigms, lexicons, world-state simulators and stimulus sets on disk."""
