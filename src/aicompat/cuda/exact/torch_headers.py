"""torch's and Python's include folders in aicompat's own environment, for sources that
``load_inline`` compiles with torch's headers (found without importing torch)."""

from __future__ import annotations

import sysconfig
from importlib.util import find_spec
from pathlib import Path


def torch_include_dirs() -> tuple[str, ...]:
    """torch's and Python's include folders in aicompat's own environment (cpp_extension.include_paths),
    found without importing torch; () when torch is not installed."""
    try:
        spec = find_spec("torch")
    except (ImportError, ValueError):
        return ()
    if spec is None or not spec.submodule_search_locations:
        return ()
    inc = Path(list(spec.submodule_search_locations)[0]) / "include"
    dirs = [inc, inc / "torch" / "csrc" / "api" / "include"]
    py = sysconfig.get_paths().get("include")
    if py:
        dirs.append(Path(py))
    return tuple(str(d) for d in dirs if d.is_dir())
