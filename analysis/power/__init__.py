"""Simulation studies: simulated participants, power and null calibration."""
