"""Jupyter notebooks: the code cells as one Python module, and back.

Cells are joined in order (so an import in cell 1 is known in cell 5). IPython
magics (``%time``, ``%%bash`` cells), shell escapes (``!pip install``) and help
queries (``obj?``) are not Python: their lines become ``pass`` at the same
indent, so line numbers keep pointing at the notebook.
"""

from __future__ import annotations

import bisect
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


# -- positions in the .ipynb file ------------------------------------------------------
# Annotations (GitHub, SARIF) point into the file itself, where a cell's line is a JSON
# string: its file line and column come from one linear scan of the JSON text.

_STRING_REST = re.compile(r'(?:[^"\\]|\\.)*"', re.S)  # a JSON string after its opening quote
_SKIP = re.compile(r"[\s:]+|-?[0-9.eE+-]+|true|false|null")


def _char_offsets(text: str, i: int, end: int) -> list[int]:
    """The raw offset of each decoded character of the JSON string ``text[i:end]``
    (quotes included); a surrogate pair ``\\ud83d\\ude00`` is one character."""
    starts: list[int] = []
    j = i + 1
    while j < end - 1:
        starts.append(j)
        if text[j] != "\\":
            j += 1
        elif text[j + 1] != "u":
            j += 2
        else:
            pair = text[j + 2] in "dD" and text[j + 3] in "89abAB" and text[j + 6:j + 8] == "\\u"
            j += 12 if pair else 6
    return starts


def source_offsets(text: str) -> dict[int, list[int]]:
    """Cell number (1-based, every cell counted, as ``to_python`` numbers them) -> the
    raw offset in ``text`` of each character of that cell's source. Cells whose JSON
    is not shaped as expected are left out (their positions stay unknown)."""
    out: dict[int, list[int]] = {}
    stack: list[list] = []  # per open container: [is_object, key or index, expecting a key]
    i, n = 0, len(text)
    try:
        while i < n:
            c = text[i]
            if c == '"':
                m = _STRING_REST.match(text, i + 1)
                if m is None:
                    return out
                end = m.end()
                top = stack[-1] if stack else None
                if top is not None and top[0] and top[2]:
                    top[1], top[2] = json.loads(text[i:end]), False
                elif (len(stack) in (3, 4) and stack[0][1] == "cells" and not stack[1][0]
                      and stack[2][0] and stack[2][1] == "source" and (len(stack) == 3 or not stack[3][0])):
                    out.setdefault(stack[1][1] + 1, []).extend(_char_offsets(text, i, end))
                i = end
            elif c in "{[":
                stack.append([c == "{", None if c == "{" else 0, c == "{"])
                i += 1
            elif c in "}]":
                stack.pop()
                i += 1
            elif c == ",":
                top = stack[-1]
                if top[0]:
                    top[2] = True
                else:
                    top[1] += 1
                i += 1
            else:
                m = _SKIP.match(text, i)
                i = m.end() if m else i + 1
    except (IndexError, ValueError, TypeError):
        return {}
    return out


def _is_newline(text: str, at: int) -> bool:
    return text.startswith(("\\n", "\\u000a", "\\u000A"), at)


def file_position(text: str, line_starts: list[int], offsets: dict[int, list[int]], cell: int,
                  cell_line: int, column: int) -> tuple[int, int] | None:
    """(line, column), 1-based, in the .ipynb file of ``column`` of line ``cell_line``
    of cell ``cell``; None when it cannot be known."""
    raw = offsets.get(cell)
    if not raw:
        return None
    k, line = 0, 1
    while line < cell_line:
        while k < len(raw) and not _is_newline(text, raw[k]):
            k += 1
        if k >= len(raw):
            return None
        k, line = k + 1, line + 1
    k += column - 1
    if not 0 <= k < len(raw):
        return None
    row = bisect.bisect_right(line_starts, raw[k])
    return row, raw[k] - line_starts[row - 1] + 1


def line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]
