"""Reaching definitions, built on demand per scope (module, class body, function).

One pass over a scope's statements in order records, before each statement,
which definitions of each name can reach it: branches are joined (both
arms' definitions reach the join), loops run twice, ``try`` handlers see the
body's definitions. Each definition keeps the branch conditions it was made
under, so the evaluator can drop the ones a world rules out (``if not
is_hopper(): return`` before ``x = ...``). Nothing here is evaluated: the
evaluator asks for a name's definitions at a statement and evaluates them
only when a rule needs the value. Built once per scope and per file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, cast, overload

import libcst as cst

from ..syntax.index import dotted, import_bindings
from ..syntax.walk import walk

if TYPE_CHECKING:
    from typing import TypeGuard

# Methods that change the container they are called on (``lst.append(x)``); a library's own
# (a parser's ``add_argument``) come from the library table through FileModel.
MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add"})


@dataclass(frozen=True, eq=False)
class Def:
    """One way a name can get its value.

    kind: ``expr`` (node: the expression), ``unpack`` (node: the expression,
    extra: (index, starred)), ``param`` (node: the Param), ``import`` (node: the
    Qual), ``func``/``class`` (node: the definition), ``iter`` (node: the
    iterable, extra: the unpack path), ``with`` (node: the context expression),
    ``mutate`` (node: the Call or Assign that changes the container, extra:
    the previous definitions), ``aug`` (node: the AugAssign, extra: the previous
    definitions), ``loop`` (node: a For whose body builds the name up, extra:
    (name, definitions before the loop, definitions after it joined)),
    ``opaque`` (not tracked).
    """

    kind: str
    node: Any
    scope: "Scope"
    stmt: Any  # the statement it is made by (the evaluator evaluates the node as of there)
    conds: Any = ()  # ((test expression, polarity, statement), ...): a tuple, or a Tagged chain
    extra: Any = None
    born: tuple | None = None  # the conditions it was made under, before any join tagged it (None: conds)
    origin: Any = None  # the definition this is a copy of, under other conditions (None: itself)

    def under(self, conds) -> "Def":
        """This definition, reaching a point under ``conds`` instead."""
        return Def(self.kind, self.node, self.scope, self.stmt, conds, self.extra,
                   self.conds if self.born is None else self.born, self if self.origin is None else self.origin)


Env = dict  # name -> tuple[Def, ...]


@overload
def _join(a: Env, b: Env | None) -> Env: ...
@overload
def _join(a: Env | None, b: Env) -> Env: ...
@overload
def _join(a: Env | None, b: Env | None) -> Env | None: ...
def _join(a: Env | None, b: Env | None) -> Env | None:  # None only when both are
    if a is None:
        return None if b is None else dict(b)
    if b is None:
        return dict(a)
    out = dict(a)
    for name, defs in b.items():
        mine = out.get(name)
        if mine is None:
            out[name] = defs
        elif mine is not defs:
            ids = {id(d) for d in mine}
            extra = tuple(d for d in defs if id(d) not in ids)
            if extra:  # else keep the same tuple: later joins then see "unchanged" at once
                out[name] = _merge_copies(mine + extra)
    return out


def _merge_copies(defs: tuple) -> tuple:
    """One definition per origin: copies of one definition that reach a join along
    different paths become one copy that holds where any of their conditions does.
    Without it every if whose arm holds a nested if that rebinds the name doubled the
    name's definitions (TransformerEngine's get_attention_backend: thousands of copies
    of each flag, 4.2 GB)."""
    seen: dict[int, list] = {}
    for d in defs:
        seen.setdefault(id(d.origin if d.origin is not None else d), []).append(d)
    if len(seen) == len(defs):
        return defs
    out = []
    for group in seen.values():
        if len(group) == 1:
            out.append(group[0])
        elif any(not d.conds for d in group):
            out.append(group[0].under(()))
        else:
            out.append(group[0].under(((Alternatives(tuple(d.conds for d in group)), True, None),)))
    return tuple(out)


@dataclass(eq=False)
class Scope:
    node: Any  # Module, ClassDef or FunctionDef
    parent: "Scope | None"
    env_at: dict[int, Env] = field(default_factory=dict)  # id(statement) -> definitions before it
    conds_at: dict[int, tuple] = field(default_factory=dict)  # id(statement) -> conditions it runs under
    final: Env = field(default_factory=dict)  # definitions when the body falls off its end
    returns: list = field(default_factory=list)  # (expression or None, statement, conds)
    attr_defs: dict[str, list[Def]] = field(default_factory=dict)  # self.<attr> = ... in this method
    self_name: str | None = None  # the first parameter of a method
    cls_name: str | None = None  # the first parameter of a classmethod (the class)
    params: dict[str, cst.Param] = field(default_factory=dict)
    is_generator: bool = False
    owner_class: Any = None  # the ClassDef a method belongs to
    falls_through: bool = True  # can control reach the end of the body?
    final_conds: tuple = ()  # the conditions under which it does
    mutators: frozenset = MUTATORS  # the methods that change what they are called on (build_scope)
    syntax: dict = field(default_factory=dict)  # facts read from the body once, for every world (model/dims.py)

    def defs_at(self, name: str, stmt) -> tuple | None:
        env = self.env_at.get(id(stmt)) if stmt is not None else None
        if env is None:
            env = self.final
        return env.get(name)


class _Builder:
    def __init__(self, scope: Scope, is_exit: Callable[[cst.Call], bool], may_exit=None) -> None:
        self.scope = scope
        self.is_exit = is_exit
        self.may_exit = may_exit or (lambda call: False)
        self.mutators = scope.mutators

    def d(self, kind, node, stmt, conds, extra=None) -> Def:
        return Def(kind, node, self.scope, stmt, conds, extra)

    # -- blocks --------------------------------------------------------------
    def block(self, stmts, env: Env | None, conds: tuple) -> Env | None:
        """Definitions after ``stmts``; None when every path leaves. ``self.tail``: the
        conditions under which the end is reached (an early exit nested in a branch
        narrows them)."""
        for stmt in stmts:
            if env is None:
                return None
            env, conds = self.stmt(stmt, env, conds)
        self.tail = conds
        return env

    def top(self, stmts, env: Env):
        """Like ``block``, also giving the conditions under which the end is reached."""
        conds: tuple = ()
        for stmt in stmts:
            if env is None:
                return None, conds
            env, conds = self.stmt(stmt, env, conds)
        return env, conds

    def body(self, suite, env, conds):
        if isinstance(suite, cst.SimpleStatementSuite):
            self.tail = conds
            for small in suite.body:
                if env is None:
                    return None
                self.scope.env_at[id(small)] = env
                self.scope.conds_at[id(small)] = conds
                env = self.small(small, suite, dict(env), conds)
            return env
        return self.block(suite.body, env, conds)

    def stmt(self, stmt, env: Env, conds: tuple):
        self.scope.env_at[id(stmt)] = env
        self.scope.conds_at[id(stmt)] = conds
        if isinstance(stmt, cst.SimpleStatementLine):
            line_env: Env | None = env  # None once a statement of the line leaves every path
            for small in stmt.body:
                if line_env is None:
                    break
                self.scope.env_at[id(small)] = line_env
                self.scope.conds_at[id(small)] = conds
                line_env = self.small(small, stmt, dict(line_env), conds)
                if line_env is not None and isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                        and self.may_exit(small.value):
                    conds = conds + ((Returns(small.value), True, stmt),)  # what follows runs where it returned
            return line_env, conds
        if isinstance(stmt, cst.If):
            return self.if_(stmt, env, conds)
        if isinstance(stmt, (cst.For, cst.While)):
            env = dict(env)
            # A for body runs only where its iterable may have items (a list filled per capability).
            body_c = conds + ((LoopRuns(stmt.iter), True, stmt),) if isinstance(stmt, cst.For) else conds
            if isinstance(stmt, cst.For):
                self.bind_target(stmt.target, "iter", stmt.iter, stmt, env, body_c)
            first = self.body(stmt.body, env, body_c)
            again = _join(env, first)
            if isinstance(stmt, cst.For):
                self.bind_target(stmt.target, "iter", stmt.iter, stmt, again, body_c)
            second = self.body(stmt.body, again, body_c)
            out = _join(env, _join(first, second))
            if out is not None and isinstance(stmt, cst.For) and stmt.orelse is None:
                for name in _accumulators(stmt, self.mutators):  # replayed per item where the items are known
                    out[name] = (self.d("loop", stmt, stmt, conds, (name, env.get(name, ()), out.get(name, ()))),)
            if stmt.orelse is not None:
                out = self.body(stmt.orelse.body, out, conds)
            return (out if out is not None else env), conds
        if isinstance(stmt, cst.Try) or type(stmt).__name__ == "TryStar":
            probe = _imports_probe(stmt)
            body_c = conds + ((probe, True, stmt),) if probe else conds
            after_body = self.body(stmt.body, dict(env), body_c)
            seen = _join(env, after_body)
            outs = []
            if stmt.orelse is not None and after_body is not None:
                outs.append(self.body(stmt.orelse.body, after_body, body_c))
            else:
                outs.append(after_body)
            for h in stmt.handlers:
                henv = dict(seen)
                h_c = conds + ((ImportsOK(probe.names, _handler_types(h), probe.attrs), False, stmt),) if probe else conds
                if h.name is not None and isinstance(h.name.name, cst.Name):
                    henv[h.name.name.value] = (self.d("opaque", h, h, h_c),)
                outs.append(self.body(h.body, henv, h_c))
            out = None
            for o in outs:
                out = _join(out, o)
            if stmt.finalbody is not None:
                fin = self.body(stmt.finalbody.body, out if out is not None else seen, conds)
                out = fin if out is not None else None
            return out, conds
        if isinstance(stmt, cst.With):
            env = dict(env)
            for item in stmt.items:
                if item.asname is not None:
                    self.bind_target(item.asname.name, "with", item.item, stmt, env, conds)
            return self.body(stmt.body, env, conds), conds
        if isinstance(stmt, cst.FunctionDef):
            env = dict(env)
            env[stmt.name.value] = (self.d("func", stmt, stmt, conds),)
            return env, conds
        if isinstance(stmt, cst.ClassDef):
            env = dict(env)
            env[stmt.name.value] = (self.d("class", stmt, stmt, conds),)
            return env, conds
        if isinstance(stmt, cst.Match):
            out = dict(env)
            for case in stmt.cases:
                out = _join(out, self.body(case.body, dict(env), conds))
            return out, conds
        return env, conds

    def if_(self, stmt: cst.If, env: Env, conds: tuple):
        # An elif chain is a loop down the chain (each arm's body), then the joins back up
        # from the last arm: legal code has chains thousands of branches long.
        arms = []
        while True:
            yes_c = conds + ((stmt.test, True, stmt),)
            no_c = conds + ((stmt.test, False, stmt),)
            self.tail = yes_c
            yes = self.body(stmt.body, dict(env), yes_c)
            arms.append((stmt, conds, yes, self.tail, yes_c, no_c))
            if not isinstance(stmt.orelse, cst.If):
                break
            self.scope.env_at[id(stmt.orelse)] = env
            stmt, env, conds = stmt.orelse, dict(env), no_c
        if isinstance(stmt.orelse, cst.Else):
            self.tail = no_c
            no = self.body(stmt.orelse.body, dict(env), no_c)
            no_tail = self.tail
        else:
            no, no_tail = env, no_c
        for stmt, conds, yes, yes_tail, yes_c, no_c in reversed(arms):
            no, no_tail = self._if_join(stmt, conds, yes, yes_tail, yes_c, no, no_tail, no_c)
        return no, no_tail

    def _if_join(self, stmt: cst.If, conds: tuple, yes, yes_tail, yes_c, no, no_tail, no_c):
        if yes is None and no is None:
            return None, conds
        if yes is None:
            return no, no_tail  # what follows runs only where the test failed
        if no is None:
            return yes, yes_tail
        joined = _join(_on_path(yes, no, (stmt.test, True, stmt)), _on_path(no, yes, (stmt.test, False, stmt)))
        if yes_tail == yes_c and no_tail == no_c:
            return joined, conds
        # An exit nested in an arm (`if a: if b: return`): what follows runs where some
        # arm reaches its end: not (a and b).
        n = len(conds)
        return joined, conds + ((Alternatives((yes_tail[n:], no_tail[n:])), True, None),)

    # -- small statements ----------------------------------------------------
    def small(self, small, stmt, env: Env, conds: tuple) -> Env | None:
        if isinstance(small, cst.Assign):
            for t in small.targets:
                self.bind_target(t.target, "expr", small.value, small, env, conds)
            return env
        if isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.bind_target(small.target, "expr", small.value, small, env, conds)
            return env
        if isinstance(small, cst.AugAssign):
            if isinstance(small.target, cst.Name):
                name = small.target.value
                env[name] = (self.d("aug", small, small, conds, env.get(name, ())),)
            elif self._self_attr(small.target):
                self._attr(small.target.attr.value, self.d("opaque", small, small, conds))
            return env
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            for name, q in import_bindings(small, relative=True):
                if name != "*":
                    env[name] = (self.d("import", q, small, conds),)
            return env
        if isinstance(small, cst.Return):
            self.scope.returns.append((small.value, small, conds))
            return None
        if isinstance(small, (cst.Raise, cst.Continue, cst.Break)):
            return None
        if isinstance(small, cst.Del):
            for el in _del_names(small.target):
                env.pop(el, None)
            return env
        if isinstance(small, cst.Expr):
            v = small.value
            if isinstance(v, (cst.Yield, cst.Await)) and isinstance(v, cst.Yield):
                self.scope.is_generator = True
            if isinstance(v, cst.Call):
                if self.is_exit(v):
                    return None
                func = v.func
                if isinstance(func, cst.Attribute) and func.attr.value in self.mutators:
                    base = func.value
                    if isinstance(base, cst.Name):
                        name = base.value
                        env[name] = (self.d("mutate", v, small, conds, env.get(name, ())),)
                    elif self._self_attr(base):
                        self._attr(base.attr.value, self.d("mutate", v, small, conds, None))
            return env
        return env

    def bind_target(self, target, kind, value, stmt, env: Env, conds, path: tuple = ()) -> None:
        if isinstance(target, cst.Name):
            if kind == "expr" and not path:
                env[target.value] = (self.d("expr", value, stmt, conds),)
            else:
                env[target.value] = (self.d("unpack" if kind == "expr" else kind, value, stmt, conds, path),)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for i, el in enumerate(target.elements):
                if isinstance(el, cst.StarredElement):
                    if isinstance(el.value, cst.Name):
                        env[el.value.value] = (self.d("opaque", value, stmt, conds),)
                    # positions after a star are counted from the end: not tracked
                    for rest in target.elements[i + 1:]:
                        for n in _del_names(rest.value):
                            env[n] = (self.d("opaque", value, stmt, conds),)
                    break
                self.bind_target(el.value, kind, value, stmt, env, conds, path + (i,))
        elif isinstance(target, cst.Subscript):
            base = target.value
            if isinstance(base, cst.Name) and kind == "expr" and not path:
                name = base.value
                env[name] = (self.d("mutate", stmt, stmt, conds, env.get(name, ())),)
            elif self._self_attr(base) and kind == "expr" and not path:
                self._attr(base.attr.value, self.d("mutate", stmt, stmt, conds, None))
        elif isinstance(target, cst.Attribute) and self._self_attr(target):
            if kind == "expr" and not path:
                self._attr(target.attr.value, self.d("expr", value, stmt, conds))
            else:
                self._attr(target.attr.value, self.d("unpack" if kind == "expr" else kind, value, stmt, conds, path))
        elif isinstance(target, cst.StarredElement):
            self.bind_target(target.value, "opaque", value, stmt, env, conds)

    def _self_attr(self, node) -> TypeGuard[cst.Attribute]:
        return (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                and self.scope.self_name is not None and node.value.value == self.scope.self_name)

    def _attr(self, name: str, d: Def) -> None:
        self.scope.attr_defs.setdefault(name, []).append(d)


@dataclass(frozen=True, eq=False)
class Alternatives:
    """A flow condition that holds where one of ``options`` (each a tuple of
    conditions, all of which hold) does; its polarity is always True."""

    options: tuple


def _on_path(arm: Env, other: Env, cond) -> Env:
    """``arm``'s definitions that reach the join through this arm only, with the
    arm's condition added: ``x = a`` then ``if t: x = b`` gives ``a`` only where
    ``t`` may be false. Copies are made once per arm and definition."""
    out = arm
    test, polarity, _stmt = cond
    for name, defs in arm.items():
        theirs = other.get(name, ())
        if defs is theirs:
            continue
        ids = {id(d) for d in theirs}
        tagged = tuple(d if id(d) in ids or _made_under(d, test, polarity) else
                       d.under(Tagged(d.conds, cond)) for d in defs)
        if any(a is not b for a, b in zip(tagged, defs)):
            if out is arm:
                out = dict(arm)
            out[name] = tagged
    return out


def _made_under(d: Def, test, polarity) -> bool:
    """Was ``d`` made inside the arm of ``test`` (then it needs no tag)? Read from the
    conditions it was made under (as deep as the statement is nested), never from the tags
    joins added: a long if-chain tags a definition once per branch, and scanning those at
    every later join made the flow cubic in the chain (TransformerEngine's 1,300-line
    get_attention_backend: 4.2 GB, 130 s)."""
    return any(c[0] is test and c[1] == polarity for c in (d.conds if d.born is None else d.born))


@dataclass(frozen=True, eq=False)
class Tagged:
    """Flow conditions ``parent`` plus ``cond``: a join's tag shares its definition's
    conditions instead of copying them, and the evaluator decides each link once."""

    parent: Any  # a tuple of conditions or another Tagged
    cond: tuple  # (test expression, polarity, statement)

    def __iter__(self):
        links = []
        node = self
        while isinstance(node, Tagged):
            links.append(node.cond)
            node = node.parent
        yield from node
        yield from reversed(links)

    def __bool__(self) -> bool:
        return True


def _del_names(node) -> list[str]:
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, (cst.Tuple, cst.List)):
        out = []
        for el in node.elements:
            out.extend(_del_names(el.value))
        return out
    return []


def build_scope(node, parent: Scope | None, is_exit: Callable[[cst.Call], bool], method: bool = False,
                may_exit=None, mutators: frozenset = MUTATORS) -> Scope:
    """Reaching definitions for one module, class body or function body; ``mutators``: the
    methods whose call changes the name it is called on (MUTATORS and a library's)."""
    scope = Scope(node, parent, mutators=mutators)
    b = _Builder(scope, is_exit, may_exit)
    env: Env = {}
    if isinstance(node, cst.FunctionDef):
        ps = node.params
        allp = [*ps.posonly_params, *ps.params, *ps.kwonly_params]
        for p in allp:
            scope.params[p.name.value] = p
            env[p.name.value] = (b.d("param", p, None, ()),)
        for star in (ps.star_arg, ps.star_kwarg):
            if isinstance(star, cst.Param):
                scope.params[star.name.value] = star
                env[star.name.value] = (b.d("param", star, None, ()),)
        if method and allp and not _is_static(node):
            scope.self_name = allp[0].name.value
        elif method and allp and is_classmethod(node):
            scope.cls_name = allp[0].name.value
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else None
        if body is None:
            out, conds = b.body(node.body, env, ()), ()
        else:
            out, conds = b.top(body, env)
    else:
        out, conds = b.top(node.body.body if isinstance(node, cst.ClassDef) else node.body, env)
    scope.final = out if out is not None else {}
    scope.falls_through = out is not None
    scope.final_conds = conds
    return scope


def loop_steps(loop: cst.For, mutators: frozenset = MUTATORS) -> list | None:
    """The small statements of a loop body the evaluator can replay per item
    (``x = ...``, ``acc += [...]``, ``acc.append(...)``, ``acc[k] = v``), or None
    when the body holds anything else (branches, nested loops, exits)."""
    if not isinstance(loop.target, cst.Name) or not isinstance(loop.body, cst.IndentedBlock):
        return None
    steps: list[cst.Assign | cst.AugAssign | cst.Expr] = []
    for stmt in loop.body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return None
        for small in stmt.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                    isinstance(small.targets[0].target, (cst.Name, cst.Subscript)):
                steps.append(small)
            elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                steps.append(small)
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and \
                    isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value in mutators and \
                    isinstance(small.value.func.value, cst.Name):
                steps.append(small)
            elif not isinstance(small, cst.Pass):
                return None
    return steps


@dataclass(frozen=True, eq=False)
class Returns:
    """A flow condition standing for "this call of a helper that may end the run
    (``pytest.skip`` inside it) returned": the code after it runs only there."""

    call: Any


@dataclass(frozen=True, eq=False)
class LoopRuns:
    """A branch condition standing for "this ``for`` loop's iterable has an item"."""

    iter: Any


@dataclass(frozen=True)
class ImportsOK:
    """A branch condition standing for "the imports of this ``try`` body all
    succeed": its body runs where they exist, an ``except`` handler that catches
    ImportError where one is missing (the evaluator asks the API tables)."""

    names: tuple  # dotted names the body imports
    handler: tuple | None = None  # exception names the handler catches (() for a bare except)
    # dotted attribute chains the body reads (``torch.get_autocast_dtype``), as written: asked
    # only for a handler that catches nothing but what a missing name raises (ATTR_FALLBACK)
    attrs: tuple = ()


# A handler that catches only these (and AttributeError among them) is a version probe's
# fallback: ``except (AttributeError, TypeError): d = torch.get_autocast_gpu_dtype()``.
ATTR_FALLBACK = frozenset({"AttributeError", "ImportError", "ModuleNotFoundError", "TypeError", "NameError"})


class _Chains(cst.CSTVisitor):
    """The outermost dotted Name.attr chains a try body reads, not inside a def, class or lambda."""

    def __init__(self) -> None:
        self.out: list[str] = []

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False

    def visit_Attribute(self, node) -> bool:
        d = dotted(node)
        if d:
            self.out.append(d)
            return False
        return True


def _imports_probe(stmt) -> ImportsOK | None:
    names = []
    for s in stmt.body.body:
        if isinstance(s, cst.SimpleStatementLine):
            for small in s.body:
                if isinstance(small, cst.Import):
                    names += [dotted(a.name) for a in small.names]
                elif isinstance(small, cst.ImportFrom) and not small.relative:
                    names += [q.name for n, q in import_bindings(small) if n != "*"]
    names = [n for n in names if n]
    attrs: tuple = ()
    if any(_handler_types(h) and set(_handler_types(h)) <= ATTR_FALLBACK and "AttributeError" in _handler_types(h)
           for h in stmt.handlers):
        chains = _Chains()
        walk(stmt.body, chains)
        attrs = tuple(dict.fromkeys(chains.out))
    return ImportsOK(tuple(names), attrs=attrs) if (names or attrs) and stmt.handlers else None


def _handler_types(h) -> tuple:
    if h.type is None:
        return ()
    types = h.type.elements if isinstance(h.type, cst.Tuple) else [h.type]
    out = []
    for t in types:
        e = t.value if isinstance(t, cst.Element) else t
        name = dotted(cast(cst.BaseExpression, e))  # a StarredElement too: dotted gives None
        out.append(name.rsplit(".", 1)[-1] if name else "?")
    return tuple(out)


def step_name(small) -> str | None:
    """The name a replayable loop statement sets or changes."""
    if isinstance(small, cst.AugAssign):
        return cast(cst.Name, small.target).value  # loop_steps keeps only a name's
    if isinstance(small, cst.Expr):
        return cast(Any, small.value).func.value.value  # ``name.mutator(...)`` (loop_steps)
    t = small.targets[0].target
    if isinstance(t, cst.Name):
        return t.value
    return t.value.value if isinstance(t.value, cst.Name) else None


def _accumulators(loop: cst.For, mutators: frozenset) -> list[str]:
    """Names a replayable loop body builds up (``flags += [...]``, ``flags.append(...)``),
    not those it rebinds each time (``num = arch.replace(".", "")``)."""
    steps = loop_steps(loop, mutators)
    if not steps:
        return []
    assigned = {cast(cst.Name, s.targets[0].target).value for s in steps
                if isinstance(s, cst.Assign) and isinstance(s.targets[0].target, cst.Name)}
    out: list[str] = []
    for small in steps:
        name = step_name(small)
        # (loop_steps: the loop's target is a name)
        if name is not None and name not in out and name not in assigned and name != cast(cst.Name, loop.target).value:
            out.append(name)
    return out


def is_classmethod(fn: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "classmethod" for d in fn.decorators)


def _is_static(fn: cst.FunctionDef) -> bool:
    for d in fn.decorators:
        dec = d.decorator
        if isinstance(dec, cst.Name) and dec.value in ("staticmethod", "classmethod"):
            return True
    return False
