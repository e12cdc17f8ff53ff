"""C++ compile-time constants per compile target, for the ``if constexpr`` conditions of cxx.py.

What a condition may name, each evaluated with nvcc's macros of the target (``__CUDA_ARCH__``):
- a ``constexpr`` variable (``constexpr bool kHasTma = __CUDA_ARCH__ >= 900;``, also ``static``
  members, also through a namespace or class of the file: ``arch::kHasTma``);
- a ``constexpr`` function with no parameters whose body is one ``return`` (``__host__ __device__
  constexpr bool has_wgmma() { return __CUDA_ARCH__ >= 900; }``, the preprocessor having kept one
  branch of an ``#ifdef __CUDA_ARCH__`` inside it);
- a non-type template parameter, in a translation unit, when every ``NAME<...>`` that names its
  template in the unit gives it the same value (``step<(__CUDA_ARCH__ >= 900)>(out)``): the only
  instantiation nvcc emits for that target. A template whose parameter can be deduced from a
  function argument, or has a default that a plain ``NAME(`` call may use, stays unknown.
A name defined twice with two values, a qualifier that is no namespace or class of the file
(a template parameter ``Traits::kHasTma``), anything else: unknown.
Bounded: at most MAX_TEMPLATES templates and ROUNDS rounds of constants naming constants.
"""

from __future__ import annotations

import bisect
import re

from .brackets import angle_close, match_close, skip_ws, split_top
from .ppexpr import UNKNOWN, Env, Evaluator, ExprError, Macro, expand, tokenize
from .preprocessor import MacroTable, Preprocessed

MAX_TEMPLATES = 2000
ROUNDS = 3

_TYPE = r"(?:bool|int|unsigned(?:\s+int)?|long(?:\s+long)?|short|auto|u?int(?:8|16|32|64)_t|size_t)"
_SPEC = r"(?:(?:static|const|inline|__device__|__host__|__forceinline__)\s+)*"
_VAR = re.compile(rf"\bconstexpr\s+{_SPEC}{_TYPE}\s+(?:const\s+)?([A-Za-z_]\w*)\s*=\s*([^;{{}}]+);")
_FUNC = re.compile(r"\b(?:constexpr|consteval)\b([^;{}()=<>]*?)\b([A-Za-z_]\w*)\s*\(\s*(?:void\s*)?\)\s*"
                   r"(?:const\s*)?(?:noexcept\s*)?\{\s*return\b([^;{}]*);\s*\}")
# a definition (``struct X {``, ``struct X : Base {``, ``namespace x {``), not a template's ``class T``
_SCOPE = re.compile(r"\b(?:namespace|struct|class|union)\s+(?:(?:__align__|alignas)\s*\([^)]*\)\s*)*"
                    r"([A-Za-z_]\w*)\s*(?:final\s*)?(?:\{|:(?!:)|=)")
_TEMPLATE = re.compile(r"\btemplate\s*<")
_USE = re.compile(r"\b([A-Za-z_]\w*)\s*<")
_QUALIFIED = re.compile(r"(?<![\w:])((?:::\s*)?(?:[A-Za-z_]\w*\s*::\s*)+)([A-Za-z_]\w*)(\s*\(\s*\))?")
_CALL = re.compile(r"(?<![\w:.>])([A-Za-z_]\w*)\s*\(\s*\)")
_TYPE_PARAM = re.compile(r"^\s*(?:typename|class|template\b)")
_PARAM = re.compile(r"^(.*?)\b([A-Za-z_]\w*)\s*(?:=\s*(.+))?$", re.S)
_CLASS = re.compile(r"\b(?:struct|class|union)\s+(?:(?:__align__|alignas)\s*\([^)]*\)\s*)*([A-Za-z_]\w*)")


class _CxxEnv(Env):
    """The preprocessor's macros, with the project predicates of cuda_macros.toml [cxx_constant]
    standing in for the template code that defines them."""

    def __init__(self, env: Env, table: MacroTable) -> None:
        self.env = env
        self.constants = table.cxx_constant

    def macro(self, name: str):
        m = self.env.macro(name)
        e = self.constants.get(name)
        if e is not None and isinstance(m, Macro) and m.state is True and e["matches"] in m.body:
            return Macro(name, None, f"({e['value']})")
        return m


class _Template:
    __slots__ = ("name", "open", "close", "params", "deducible")

    def __init__(self, name, open_i, close_i, params, deducible):
        self.name = name
        self.open = open_i  # the body's braces
        self.close = close_i
        self.params = params  # [(name, default text or None)] of the non-type parameters, by position
        self.deducible = deducible  # parameter names a function argument may deduce


class Constants:
    """The constants of one masked text for one target."""

    def __init__(self, masked: str, pp: Preprocessed, templates: bool) -> None:
        self.masked = masked
        self.env = _CxxEnv(pp.env, pp.table) if pp.env is not None and pp.table is not None else None
        self.values: dict[str, int | None] = {}
        self.functions: dict[str, int | None] = {}
        self.scopes = set(_SCOPE.findall(masked))
        self.bound: list[tuple[int, int, dict]] = []  # (open, close, {param: value}) of templates with a value
        self._starts: list[int] = []
        self._scope_name: str | None = None  # the template being bound: its own uses see no binding
        if self.env is None:
            return
        tpls = _templates(masked) if templates and "<" in masked else []
        var_defs = [(m.start(), m.group(1), m.group(2)) for m in _VAR.finditer(masked)]
        fn_defs = [(m.start(), m.group(2), m.group(3)) for m in _FUNC.finditer(masked)
                   if m.group(2) not in ("operator", "if", "while", "for", "switch", "return")]
        uses: dict[str, list[int]] = {}
        names = {t.name for t in tpls}
        # a header the text includes may instantiate them too (an .inl at the end of a .cu)
        elsewhere = {n for inc in pp.included_text for n in _USE.findall(inc) if n in names}
        tpls = [t for t in tpls if t.name not in elsewhere]
        for m in _USE.finditer(masked):
            if m.group(1) in names:
                uses.setdefault(m.group(1), []).append(m.end() - 1)
        for _ in range(ROUNDS):
            before = (dict(self.values), dict(self.functions), [b[2] for b in self.bound])
            self.values = _one_value((n, self.eval(e, at)) for at, n, e in var_defs)
            self.functions = _one_value((n, self.eval(e, at)) for at, n, e in fn_defs)
            self._bind(tpls, uses)
            if before == (self.values, self.functions, [b[2] for b in self.bound]):
                break

    def _bind(self, tpls: list[_Template], uses: dict[str, list[int]]) -> None:
        bound = []
        for t in tpls:
            got: dict[str, int] = {}
            for i, (pname, default) in enumerate(t.params):
                if pname is None or pname in t.deducible:
                    continue
                vals = set()
                for lt in uses.get(t.name, ()):
                    gt = angle_close(self.masked, lt)
                    if gt < 0:
                        vals.add(UNKNOWN)
                        break
                    args = split_top(self.masked[lt + 1:gt])
                    if i < len(args) and args[i].strip():
                        vals.add(self.eval(args[i], lt, skip=(t.open, t.close) if t.open < lt < t.close else None))
                    elif default is not None:
                        vals.add(self.eval(default, t.open))
                    else:
                        vals.add(UNKNOWN)
                    if UNKNOWN in vals or len(vals) > 1:
                        break
                if default is not None:
                    vals.add(self.eval(default, t.open))  # a call that names no argument list takes it
                if len(vals) == 1 and UNKNOWN not in vals:
                    got[pname] = vals.pop()
            if got:
                bound.append((t.open, t.close, got))
        bound.sort()
        self.bound = bound
        self._starts = [b[0] for b in bound]

    def _param(self, name: str, at: int, skip) -> int | None:
        """A bound template parameter visible at ``at`` (innermost template first)."""
        k = bisect.bisect_right(self._starts, at) - 1
        best = None
        while k >= 0:
            a, b, got = self.bound[k]
            if a < at < b and (a, b) != skip and name in got and (best is None or a > best[0]):
                best = (a, got[name])
            k -= 1
        return None if best is None else best[1]

    def eval(self, text: str, at: int, skip=None):
        """The value of the C++ constant expression ``text`` written at offset ``at``; UNKNOWN if none."""
        if self.env is None:
            return UNKNOWN
        text = _QUALIFIED.sub(self._qualified, text)
        text = _CALL.sub(lambda m: _literal(self.functions.get(m.group(1), UNKNOWN), m.group(0)), text)

        def ident(name: str):
            if name in ("true", "false"):
                return int(name == "true")
            v = self._param(name, at, skip)
            if v is not None:
                return v
            return self.values.get(name, UNKNOWN)

        try:
            toks = expand(tokenize(text), self.env)
        except (ExprError, IndexError, RecursionError):
            return UNKNOWN
        if "defined" in toks:
            return UNKNOWN  # not a preprocessor expression here
        return Evaluator(toks, self.env, ident).run()

    def _qualified(self, m: re.Match) -> str:
        quals = [q for q in re.split(r"\s*::\s*", m.group(1)) if q]
        if not all(q in self.scopes for q in quals):
            return m.group(0)  # a template parameter or another library's scope: not known here
        table = self.functions if m.group(3) else self.values
        return _literal(table.get(m.group(2), UNKNOWN), m.group(0))


def _literal(v, otherwise: str) -> str:
    return otherwise if v is UNKNOWN else f"({v})"


def _one_value(pairs) -> dict:
    """name -> its value; a name given two values is unknown."""
    out: dict = {}
    for name, v in pairs:
        out[name] = v if name not in out or out[name] == v else UNKNOWN
    return out


def _templates(s: str) -> list[_Template]:
    """Every class or function template definition with non-type parameters."""
    out = []
    for m in _TEMPLATE.finditer(s):
        lt = m.end() - 1
        gt = angle_close(s, lt)
        if gt < 0:
            continue
        inner = s[lt + 1:gt]
        if not inner.strip() or "..." in inner:
            continue  # an explicit specialization, or a pack
        params, types = [], 0
        for p in split_top(inner):
            if _TYPE_PARAM.match(p):
                params.append((None, None))
                types += 1
                continue
            pm = _PARAM.match(p.strip())
            if not pm:
                params = []
                break
            params.append((pm.group(2), pm.group(3)))
        if not params or types == len(params):
            continue
        # the entity: up to its body's brace (a ';' first: a declaration; another template head: nested)
        k = skip_ws(s, gt + 1)
        if _TEMPLATE.match(s, k):
            continue
        j = k
        while j < len(s) and s[j] not in "{;=":
            if s[j] == "(":
                j = match_close(s, j, "(", ")")
                if j < 0:
                    break
            j += 1
        if j < 0 or j >= len(s) or s[j] != "{":
            continue
        header = s[k:j]
        close = match_close(s, j, "{", "}")
        if close < 0:
            continue
        name, deducible = _entity(header, {p for p, _d in params if p})
        if name is None:
            continue
        out.append(_Template(name, j, close, [(p, d) for p, d in params], deducible))
        if len(out) >= MAX_TEMPLATES:
            break
    return out


def _entity(header: str, pnames: set) -> tuple[str | None, set]:
    """(the name a template head's entity declares, the parameters a call may deduce)."""
    cm = _CLASS.search(header)
    p = header.find("(")
    if cm is not None and (p < 0 or cm.start() < p):
        rest = header[cm.end():].lstrip()
        if rest.startswith("<"):
            return None, set()  # a partial specialization: its arguments are not positions
        return cm.group(1), set()
    if p < 0:
        return None, set()
    nm = re.search(r"(::\s*)?(~?[A-Za-z_]\w*)\s*$", header[:p])
    if nm is None or nm.group(1) or nm.group(2) == "operator":
        return None, set()
    close = match_close(header, p, "(", ")")
    args = header[p:close] if close > 0 else header[p:]
    return nm.group(2), {n for n in pnames if re.search(rf"\b{re.escape(n)}\b", args)}
