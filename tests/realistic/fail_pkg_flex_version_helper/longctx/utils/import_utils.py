"""Version checks for optional torch features."""
from functools import lru_cache

import torch
from packaging import version


@lru_cache
def is_torch_greater_or_equal(library_version: str) -> bool:
    # base_version drops local tags such as +cu124 and dev/rc suffixes
    return version.parse(version.parse(torch.__version__).base_version) >= version.parse(library_version)
