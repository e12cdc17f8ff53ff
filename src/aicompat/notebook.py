"""Jupyter notebooks: the code cells as one Python module, and back.

Cells are joined in order (so an import in cell 1 is known in cell 5). IPython
magics (``%time``, ``%%bash`` cells), shell escapes (``!pip install``) and help
queries (``obj?``) are not Python: their lines become ``pass`` at the same
indent, so line numbers keep pointing at the notebook.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_MAGIC = re.compile(r"^(\s*)(%|!|\?)")
_HELP = re.compile(r"^(\s*)[\w.]+\?\??\s*$")


@dataclass
class NotebookSource:
    code: str  # the joined code cells
    cells: list[tuple[int, int]]  # (cell number, first global line) per code cell, 1-based


class NotebookError(ValueError):
    pass


def _cell_text(cell) -> str:
    src = cell.get("source", "")
    if isinstance(src, list) and all(isinstance(s, str) for s in src):
        return "".join(src)
    if isinstance(src, str):
        return src
    raise NotebookError("not a readable notebook: a code cell's source is not text")


def to_python(data: bytes) -> NotebookSource:
    """Raises NotebookError (an AIC001) for anything that is not a notebook's
    shape: the file comes from anyone, so every field is checked."""
    try:
        nb = json.loads(data.decode("utf-8"))
        cells = nb["cells"]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, IndexError) as exc:  # ValueError: bad JSON
        raise NotebookError(f"not a readable notebook: {exc}") from None
    except RecursionError:
        raise NotebookError("not a readable notebook: nesting too deep") from None
    if not isinstance(cells, list):
        raise NotebookError("not a readable notebook: 'cells' is not a list")
    lines: list[str] = []
    index: list[tuple[int, int]] = []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = _cell_text(cell)
        if text.endswith("\n"):
            text = text[:-1]  # the next cell starts on the next line
        cell_lines = text.split("\n")
        if cell_lines and cell_lines[0].lstrip().startswith("%%"):
            cell_lines = ["pass"] * len(cell_lines)  # a cell magic: the whole cell is another language
        else:
            cell_lines = [_neutral(ln) for ln in cell_lines]
        index.append((number, len(lines) + 1))
        lines.extend(cell_lines)
    return NotebookSource("\n".join(lines) + "\n", index)


def _neutral(line: str) -> str:
    m = _MAGIC.match(line) or _HELP.match(line)
    if m:
        return f"{m.group(1)}pass"
    return line


def locate(src: NotebookSource, global_line: int) -> tuple[int, int]:
    """(cell number, line within the cell) of a line of the joined code."""
    cell, first = src.cells[0] if src.cells else (1, 1)
    for number, start in src.cells:
        if start <= global_line:
            cell, first = number, start
    return cell, global_line - first + 1
