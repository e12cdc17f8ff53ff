"""Counted run-level notes: a rule says one thing of many files ("12 CUDA files have no
build aicompat can see"), once per run. Each file leaves one item (``counted``); the
notes of a run's files, from this process, from workers or from the cache alike, are
folded into one note per summary (``fold``), with the items named or only counted.

An item is a plain string, so it travels wherever notes do (FileResult.notes, the cache).
"""

from __future__ import annotations

import re

_MARK = "\u2063"  # INVISIBLE SEPARATOR: never in a rule's own text
_ALT = re.compile(r"\{([^{}|]*)\|([^{}|]*)\}")


def counted(summary: str, item: str) -> str:
    """One item of the counted note ``summary``: ``{n}`` is the count, ``{one|many}`` the
    words that depend on it."""
    return f"{_MARK}{summary}{_MARK}{item}"


def is_counted(note: str) -> bool:
    """Is ``note`` one file's item of a counted note (folded into the run's note later)?"""
    return note.startswith(_MARK) and note.count(_MARK) == 2


def fold(notes: list[str], named: bool) -> list[str]:
    """``notes`` with the items of each counted note replaced by that note, where the first
    item was; ``named``: the items follow it, else it says -v names them."""
    items: dict[str, list[str]] = {}
    out: list[str] = []
    for n in notes:
        if not n.startswith(_MARK) or n.count(_MARK) != 2:
            out.append(n)
            continue
        _, summary, item = n.split(_MARK)
        if summary not in items:
            items[summary] = []
            out.append(n)
        if item not in items[summary]:
            items[summary].append(item)
    done = []
    for n in out:
        if not n.startswith(_MARK):
            done.append(n)
            continue
        summary = n.split(_MARK)[1]
        got = items[summary]
        text = _ALT.sub(lambda m: m.group(1) if len(got) == 1 else m.group(2), summary).replace("{n}", str(len(got)))
        done.append(f"{text}: {', '.join(got)}" if named else f"{text} (-v names {'it' if len(got) == 1 else 'them'})")
    return done
