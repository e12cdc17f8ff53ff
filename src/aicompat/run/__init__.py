"""Running aicompat: settings from config and declared pins, the linter for one file, workers,
the cache, and the Python API."""
