"""Symbolic integer expressions for bounds, subscripts and trip counts.

A `Poly` is a polynomial with rational coefficients over named variables
(loop induction variables and symbolic parameters such as `N`).  Affine
expressions are the polynomials of degree <= 1; the IR keeps subscripts and
bounds as `Poly` and says separately whether they are affine, so a
linearized subscript like `i*n + k` (degree 2: `n` is a parameter) can still be
delinearized later instead of being thrown away.

`Sym` adds the two non-polynomial forms trip counts need: floor division by
a constant (non-unit steps) and `max(0, e)` is *not* modelled: a loop whose
bounds make it empty has trip count <= 0 and callers clamp when evaluating.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Mapping
from .records import dataclass

# A monomial is a sorted tuple of (variable, power); () is the constant term.
Monomial = tuple[tuple[str, int], ...]


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    powers: dict[str, int] = dict(a)
    for var, p in b:
        powers[var] = powers.get(var, 0) + p
    return tuple(sorted(powers.items()))


@dataclass(frozen=True)
class Poly:
    """A polynomial with rational coefficients over named variables: a bound, subscript or trip count."""
    terms: tuple[tuple[Monomial, Fraction], ...] = ()

    def __hash__(self) -> int:
        # kept after the first call: the analyses key their caches on the IR's bounds and subscripts, and a
        # Fraction's hash is computed anew on every call (PolyBench: 180,000 Fraction hashes)
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash(self.terms)
            object.__setattr__(self, "_hash", h)
        return h

    def __reduce__(self):
        return Poly, (self.terms,)      # without the kept hash: another process hashes strings differently

    # -- construction -----------------------------------------------------
    @staticmethod
    def _make(d: Mapping[Monomial, Fraction]) -> "Poly":
        return Poly(tuple(sorted((m, Fraction(c)) for m, c in d.items() if c != 0)))

    @staticmethod
    def const(c: int | Fraction) -> "Poly":
        return Poly._make({(): Fraction(c)})

    @staticmethod
    def var(name: str) -> "Poly":
        return Poly._make({((name, 1),): Fraction(1)})

    @staticmethod
    def lift(x: "Poly | int | Fraction") -> "Poly":
        return x if isinstance(x, Poly) else Poly.const(x)

    def as_dict(self) -> dict[Monomial, Fraction]:
        return dict(self.terms)

    # -- arithmetic ---------------------------------------------------------
    def __add__(self, other: "Poly | int | Fraction") -> "Poly":
        d = self.as_dict()
        for m, c in Poly.lift(other).terms:
            d[m] = d.get(m, Fraction(0)) + c
        return Poly._make(d)

    __radd__ = __add__

    def __neg__(self) -> "Poly":
        return Poly._make({m: -c for m, c in self.terms})

    def __sub__(self, other: "Poly | int | Fraction") -> "Poly":
        return self + (-Poly.lift(other))

    def __rsub__(self, other: "Poly | int | Fraction") -> "Poly":
        return Poly.lift(other) - self

    def __mul__(self, other: "Poly | int | Fraction") -> "Poly":
        d: dict[Monomial, Fraction] = {}
        for m1, c1 in self.terms:
            for m2, c2 in Poly.lift(other).terms:
                m = _mono_mul(m1, m2)
                d[m] = d.get(m, Fraction(0)) + c1 * c2
        return Poly._make(d)

    __rmul__ = __mul__

    def __pow__(self, n: int) -> "Poly":
        out = Poly.const(1)
        for _ in range(n):
            out = out * self
        return out

    def scale(self, f: Fraction) -> "Poly":
        return Poly._make({m: c * f for m, c in self.terms})

    # -- queries --------------------------------------------------------------
    @property
    def variables(self) -> frozenset[str]:
        return frozenset(v for m, _ in self.terms for v, _ in m)

    @property
    def degree(self) -> int:
        return max((sum(p for _, p in m) for m, _ in self.terms), default=0)

    def is_const(self) -> bool:
        return all(m == () for m, _ in self.terms)

    def const_value(self) -> Fraction:
        return self.as_dict().get((), Fraction(0))

    def is_affine(self) -> bool:
        return self.degree <= 1

    def coeff(self, var: str) -> Fraction:
        """Coefficient of the degree-1 monomial `var`."""
        return self.as_dict().get(((var, 1),), Fraction(0))

    def is_integral(self) -> bool:
        return all(c.denominator == 1 for _, c in self.terms)

    def substitute(self, env: Mapping[str, "Poly | int | Fraction"]) -> "Poly":
        out = Poly()
        for m, c in self.terms:
            t = Poly.const(c)
            for var, p in m:
                t = t * (Poly.lift(env[var]) ** p if var in env else Poly.var(var) ** p)
            out = out + t
        return out

    def evaluate(self, env: Mapping[str, int | Fraction]) -> Fraction:
        missing = self.variables - set(env)
        if missing:
            raise KeyError(", ".join(sorted(missing)))
        total = Fraction(0)
        for m, c in self.terms:
            t = c
            for var, p in m:
                t *= Fraction(env[var]) ** p
            total += t
        return total

    def split_by(self, var: str) -> tuple["Poly", "Poly"]:
        """Return (q, r) with self = q*var + r, r free of `var` (q may hold var if degree > 1)."""
        q: dict[Monomial, Fraction] = {}
        r: dict[Monomial, Fraction] = {}
        for m, c in self.terms:
            powers = dict(m)
            if var in powers:
                powers[var] -= 1
                if powers[var] == 0:
                    del powers[var]
                q[tuple(sorted(powers.items()))] = c
            else:
                r[m] = c
        return Poly._make(q), Poly._make(r)

    # -- printing ---------------------------------------------------------------
    def __str__(self) -> str:
        return self.to_c()

    def printed_terms(self) -> tuple[int, list[tuple[str, tuple[str, ...]]]]:
        """How to_c writes the polynomial: the common denominator, and in order each term's sign ("+" or "-")
        and factors (its magnitude first unless it is 1, then its variables, repeated for powers)."""
        # Print a common denominator once: (N*N + N)/2 reads better than N*N/2 + N/2.
        den = 1
        for _, c in self.terms:
            den = den * c.denominator // _gcd(den, c.denominator)
        out = []
        for m, c in sorted(self.terms, key=lambda t: (-sum(p for _, p in t[0]), t[0])):
            n = c * den
            variables = tuple(v for v, p in m for _ in range(p))
            mag = abs(n)
            out.append(("-" if n < 0 else "+", variables if variables and mag == 1 else (str(mag),) + variables))
        return den, out

    def to_c(self) -> str:
        """C-syntax rendering; rational coefficients appear only for trip counts of sums."""
        if not self.terms:
            return "0"
        den, terms = self.printed_terms()
        s = ("-" if terms[0][0] == "-" else "") + "*".join(terms[0][1])
        for sign, factors in terms[1:]:
            s += f" {sign} {'*'.join(factors)}"
        if den != 1:
            s = f"({s})/{den}"
        return s

    def __repr__(self) -> str:
        return f"Poly({self.to_c()!r})"


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


@dataclass(frozen=True)
class Sym:
    """A trip-count style expression: floor(num / den) with num a Poly, den >= 1."""
    num: Poly
    den: int = 1

    @staticmethod
    def of(p: Poly) -> "Sym":
        return Sym(p, 1)

    def as_poly(self) -> Poly | None:
        if self.den == 1:
            return self.num
        if all((c / self.den).denominator == 1 for _, c in self.num.terms):
            return self.num.scale(Fraction(1, self.den))
        return None

    @property
    def variables(self) -> frozenset[str]:
        return self.num.variables

    def evaluate(self, env: Mapping[str, int | Fraction]) -> int:
        v = self.num.evaluate(env)
        return int((v // self.den) if v.denominator == 1 else (v / self.den) // 1)

    def substitute(self, env: Mapping[str, "Poly | int"]) -> "Sym":
        return Sym(self.num.substitute(env), self.den)

    def to_c(self) -> str:
        p = self.as_poly()
        if p is not None:
            return p.to_c()
        return f"({self.num.to_c()})/{self.den}"

    __str__ = to_c


# Sums of powers sum_{i=0}^{T-1} i^k as polynomials in T (Faulhaber), k <= 4.
def _power_sum(k: int, t: Poly) -> Poly:
    f = Fraction
    if k == 0:
        return t
    if k == 1:
        return (t * t - t).scale(f(1, 2))
    if k == 2:
        return (t * (t - 1) * (t * 2 - 1)).scale(f(1, 6))
    if k == 3:
        s1 = (t * t - t).scale(f(1, 2))
        return s1 * s1
    if k == 4:
        return (t * (t - 1) * (t * 2 - 1) * (t * t * 3 - t * 3 - 1)).scale(f(1, 30))
    raise ValueError("power sums above degree 4 are not supported")


def sum_over(body: Poly, var: str, count: Poly) -> Poly | None:
    """sum_{var=0}^{count-1} body, symbolically; None when body has degree > 4 in var."""
    out = Poly()
    for m, c in body.terms:
        powers = dict(m)
        k = powers.pop(var, 0)
        if k > 4:
            return None
        rest = Poly._make({tuple(sorted(powers.items())): c})
        out = out + rest * _power_sum(k, count)
    return out


def poly_from_sum(items: Iterable[Poly]) -> Poly:
    out = Poly()
    for p in items:
        out = out + p
    return out
