"""Where the shipped data (rules/, version_matrix/, fixtures/demo) lives.

An installed wheel carries it under ``aicompat/_data``; a source checkout
(editable install, tests) reads the top-level folders of the repo.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent  # the aicompat package


def data_dir(name: str) -> Path:
    """Return the directory for ``rules``, ``version_matrix`` or ``fixtures/demo``."""
    packaged = _PKG / "_data" / name
    if packaged.is_dir():
        return packaged
    checkout = _PKG.parent.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"aicompat data folder {name!r} is missing (looked in {packaged} and {checkout})")
