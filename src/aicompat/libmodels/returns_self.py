"""Library methods that return the object they are called on
(version_matrix/returns_self.toml), read once for the value model."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..base.data import data_dir
from ..base.toml_compat import tomllib


@lru_cache(maxsize=4)
def methods(owner: str, directory: str | None = None) -> frozenset[str]:
    """The methods of the library class ``owner`` ("torch.nn.Module") that return self."""
    path = Path(directory or data_dir("version_matrix")) / "returns_self.toml"
    with open(path, "rb") as fh:
        doc = tomllib.load(fh)
    return frozenset(doc.get("returns_self", {}).get(owner, {}).get("methods", ()))
