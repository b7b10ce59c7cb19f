"""The package's version, in a module of its own so that every layer can name it in what it
records without importing the package's `__init__` (the public API, on top of every layer)."""

__version__ = "0.1.0"
