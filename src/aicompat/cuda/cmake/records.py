"""What reading a CMake project yields (cmake_eval.py): arch settings for AIC302,
targets with their sources, archs and options, per-source options; and the
shape of a value, a few alternatives."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

MAX_ALTS = 8  # alternatives a value keeps before it becomes unknown

Alts = tuple  # tuple[str, ...]: the alternative values of a variable (CMake list strings)


@dataclass
class Setting:
    """An arch setting a CMake file makes, for AIC302."""

    path: Path
    line: int
    col: int
    what: str  # "CMAKE_CUDA_ARCHITECTURES" | "CUDA_ARCHITECTURES" | "CMAKE_CUDA_FLAGS" | "target_compile_options"
    values: list[str]  # the list items (arch list) or flags
    certain: bool  # reached on every path of the build's configuration
    subject: str = ""  # the targets it sets (CUDA_ARCHITECTURES, target_compile_options); "" for a variable


@dataclass
class Recorded:
    """Options a source or target gets: alternatives of flag lists, where they were set."""

    alts: tuple[tuple[str, ...], ...]
    path: Path
    line: int


@dataclass
class Target:
    name: str
    sources: list[Path] = field(default_factory=list)
    archs: Alts | None = None  # CUDA_ARCHITECTURES (None: not set)
    options: list[Recorded] = field(default_factory=list)
    scope: dict | None = None  # the directory scope (its final CMAKE_CUDA_FLAGS apply)
    path: Path | None = None
    line: int = 0


@dataclass
class Model:
    settings: list[Setting] = field(default_factory=list)
    targets: dict[str, Target] = field(default_factory=dict)
    source_options: dict[Path, list[Recorded]] = field(default_factory=dict)
    reads: list[str] = field(default_factory=list)
    fleet_used: bool = False
    skipped: dict[Path, tuple[Path, int]] = field(default_factory=dict)  # sources only in branches not taken
    options: dict[str, str] = field(default_factory=dict)  # option() name -> its default ("ON"/"OFF")
    tested: list[str] = field(default_factory=list)  # options an if()/elseif() tests, first test first
    steps: int = 0  # commands run (the cost of one evaluation)
    complete: bool = True  # False: stopped at the step or file bound, commands past it unread
