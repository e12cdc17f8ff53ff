"""Symbolic dims: integer polynomials over named symbols.

A dim the analysis cannot pin to a number but can name (``cfg.qk_nope_head_dim``)
is a ``Sym``; sums and products of them stay exact, so ``H * (a + b)`` divided
by ``H`` is ``a + b`` again. Comparisons are three-valued by construction:
``proven_eq``/``proven_ne`` say True only when the difference is the constant 0
(or a nonzero constant); anything else is not proven either way. A symbol names
a size, so it is taken to be a non-negative integer (``provably_nonneg``).

Dims are ``int | Sym | UNKNOWN``; the helpers ``add``/``sub``/``mul``/``floordiv``
take any of these and give UNKNOWN when an operand is unknown.
"""

from __future__ import annotations

from typing import Any

from aicompat.values import UNKNOWN

# A monomial is a sorted tuple of (name, power); () is the constant monomial.
_Mono = tuple


def _mono_mul(a: _Mono, b: _Mono) -> _Mono:
    powers = dict(a)
    for name, p in b:
        powers[name] = powers.get(name, 0) + p
    return tuple(sorted(powers.items()))


def _mono_div(a: _Mono, b: _Mono) -> _Mono | None:
    """a / b when b divides a, else None."""
    powers = dict(a)
    for name, p in b:
        left = powers.get(name, 0) - p
        if left < 0:
            return None
        if left:
            powers[name] = left
        else:
            powers.pop(name, None)
    return tuple(sorted(powers.items()))


def _mono_key(m: _Mono):
    # Display order: higher total degree first, then by names.
    return (-sum(p for _, p in m), m)


class Sym:
    """An immutable polynomial with int coefficients; build with ``Sym.var``."""

    __slots__ = ("terms", "_hash")

    def __init__(self, terms):
        """``terms``: mapping or pairs of monomial -> coefficient (zeros dropped)."""
        items = terms.items() if isinstance(terms, dict) else terms
        acc: dict = {}
        for mono, coef in items:
            acc[mono] = acc.get(mono, 0) + coef
        self.terms = tuple(sorted(((m, c) for m, c in acc.items() if c), key=lambda t: _mono_key(t[0])))
        self._hash = hash(self.terms) if not self.is_constant() else hash(self.constant())

    @classmethod
    def var(cls, name: str) -> Sym:
        return cls({((name, 1),): 1})

    # -- inspection
    def is_constant(self) -> bool:
        return all(m == () for m, _ in self.terms)

    def constant(self) -> int:
        """The constant term."""
        for m, c in self.terms:
            if m == ():
                return c
        return 0

    def symbols(self) -> frozenset:
        return frozenset(name for m, _ in self.terms for name, _ in m)

    def subs(self, env: dict):
        """The polynomial with the symbols in ``env`` replaced by their values."""
        out: Any = 0
        for m, c in self.terms:
            term: Any = c
            for name, p in m:
                base = env.get(name, Sym.var(name))
                for _ in range(p):
                    term = term * base
            out = out + term
        return normalize(out)

    # -- arithmetic (results are normalized: a constant comes back as an int)
    def __add__(self, other):
        o = _as_sym(other)
        if o is None:
            return NotImplemented
        return normalize(Sym(self.terms + o.terms))

    __radd__ = __add__

    def __neg__(self):
        return normalize(Sym(tuple((m, -c) for m, c in self.terms)))

    def __pos__(self):
        return self

    def __sub__(self, other):
        o = _as_sym(other)
        if o is None:
            return NotImplemented
        return normalize(Sym(self.terms + tuple((m, -c) for m, c in o.terms)))

    def __rsub__(self, other):
        o = _as_sym(other)
        if o is None:
            return NotImplemented
        return normalize(Sym(o.terms + tuple((m, -c) for m, c in self.terms)))

    def __mul__(self, other):
        o = _as_sym(other)
        if o is None:
            return NotImplemented
        out: dict = {}
        for ma, ca in self.terms:
            for mb, cb in o.terms:
                m = _mono_mul(ma, mb)
                out[m] = out.get(m, 0) + ca * cb
        return normalize(Sym(out))

    __rmul__ = __mul__

    # -- identity
    def __eq__(self, other):
        if isinstance(other, Sym):
            return self.terms == other.terms
        if isinstance(other, int) and not isinstance(other, bool):
            return self.is_constant() and self.constant() == other
        return NotImplemented

    def __hash__(self):
        return self._hash

    def __bool__(self):
        raise TypeError("a Sym has no truth value; use proven_eq/proven_ne")

    def __repr__(self):
        if not self.terms:
            return "0"
        parts = []
        for m, c in self.terms:
            factors = [name if p == 1 else f"{name}**{p}" for name, p in m]
            if not factors:
                body = str(abs(c))
            elif abs(c) == 1:
                body = "*".join(factors)
            else:
                body = "*".join([str(abs(c)), *factors])
            sign = "-" if c < 0 else "+"
            parts.append((sign, body))
        first_sign, first = parts[0]
        out = ("-" if first_sign == "-" else "") + first
        for sign, body in parts[1:]:
            out += f" {sign} {body}"
        return out

    __str__ = __repr__


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _as_sym(x) -> Sym | None:
    if isinstance(x, Sym):
        return x
    if _is_int(x):
        return Sym({(): x})
    return None


def is_dim(x) -> bool:
    """An int or a Sym (a known or named dim, not UNKNOWN)."""
    return _is_int(x) or isinstance(x, Sym)


def normalize(x):
    """A constant Sym as an int; anything else unchanged."""
    if isinstance(x, Sym) and x.is_constant():
        return x.constant()
    return x


def _diff(a, b):
    sa, sb = _as_sym(a), _as_sym(b)
    if sa is None or sb is None:
        return None
    return normalize(sa - sb)


def proven_eq(a, b) -> bool:
    """True only when a - b is provably 0."""
    d = _diff(a, b)
    return d is not None and _is_int(d) and d == 0


def proven_ne(a, b) -> bool:
    """True only when a - b is a nonzero constant (``D + 64`` vs ``D``)."""
    d = _diff(a, b)
    return d is not None and _is_int(d) and d != 0


def provably_nonneg(x) -> bool:
    """x >= 0 given that every symbol is a non-negative integer (a size)."""
    s = _as_sym(x)
    return s is not None and all(c >= 0 for _, c in s.terms)


def div_exact(a, b):
    """a // b when b provably divides a exactly (int or Sym), else None."""
    sa, sb = _as_sym(a), _as_sym(b)
    if sa is None or sb is None or not sb.terms:
        return None
    if not sa.terms:
        return 0
    if _is_int(a) and _is_int(b):
        return a // b if a % b == 0 else None
    # Polynomial long division under graded-lex order; with one divisor the
    # remainder is 0 exactly when the divisor divides the dividend.
    names = sorted(sa.symbols() | sb.symbols())

    def order(m: _Mono):
        powers = dict(m)
        vec = tuple(powers.get(n, 0) for n in names)
        return (sum(vec), vec)

    lead_m, lead_c = max(sb.terms, key=lambda t: order(t[0]))
    rest = dict(sa.terms)
    quotient: dict = {}
    for _ in range(256):  # bound the work on pathological input
        if not rest:
            return normalize(Sym(quotient))
        m = max(rest, key=order)
        c = rest[m]
        qm = _mono_div(m, lead_m)
        if qm is None or c % lead_c:
            return None
        qc = c // lead_c
        quotient[qm] = quotient.get(qm, 0) + qc
        for bm, bc in sb.terms:
            pm = _mono_mul(qm, bm)
            rest[pm] = rest.get(pm, 0) - qc * bc
            if rest[pm] == 0:
                del rest[pm]
    return None


def _known(*xs) -> bool:
    return all(is_dim(x) for x in xs)


def add(a, b):
    return normalize(_as_sym(a) + _as_sym(b)) if _known(a, b) else UNKNOWN


def sub(a, b):
    return normalize(_as_sym(a) - _as_sym(b)) if _known(a, b) else UNKNOWN


def mul(a, b):
    if _is_int(a) and a == 0 or _is_int(b) and b == 0:
        return 0  # zero times anything, even an unknown size
    return normalize(_as_sym(a) * _as_sym(b)) if _known(a, b) else UNKNOWN


def product(dims) -> Any:
    out: Any = 1
    for d in dims:
        out = mul(out, d)
    return out


def floordiv(a, b):
    """Python's ``a // b`` for ints; for Syms only an exact quotient, else UNKNOWN."""
    if _is_int(a) and _is_int(b):
        return a // b if b else UNKNOWN
    if not _known(a, b):
        return UNKNOWN
    q = div_exact(a, b)
    return UNKNOWN if q is None else q
