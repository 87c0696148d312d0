"""Simulated participants: whole sessions through the real HTTP API."""
