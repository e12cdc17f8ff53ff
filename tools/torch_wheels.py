"""Torch wheels for the generators of version_matrix/inductor_options.toml and
compile.toml: find them on disk or download them with pip, and read their
Python sources as text (a wheel is a zip; torch is never imported).

The macOS arm64 wheels are the smallest that hold every Python source; from
torch 2.12 they need macOS 14 and are built for Python 3.12 and up.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from packaging.version import Version

# The 2.X.0 releases both tables cover (version_matrix/releases.toml has the rest).
RELEASES = tuple(f"2.{minor}.0" for minor in range(16))


def platform_args(version: str) -> list[str]:
    if Version(version) >= Version("2.12"):
        return ["--platform", "macosx_14_0_arm64", "--python-version", "3.12"]
    return ["--platform", "macosx_11_0_arm64", "--python-version", "3.11"]


def wheel_version(path: Path) -> str:
    """torch-2.10.0-2-cp311-none-macosx_11_0_arm64.whl -> 2.10.0 (the 2 is a build tag)."""
    return path.name.split("-")[1]


def find_wheel(version: str, directory: Path) -> Path | None:
    """The macOS arm64 wheel of ``torch==version`` in ``directory``, or None."""
    pattern = re.compile(rf"torch-{re.escape(version)}-(\d+-)?cp\d+-(cp\d+|none)-macosx_\d+_\d+_arm64\.whl")
    found = sorted(p for p in directory.glob(f"torch-{version}-*.whl") if pattern.fullmatch(p.name))
    return found[0] if found else None


def download(version: str, dest: Path) -> Path:
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull)
    subprocess.run([sys.executable, "-m", "pip", "download", f"torch=={version}", "--no-deps",
                    "--only-binary=:all:", *platform_args(version), "-d", str(dest), "-q"], check=True, env=env)
    found = find_wheel(version, dest)
    if found is None:
        raise SystemExit(f"pip did not leave a torch {version} macOS arm64 wheel in {dest}")
    return found


def wheels_for(versions, wheel_dir: Path, fetch: bool) -> list[Path]:
    """One wheel per release: from ``wheel_dir``, downloaded into it when ``fetch``."""
    out = []
    for v in versions:
        w = find_wheel(v, wheel_dir)
        if w is None:
            if not fetch:
                raise SystemExit(f"no torch {v} macOS arm64 wheel in {wheel_dir} (pass --download to fetch it)")
            wheel_dir.mkdir(parents=True, exist_ok=True)
            w = download(v, wheel_dir)
        out.append(w)
    return out


class Wheel:
    """The Python sources of one wheel, read on demand."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.name
        self.version = wheel_version(path)
        self._zip = zipfile.ZipFile(path)
        self.names = set(self._zip.namelist())

    def has(self, member: str) -> bool:
        return member in self.names

    def text(self, member: str) -> str:
        return self._zip.read(member).decode("utf-8")

    def close(self) -> None:
        self._zip.close()

    def __enter__(self) -> "Wheel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def q(s: str) -> str:
    """A TOML basic string."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def q_list(items) -> str:
    return "[" + ", ".join(q(s) for s in items) + "]"
