"""The shell commands of a Makefile's recipes, with the file's own variables expanded.

GNU Make manual, 3.7 "How make Reads a Makefile" and 6 "How to Use Variables":
``NAME = value`` (recursive), ``:=``/``::=`` (simple), ``?=`` (if unset) and ``+=``
(append, with a space); recipe lines start with a tab, and a leading ``@``/``-``/``+``
is Make's, not the shell's. ``$(NAME)``/``${NAME}`` of a variable the file does not set
stays as it is, so the shell reader sees a command substitution: an unknown word.
"""

from __future__ import annotations

import re

from .shell import Word, commands

_ASSIGN = re.compile(r"^(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(\+=|\?=|::=|:=|=)\s*(.*)$")
_REF = re.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_.-]*)[)}]")
MAX_DEPTH = 10


# Automatic variables name the rule's files (GNU Make manual 10.5.3), never flags.
_AUTOMATIC = re.compile(r"\$[@<^?*+|]|\$[({][@<^?*+|][DF]?[)}]")


_RULE = re.compile(r"^([^\t#=:][^#=:]*?)\s*::?(?!=)")


def _expand(text: str, env: dict[str, str], depth: int = 0, target: str = "FILE") -> str:
    if depth > MAX_DEPTH:
        return text
    if depth == 0:
        text = re.sub(r"\$@|\$[({]@[)}]", target.replace("\\", "/"), text)
        text = _AUTOMATIC.sub("FILE", text)
    return _REF.sub(lambda m: _expand(env[m.group(1)], env, depth + 1) if m.group(1) in env else m.group(0), text)


def recipe_commands(text: str) -> list[list[Word]]:
    """Every simple command of every recipe, in file order, on its own line numbers."""
    env: dict[str, str] = {}
    shell_lines: list[str] = []
    cut: dict[int, int] = {}  # line -> characters of Make's recipe prefix removed (tab, @, -)
    target = "FILE"  # the rule's first target, for $@ (a pattern keeps its %)
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        # A backslash-newline continues a variable or a recipe line.
        block = [line]
        while block[-1].endswith("\\") and i + len(block) < len(lines):
            block.append(lines[i + len(block)])
        if line.startswith("\t"):
            first = re.sub(r"^\t[@+-]*\s*", "", block[0])
            cut[len(shell_lines) + 1] = len(block[0]) - len(first)
            shell_lines.extend([_expand(first, env, target=target)] + [_expand(b, env, target=target)
                                                                        for b in block[1:]])
        else:
            logical = " ".join(b[:-1] if b.endswith("\\") else b for b in block)
            code = logical.split("#", 1)[0]
            m = _ASSIGN.match(code.strip())
            rule = _RULE.match(code) if not m else None
            if rule and rule.group(1).split():
                target = _expand(rule.group(1).split()[0], env)
            if m and not code.lstrip().startswith(("ifeq", "ifneq", "ifdef", "ifndef")):
                name, op, value = m.group(1), m.group(2), m.group(3).strip()
                if op in (":=", "::="):
                    value = _expand(value, env)
                if op == "+=" and name in env:
                    env[name] = f"{env[name]} {value}".strip()
                elif op != "?=" or name not in env:
                    env[name] = value
            shell_lines.extend([""] * len(block))
        i += len(block)
    # Columns of the first words are exact; after an expansion on the line they are approximate.
    return [[Word(w.text, w.raw, w.line, w.col + cut.get(w.line, 0), w.value_col + cut.get(w.line, 0)) for w in c]
            for c in commands("\n".join(shell_lines))]
