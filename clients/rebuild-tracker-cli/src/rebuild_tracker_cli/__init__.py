"""Rebuild Tracker's command-line client: a few API calls whose exit codes a pipeline acts on."""

__version__ = "0.1.0"
