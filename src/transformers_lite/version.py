"""The package version (one place, read by the CLI and the run metadata)."""

__version__ = "0.3.0"
