"""The release of aicompat (pyproject.toml [project] version says the same; a test checks)."""

__version__ = "0.2.0"
