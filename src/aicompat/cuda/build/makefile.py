"""The shell commands of a Makefile's recipes, with the file's own variables expanded,
one configuration of its conditionals at a time.

GNU Make manual, 3.7 "How make Reads a Makefile" and 6 "How to Use Variables":
``NAME = value`` (recursive), ``:=``/``::=`` (simple), ``?=`` (if unset) and ``+=``
(append, with a space); recipe lines start with a tab, and a leading ``@``/``-``/``+``
is Make's, not the shell's. ``$(NAME)``/``${NAME}`` of a variable the file does not set
stays as it is, so the shell reader sees a command substitution: an unknown word.

Manual 7 "Conditional Parts of Makefiles": ``ifeq``/``ifneq``/``ifdef``/``ifndef``,
``else`` (also ``else ifeq ...``) and ``endif``, on lines that do not start with a tab
(7.2). A test on a variable the file does not set, or sets only with ``?=``, is open: the
command line (or the environment) may set it (6.10), so both branches are configurations
of their own. So is a test on a knob: a variable the file compares with two or more
values (``ifeq ($(GPU_TARGET),A100) ... else ifeq ($(GPU_TARGET),H100)``). A
command-line ``make GPU_TARGET=B200`` overrides an ordinary assignment (9.5 "Overriding
Variables"), and the branches for values the file does not give it are there to be chosen. A test on what the file cannot know (``$(shell ...)``) is open too. Each
combination of choices is one ``Configuration``; beyond ``MAX_CONFIGS`` the branches are
not told apart: one configuration, labelled None, in which what a conditional sets is unknown.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from .shell import Word, commands

_ASSIGN = re.compile(r"^(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(\+=|\?=|::=|:=|=)\s*(.*)$")
_REF = re.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_.-]*)[)}]")
_BARE_REF = re.compile(r"^\$[({]([A-Za-z_][A-Za-z0-9_.-]*)[)}]$")
_WILDCARD = re.compile(r"\$[({]wildcard\s+([^$()]*)[)}]")
_COND = re.compile(r"^ *(ifeq|ifneq|ifdef|ifndef)\b\s*(.*)$")
_ELSE = re.compile(r"^ *else\b\s*(.*)$")
_ENDIF = re.compile(r"^ *endif\b")
MAX_DEPTH = 10
MAX_CONFIGS = 64


# Automatic variables name the rule's files (GNU Make manual 10.5.3), never flags.
_AUTOMATIC = re.compile(r"\$[@<^?*+|]|\$[({][@<^?*+|][DF]?[)}]")
_FIRST_PREREQ = re.compile(r"\$<|\$[({]<[)}]")
_ALL_PREREQS = re.compile(r"\$[\^+]|\$[({][\^+][)}]")


_RULE = re.compile(r"^([^\t#=:][^#=:]*?)\s*::?(?!=)")


@dataclass(frozen=True)
class Rule:
    """The rule a recipe line belongs to: its first target and its prerequisites (expanded
    when the rule was read, 3.7), and which of them the line names through ``$<``/``$^``."""

    target: str
    prereqs: tuple[str, ...]
    uses: str = ""  # "first" ($<), "all" ($^ / $+), "" (neither)


@dataclass
class Configuration:
    label: str | None  # "GPU_TARGET=A100, DEBUG unset"; "" when the file has one; None: branches not told apart
    commands: list[list[Word]] = field(default_factory=list)
    rules: dict[int, Rule] = field(default_factory=dict)  # recipe line -> its rule


def _expand(text: str, env: dict[str, str], depth: int = 0, target: str = "FILE") -> str:
    if depth > MAX_DEPTH:
        return text
    if depth == 0:
        text = re.sub(r"\$@|\$[({]@[)}]", target.replace("\\", "/"), text)
        text = _AUTOMATIC.sub("FILE", text)
    # $(wildcard *.cu) names its patterns; the shell reader sees them as words (matched later, never run).
    text = _WILDCARD.sub(lambda m: m.group(1).strip(), text)
    return _REF.sub(lambda m: _expand(env[m.group(1)], env, depth + 1) if m.group(1) in env else m.group(0), text)


@dataclass
class _Frame:
    parent: bool  # the enclosing lines are read
    active: bool  # this branch is read
    done: bool  # a branch of this conditional was taken


@dataclass
class _State:
    env: dict = field(default_factory=dict)
    soft: set = field(default_factory=set)  # set only with ?=: the command line may set it
    knobs: frozenset = frozenset()  # compared with two or more values: the command line chooses
    bound: dict = field(default_factory=dict)  # a command-line variable -> the value this configuration gives it
    excluded: dict = field(default_factory=dict)  # a command-line variable -> values it does not have
    opaque: dict = field(default_factory=dict)  # an open test's text -> its outcome here
    order: list = field(default_factory=list)  # the choices, in the order made
    stack: list = field(default_factory=list)
    lines: list = field(default_factory=list)
    cut: dict = field(default_factory=dict)  # line -> characters of Make's recipe prefix removed (tab, @, -)
    rules: dict = field(default_factory=dict)
    rule: Rule = Rule("FILE", ())
    unknown: set = field(default_factory=set)  # merged mode: set inside a conditional

    def reading(self) -> bool:
        return not self.stack or self.stack[-1].active

    def view(self) -> dict:
        env = {k: v for k, v in self.env.items() if k not in self.unknown}
        for k, v in self.bound.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        for k in self.excluded:
            if k not in self.bound or self.bound[k] is None:
                env.pop(k, None)  # not its default: some other value the command line gives
        return env

    def label(self) -> str:
        parts = []
        for key in self.order:
            if key in self.opaque:
                parts.append(f"'{key}' {'holds' if self.opaque[key] else 'does not hold'}")
            elif self.bound.get(key) is not None:
                v = self.bound[key]
                parts.append(f"{key}={v}" if v else f"{key} unset")
            elif self.excluded.get(key):
                ex = sorted(self.excluded[key])
                parts.append(f"{key} set" if ex == [""] else
                             f"{key} other than {', '.join(e or '(unset)' for e in ex)}")
        return ", ".join(parts)


def _split_args(kind: str, rest: str) -> tuple[str, str] | None:
    """The two arguments of ifeq/ifneq: ``(a,b)``, ``'a' 'b'``, ``"a" "b"`` (7.2)."""
    rest = rest.split("#", 1)[0].strip()
    if rest.startswith("("):
        depth, comma = 0, None
        for i, c in enumerate(rest):
            if c in "({":
                depth += 1
            elif c in ")}":
                depth -= 1
                if depth == 0:
                    if comma is None or rest[i + 1:].strip():
                        return None
                    return rest[1:comma].strip(), rest[comma + 1:i].strip()
            elif c == "," and depth == 1 and comma is None:
                comma = i
        return None
    m = re.match(r"""^(['"])(.*?)\1\s+(['"])(.*?)\3$""", rest)
    return (m.group(2), m.group(4)) if m else None


def _test(st: _State, kind: str, rest: str) -> list[tuple[bool, _State]]:
    """The outcomes of a conditional's test in ``st``: one when the file decides it, two
    (each on its own copy, with the choice recorded) when the command line may."""
    negate = kind in ("ifneq", "ifndef")
    env = st.view()
    if kind in ("ifdef", "ifndef"):
        name = _expand(rest.split("#", 1)[0].strip(), env)
        if st.bound.get(name) is not None:
            return [(bool(st.bound[name]) != negate, st)]
        if name in st.excluded and "" in st.excluded[name]:
            return [(not negate, st)]
        if name in env and name not in st.soft and "$" not in name:
            return [(bool(env[name].strip()) != negate, st)]
        if "$" in name:
            return _opaque(st, f"{kind} {rest.strip()}", negate)
        return _fork_value(st, name, "", not negate)  # defined: its value is not ""
    args = _split_args(kind, rest)
    if args is None:
        return _opaque(st, f"{kind} {rest.strip()}", negate)
    a, b = (_expand(x, env) for x in args)
    for var_side, other in ((args[0], b), (args[1], a)):
        m = _BARE_REF.match(var_side.strip())
        if m and "$" not in other and _open(st, m.group(1)):
            return _fork_value(st, m.group(1), other, negate)
    if "$" not in a and "$" not in b:
        return [((a == b) != negate, st)]
    return _opaque(st, f"{kind} {rest.strip()}", negate)


def _open(st: _State, name: str) -> bool:
    return name not in st.env or name in st.soft or name in st.bound or name in st.excluded


def _fork_value(st: _State, name: str, value: str, negate: bool) -> list[tuple[bool, _State]]:
    """``$(name) == value`` for a variable the command line may set."""
    if value in st.excluded.get(name, ()):
        return [(negate, st)]
    if st.bound.get(name) is not None:
        return [((st.bound[name] == value) != negate, st)]
    yes, no = st, copy.deepcopy(st)
    yes.bound[name] = value
    no.excluded.setdefault(name, set()).add(value)
    for s in (yes, no):
        if name not in s.order:
            s.order.append(name)
    return [(not negate, yes), (negate, no)]


def _opaque(st: _State, key: str, negate: bool) -> list[tuple[bool, _State]]:
    """A test on what the file cannot know: both outcomes, the same one each time it recurs."""
    if key in st.opaque:
        return [(st.opaque[key], st)]
    yes, no = st, copy.deepcopy(st)
    yes.opaque[key], no.opaque[key] = True, False
    yes.order.append(key)
    no.order.append(key)
    return [(True, yes), (False, no)]


def _directive(st: _State, code: str, merged: bool) -> list[_State] | None:
    """The states after a conditional directive line, or None when ``code`` is none."""
    m = _COND.match(code)
    if m:
        if merged:
            st.stack.append(_Frame(True, True, False))
            return [st]
        if not st.reading():
            st.stack.append(_Frame(False, False, True))
            return [st]
        out = []
        for taken, s in _test(st, m.group(1), m.group(2)):
            s.stack.append(_Frame(True, taken, taken))
            out.append(s)
        return out
    m = _ELSE.match(code)
    if m and st.stack:
        fr = st.stack[-1]
        if merged:
            return [st]
        rest = m.group(1).strip()
        c = _COND.match(rest) if rest else None
        if fr.done or not fr.parent:
            fr.active = False
            return [st]
        if c is None:
            fr.active = fr.done = True
            return [st]
        out = []
        for taken, s in _test(st, c.group(1), c.group(2)):
            s.stack[-1].active = s.stack[-1].done = taken
            out.append(s)
        return out
    if _ENDIF.match(code):
        if st.stack:
            st.stack.pop()
        return [st]
    return None


def configurations(text: str) -> list[Configuration]:
    """Every configuration of the Makefile's conditionals (one when it has none), each with
    the simple commands of its recipes in file order, on their own line numbers."""
    got = _walk(text, merged=False)
    return got if got is not None else (_walk(text, merged=True) or [])


def recipe_commands(text: str) -> list[list[Word]]:
    """The commands of every configuration, each once, in file order."""
    seen: dict[tuple, list[Word]] = {}
    for cfg in configurations(text):
        for c in cfg.commands:
            seen.setdefault(tuple((w.line, w.col, w.text) for w in c), c)
    return sorted(seen.values(), key=lambda c: (c[0].line, c[0].col))


def _knobs(text: str) -> frozenset:
    """Variables the file's conditionals compare with two or more literal values."""
    seen: dict[str, set] = {}
    for line in text.split("\n"):
        m = re.match(r"^ *(?:else\s+)?(ifeq|ifneq)\b\s*(.*)$", line.split("#", 1)[0])
        args = _split_args(m.group(1), m.group(2).strip()) if m else None
        if args is None:
            continue
        for var_side, other in (args, args[::-1]):
            ref = _BARE_REF.match(var_side.strip())
            if ref and "$" not in other and other.strip():
                seen.setdefault(ref.group(1), set()).add(other.strip())
    return frozenset(k for k, v in seen.items() if len(v) >= 2)


def _walk(text: str, merged: bool) -> list[Configuration] | None:
    states = [_State(knobs=_knobs(text))]
    lines = text.split("\n")
    in_define = False
    i = 0
    while i < len(lines):
        line = lines[i]
        # A backslash-newline continues a variable or a recipe line.
        block = [line]
        while block[-1].endswith("\\") and i + len(block) < len(lines):
            block.append(lines[i + len(block)])
        i += len(block)
        logical = " ".join(b[:-1] if b.endswith("\\") else b for b in block)
        code = logical.split("#", 1)[0]
        if in_define or re.match(r"^\s*(?:export\s+|override\s+)?define\b", code):
            # A multi-line variable (6.8): its body is no recipe; its value is not read here.
            in_define = not re.match(r"^\s*endef\b", code)
            for st in states:
                st.lines.extend([""] * len(block))
            continue
        if not line.startswith("\t"):
            nxt: list[_State] = []
            directive = False
            for st in states:
                got = _directive(st, code, merged)
                if got is None:
                    nxt.append(st)
                else:
                    directive = True
                    nxt.extend(got)
            if len(nxt) > MAX_CONFIGS:
                return None
            states = nxt
            if directive:
                for st in states:
                    st.lines.extend([""] * len(block))
                continue
        for st in states:
            _line(st, block, code, merged)
    out = []
    for st in states:
        label = None if merged else (st.label() if len(states) > 1 else "")
        cmds = [[Word(w.text, w.raw, w.line, w.col + st.cut.get(w.line, 0), w.value_col + st.cut.get(w.line, 0))
                 for w in c] for c in commands("\n".join(st.lines))]
        out.append(Configuration(label, cmds, dict(st.rules)))
    return out


def _line(st: _State, block: list[str], code: str, merged: bool) -> None:
    """One logical line (a recipe line, a rule or an assignment) read in state ``st``."""
    if not st.reading():
        st.lines.extend([""] * len(block))
        return
    env = st.view()
    if block[0].startswith("\t"):
        first = re.sub(r"^\t[@+-]*\s*", "", block[0])
        n = len(st.lines) + 1
        st.cut[n] = len(block[0]) - len(first)
        raw = "\n".join(block)
        uses = "first" if _FIRST_PREREQ.search(raw) else "all" if _ALL_PREREQS.search(raw) else ""
        for k in range(len(block)):
            st.rules[n + k] = Rule(st.rule.target, st.rule.prereqs, uses)
        st.lines.extend([_expand(first, env, target=st.rule.target)] +
                        [_expand(b, env, target=st.rule.target) for b in block[1:]])
        return
    m = _ASSIGN.match(code.strip())
    rule = _RULE.match(code) if not m else None
    if rule and rule.group(1).split():
        target = _expand(rule.group(1).split()[0], env)
        rest = code[rule.end():].split(";", 1)[0].split("|", 1)[0]
        if ":" in rest:  # a static pattern rule (4.12): targets: target-pattern: prereq-patterns
            rest = rest.split(":", 1)[1]
        st.rule = Rule(target, tuple(_expand(rest, env).split()))
    if m and not code.lstrip().startswith(("ifeq", "ifneq", "ifdef", "ifndef")):
        name, op, value = m.group(1), m.group(2), m.group(3).strip()
        if name in st.bound and not code.lstrip().startswith("override"):
            pass  # the command line's value wins over the file's (6.7)
        elif merged and st.stack:
            st.unknown.add(name)  # set in a branch not told apart: not known after it
        else:
            if op in (":=", "::="):
                value = _expand(value, env)
            if op == "+=" and name in st.env:
                st.env[name] = f"{st.env[name]} {value}".strip()
            elif op == "?=":
                if name not in st.env:
                    st.env[name] = value
                    st.soft.add(name)
            else:
                st.env[name] = value
                if name in st.knobs and not code.lstrip().startswith("override"):
                    st.soft.add(name)  # the file's default; the command line may choose another
                elif op != "+=":
                    st.soft.discard(name)
    st.lines.extend([""] * len(block))
