"""Which optional packages and versions this environment has."""
import importlib.metadata
from functools import lru_cache

from packaging import version


@lru_cache
def is_torch_greater_or_equal(library_version: str, accept_dev: bool = False) -> bool:
    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return False
    if accept_dev:
        return version.parse(version.parse(torch_version).base_version) >= version.parse(library_version)
    return version.parse(torch_version) >= version.parse(library_version)
