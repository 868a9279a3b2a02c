"""The package version, in a module of its own so the lowest layers (the cache) can read it."""

__version__ = "0.1.0"
