"""islpy helpers: iteration domains and exact index ranges of a nest.

isl (the integer set library PPCG uses) gives exact answers for affine
bounds, triangular domains and symbolic parameters, and prints piecewise
results back as C expressions, which is what code generation needs for copy
extents.  Loop dimensions are named `L<lid>` (sibling loops may share a C name).
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
import itertools
from math import lcm, prod

import islpy as isl

from ..intexpr import CInt, IntExpr, op as int_op
from ..ir import Loop, Nest, Statement
from ..pipeline import memo
from ..symbolic import Poly, Sym
from ..records import dataclass


@lru_cache(maxsize=16384)
def parse_set(text: str) -> isl.Set:
    """isl.Set(text), parsed once: the dependence, reorder and distribution analyses build the same sets and
    relations again and again (PolyBench: 3,600 relations, 1,400 distinct), and isl's parser is most of their
    cost.  Sharing is safe: islpy's operations copy their arguments and return new objects."""
    return isl.Set(text)


@lru_cache(maxsize=16384)
def parse_map(text: str) -> isl.Map:
    """isl.Map(text), parsed once (see parse_set)."""
    return isl.Map(text)


@lru_cache(maxsize=16384)
def _relation(params: tuple[str, ...], ins: tuple[str, ...], outs: tuple[str, ...], exists: tuple[str, ...],
              cons: tuple["Con | AnyOf", ...]) -> isl.Map:
    """`_basic_relation` of the constraints, a union over the choices of one alternative of each disjunction."""
    plain = [c for c in cons if isinstance(c, Con)]
    choices = [c.alternatives for c in cons if isinstance(c, AnyOf)]
    out = None
    for pick in itertools.product(*choices):
        piece = _basic_relation(params, ins, outs, exists, tuple(plain) + tuple(c for alt in pick for c in alt))
        out = piece if out is None else out.union(piece)
    return out


def _basic_relation(params: tuple[str, ...], ins: tuple[str, ...], outs: tuple[str, ...], exists: tuple[str, ...],
                    cons: tuple["Con", ...]) -> isl.Map:
    """`[params] -> { [ins] -> [outs] : exists (exists : cons) }`, built with isl's constraint functions: isl's
    parser took 0.8 ms a relation (each `and` an intersection, simplified), most of the dependence test's time.
    The same relation as parsing its text gives (checked equal, and printed the same, on the 1,497 of
    PolyBench); the existential variables are projected out exactly (isl keeps them as integer divisions)."""
    space = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, in_=list(ins), out=list(outs + exists),
                                        params=list(params))
    where = {n: (isl.dim_type.param, k) for k, n in enumerate(params)}
    where.update((n, (isl.dim_type.in_, k)) for k, n in enumerate(ins))
    where.update((n, (isl.dim_type.out, k)) for k, n in enumerate(outs + exists))
    bmap = isl.BasicMap.universe(space)
    for c in cons:
        k = (isl.Constraint.equality_alloc if c.op == "=" else isl.Constraint.inequality_alloc)(space)
        for name, n in c.terms:
            if name == "":
                k = k.set_constant_val(n)
            elif name in where:
                k = k.set_coefficient_val(*where[name], n)
            else:               # as isl's parser refuses an unknown name
                raise isl.Error(f"'{name}' is not a dimension of the relation")
        bmap = bmap.add_constraint(k)
    if exists:
        bmap = bmap.project_out(isl.dim_type.out, len(outs), len(exists))
    return isl.Map.from_basic_map(bmap)


def dim(lid: int) -> str:
    """The isl name of loop `lid`'s variable: prefixed, since the nest's parameters keep their C names and a
    program may call one L1 (NPB's LU does)."""
    return f"c2gpu_L{lid}"


def _rename(p: Poly, names: dict[str, str]) -> Poly:
    return p.substitute({v: Poly.var(names[v]) for v in p.variables if v in names})


_ISL_TERMS: dict = {}     # (Poly, its variables' isl names) -> isl term


def poly_to_isl(p: Poly, names: dict[str, str]) -> str:
    """An affine Poly as an isl term, scaled to integers: returns 'num' or '(num)/den' wrapped in floor.
    Kept per (Poly, names of its variables): the analyses print the same bounds and subscripts again for every
    domain and relation they build, and the renaming (Poly arithmetic) costs more than isl's parse."""
    key = (p, tuple(sorted((v, names[v]) for v in p.variables if v in names)))
    text = _ISL_TERMS.get(key)
    if text is None:
        if len(_ISL_TERMS) > 65536:
            _ISL_TERMS.clear()
        text = _ISL_TERMS[key] = _poly_to_isl(p, names)
    return text


def _poly_to_isl(p: Poly, names: dict[str, str]) -> str:
    p = _rename(p, names)
    den = lcm(*[c.denominator for _, c in p.terms]) if p.terms else 1
    q = p.scale(Fraction(den))
    text = q.to_c()
    return text if den == 1 else f"floor(({text})/{den})"


def sym_to_isl(s: Sym, names: dict[str, str]) -> str:
    num = poly_to_isl(s.num, names)
    return num if s.den == 1 else f"floor(({num})/{s.den})"


def loop_path(nest: Nest, stmt: Statement) -> list[Loop]:
    by_id = {lp.lid: lp for lp in nest.loops()}
    return [by_id[i] for i in stmt.loop_ids]


def domain_constraints(loops: list[Loop], names: dict[str, str], with_guards=()) -> list[str]:
    """Constraints of normalized loops (0 <= L < trip), or of loops left as written because a bound is a min or
    max (one constraint per piece), plus their affine guards."""
    cons = []
    for lp in loops:
        v = names[lp.var]
        if lp.trip_count is not None and lp.normalized:
            cons.append(f"0 <= {v} < {sym_to_isl(lp.trip_count, names)}")
        elif lp.polyhedral:
            down = lp.step < 0
            cons.extend(f"{v} {'<=' if down else '>='} {poly_to_isl(p, names)}" for p in lp.lowers)
            cons.extend(f"{v} {'>' if down else '<'} {poly_to_isl(p, names)}" for p in lp.uppers)
            if abs(lp.step) > 1:
                cons.append(f"exists (c2gpu_e_{v} : {v} = {poly_to_isl(lp.lowers[0], names)} + {lp.step}*c2gpu_e_{v})")
        else:
            raise ValueError(f"loop '{lp.var}' has no affine normalized bounds")
        for g in lp.guards:
            cons.extend(_guard(g, names))
    for g in with_guards:
        cons.extend(_guard(g, names))
    return cons


def _guard(g, names) -> list[str]:
    def conjunction(cons) -> list[str]:
        return [f"{poly_to_isl(c.expr, names)} {'>=' if c.kind == 'ge' else '='} 0" for c in cons]
    if g.constraints is not None:
        return conjunction(g.constraints)
    if g.alternatives is not None:     # an else branch: exact, so that a region holds only elements the C touches
        return ["(" + " or ".join("(" + " and ".join(conjunction(alt)) + ")" for alt in g.alternatives) + ")"]
    # a data-dependent guard: dropping it enlarges the domain, so a region may hold elements the C never touches
    return []


def statement_domain(nest: Nest, stmt: Statement) -> tuple[isl.Set, dict[str, str]]:
    """The statement's iteration domain and the isl names of its loops.  Nests and statements are frozen,
    so the answer is kept per nest and statement object (pipeline.memo: the analyses ask for the same domain
    hundreds of times per file); the table holds the statement, so its id is not reused."""
    table = memo(nest, "statement domains")
    hit = table.get(id(stmt))
    if hit is None or hit[0] is not stmt:
        hit = table[id(stmt)] = (stmt, *_statement_domain(nest, stmt))
    return hit[1], dict(hit[2])


def _statement_domain(nest: Nest, stmt: Statement) -> tuple[isl.Set, dict[str, str]]:
    loops = loop_path(nest, stmt)
    names = {lp.var: dim(lp.lid) for lp in loops}
    cons = domain_constraints(loops, names, stmt.guards)
    params = ", ".join(nest.params)
    dims = ", ".join(names[lp.var] for lp in loops)
    text = f"[{params}] -> {{ [{dims}] : {' and '.join(cons) or 'true'} }}"
    return parse_set(text), names


def access_shape(nest: Nest, access) -> tuple[tuple[Poly | None, ...], tuple[Poly, ...] | None]:
    """(subscripts per dimension, row-major extents of the inner dimensions) as the array is laid out.

    A pointer accessed as a[i*n + j] and delinearized gives ((i, j), (n,)); a declared
    `float A[N][M]` accessed as A[i][j] gives ((i, j), (M,)); a 1-D access gives ((e,), ()).
    The inner extents are None when unknown (then only a 1-D view is possible).
    """
    if access.linearized is not None and len(access.subscripts) == 1:
        p = access.subscripts[0]
        row, col = access.linearized
        # recover the row width from p = row*W + col
        rest = p - col                       # = row * width
        width = None
        for v in sorted(row.variables):
            q, _ = rest.split_by(v)          # the coefficient of v in row*width is coeff(v, row) * width
            c = row.coeff(v)
            if c and q.variables.isdisjoint(row.variables):
                cand = q.scale(Fraction(1) / c)
                if row * cand == rest:       # a constant offset in the row (i_n + 1) is fine
                    width = cand
                    break
        if width is None and row.is_const() and row.const_value() != 0:
            width = rest.scale(Fraction(1) / row.const_value())
        return (row, col), ((width,) if width is not None else None)
    dims = nest.array(access.array).dims
    subs = access.subscripts
    if len(subs) == 1:
        return subs, ()
    inner = dims[len(dims) - len(subs) + 1:] if len(dims) >= len(subs) else ()
    if len(inner) != len(subs) - 1 or any(d is None for d in inner):
        return subs, None
    return subs, tuple(inner)


def subscript_ranges(nest: Nest, accesses, ndims: int, flat: bool = False) -> list[tuple[isl.PwAff, isl.PwAff]] | None:
    """Exact (min, max) of each subscript over the iteration domains of the given accesses.

    flat: use the subscripts as written (1-D) even where a 2-D form was recovered.
    Kept per (nest object, accesses) (pipeline.memo): the shared-memory analysis asks for the same array's
    region once per block shape the search tries, and code generation once per candidate plan it prints
    (PolyBench: 1,832 calls, 208 distinct).  islpy's operations never change their arguments, so the kept
    PwAffs can be shared.
    """
    key = (tuple(accesses), ndims, flat)
    try:
        hash(key)
    except TypeError:
        return _subscript_ranges(nest, accesses, ndims, flat)
    table = memo(nest, "subscript ranges")
    if key not in table:
        ranges = _subscript_ranges(nest, accesses, ndims, flat)
        table[key] = None if ranges is None else tuple(ranges)
    return None if table[key] is None else list(table[key])


def _subscript_ranges(nest: Nest, accesses, ndims: int, flat: bool) -> list[tuple[isl.PwAff, isl.PwAff]] | None:
    out: list[list] = [[None, None] for _ in range(ndims)]
    params = ", ".join(nest.params)
    wanted = _lookup(accesses)
    # (loops, guards, subscripts) already bounded: generated and inlined code repeats a[i] thousands of times, in
    # statements whose iteration domain is the same (their loops and guards)
    done: set = set()
    for stmt in nest.statements():
        for a in stmt.accesses:
            if a not in wanted:
                continue
            subs = a.subscripts if flat else access_shape(nest, a)[0]
            if len(subs) != ndims or any(x is None or not x.is_affine() for x in subs):
                return None
            key = (stmt.loop_ids, stmt.guards, tuple(subs))
            if key in done:
                continue
            done.add(key)
            dom, names = statement_domain(nest, stmt)
            if dom.is_empty():
                continue  # a statement that never runs touches nothing
            dims = ", ".join(names[lp.var] for lp in loop_path(nest, stmt))
            for k, sub in enumerate(subs):
                # (a prefixed name: a parameter of the nest may be called e)
                m = isl.Map(f"[{params}] -> {{ [{dims}] -> [c2gpu_e] : c2gpu_e = {poly_to_isl(sub, names)} }}")
                vals = dom.apply(m)
                lo, hi = vals.dim_min(0), vals.dim_max(0)
                # over the union of the statements' domains: min/max would keep only the sizes for which
                # every statement runs, and leave the range undefined (any value) for the others
                out[k][0] = lo if out[k][0] is None else out[k][0].union_min(lo)
                out[k][1] = hi if out[k][1] is None else out[k][1].union_max(hi)
    if any(lo is None for lo, _ in out):
        return None
    return [(lo, hi) for lo, hi in out]


def touched_cells(nest: Nest, accesses, ndims: int) -> isl.Set | None:
    """The cells the accesses touch, as one set over the nest's parameters ([c0, ..., c<ndims-1>]), or None when it
    is not exact: a loop or guard left out of a domain (a loop run whole, a data-dependent condition, a part of
    an expression that may not run) would make it larger than what the C touches."""
    params = ", ".join(nest.params)
    cells = ", ".join(f"c2gpu_c{k}" for k in range(ndims))
    wanted = _lookup(accesses)
    out = None
    for stmt in nest.statements():
        mine = [a for a in stmt.accesses if a in wanted]
        if not mine:
            continue
        loops = loop_path(nest, stmt)
        guards = list(stmt.guards) + [g for lp in loops for g in lp.guards]
        if stmt.kind == "loop" or any(g.constraints is None and g.alternatives is None for g in guards):
            return None
        try:
            dom, names = statement_domain(nest, stmt)
        except ValueError:
            return None                        # a loop without affine bounds
        dims = ", ".join(names[lp.var] for lp in loops)
        for a in mine:
            if a.when or len(a.subscripts) != ndims or any(x is None or not x.is_affine() for x in a.subscripts):
                return None
            eqs = " and ".join(f"c2gpu_c{k} = {poly_to_isl(x, names)}" for k, x in enumerate(a.subscripts))
            image = dom.apply(isl.Map(f"[{params}] -> {{ [{dims}] -> [{cells}] : {eqs} }}"))
            out = image if out is None else out.union(image)
    return None if out is None else out.coalesce()


def params_at(nest: Nest, env: dict[str, int]) -> isl.Set | None:
    """The one point of the nest's parameter space at the sizes `env` (None: a parameter has no value there)."""
    if any(p not in env for p in nest.params):
        return None
    fixed = " and ".join(f"{p} = {int(env[p])}" for p in nest.params)
    return isl.Set(f"[{', '.join(nest.params)}] -> {{ : {fixed or '1 = 1'} }}")


def run_params(nest: Nest, accesses=None) -> isl.Set | None:
    """The sizes (parameter values) for which the nest executes a statement, or, given `accesses`, a statement
    that makes one of them; None when it has no statement."""
    wanted = None if accesses is None else _lookup(accesses)
    out = None
    for stmt in nest.statements():
        if wanted is not None and not any(a in wanted for a in stmt.accesses):
            continue
        p = statement_domain(nest, stmt)[0].params()
        out = p if out is None else out.union(p)
    return None if out is None else out.coalesce()


def _lookup(items) -> "_Wanted":
    """A container of accesses for fast `in` tests."""
    return _Wanted(items)


class _Wanted:
    """Accesses to look others up in: by array name first (a string compare), then by identity, then by equality
    (hashing an Access hashes all its subscripts: inlined code asks about thousands of accesses of other arrays)."""

    def __init__(self, items):
        self.items = list(items)
        self.names = {getattr(a, "array", None) for a in self.items}
        self.ids = {id(a) for a in self.items}
        try:
            self.equal = set(self.items)
        except TypeError:
            self.equal = self.items

    def __contains__(self, a) -> bool:
        if getattr(a, "array", None) not in self.names:
            return False
        return id(a) in self.ids or a in self.equal


def ast_expr(pw: isl.PwAff | isl.Set, params: list[str]):
    """isl's AST expression of a piecewise affine function (or of a parameter condition)."""
    build = isl.AstBuild.from_context(isl.Set(f"[{', '.join(params)}] -> {{ : }}"))
    return build.expr_from_set(pw) if isinstance(pw, isl.Set) else build.expr_from_pw_aff(pw)


def to_c(pw: isl.PwAff | isl.Set, params: list[str]) -> str:
    """A piecewise affine function (or a parameter condition) as a C expression."""
    return _expr_c(ast_expr(pw, params))


def to_cint(pw: isl.PwAff | isl.Set, params: list[str]) -> CInt:
    """to_c's C with the expression it spells (for evaluating it without reading the C back)."""
    e = ast_expr(pw, params)
    return CInt(_expr_c(e), expr_tree(e))


_TREE_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pdiv_q": "/", "pdiv_r": "%", "zdiv_r": "%",
             "fdiv_q": "floord", "minus": "neg", "min": "min", "max": "max", "cond": "?:", "select": "?:",
             "eq": "==", "le": "<=", "lt": "<", "ge": ">=", "gt": ">", "and_": "&&", "and_then": "&&", "or_": "||",
             "or_else": "||"}


def expr_tree(e) -> IntExpr:
    """isl's AST expression as an IntExpr (the operations isl prints for affine functions and their domains)."""
    kind = e.get_type()
    if kind == isl.ast_expr_type.int:
        return Poly.const(int(e.get_val().to_python()))
    if kind == isl.ast_expr_type.id:
        return Poly.var(e.get_id().get_name())
    name = e.get_op_type().name
    if name not in _TREE_OPS:
        raise ValueError(f"isl expression operation {name} has no IntExpr form")
    args = [expr_tree(e.get_op_arg(k)) for k in range(e.get_op_n_arg())]
    if name in ("min", "max", "add", "mul", "and_", "and_then", "or_", "or_else") and len(args) > 2:
        out = args[0]
        for a in args[1:]:
            out = int_op(_TREE_OPS[name], out, a)
        return out
    return int_op(_TREE_OPS[name], *args)


_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pdiv_q": "/", "pdiv_r": "%", "zdiv_r": "%", "eq": "==",
        "le": "<=", "lt": "<", "ge": ">=", "gt": ">", "and_": "&&", "and_then": "&&", "or_": "||", "or_else": "||"}


def _expr_c(e) -> str:
    """isl's C text, except that `floord(a, d)` (which no C or CUDA header defines) becomes plain C.

    isl prints floor division (non-unit steps: `for (i = 0; i < n; i += 3)` runs floord(n - 1, 3) + 1
    times) as a call to `floord`; the emitted code would not compile.  Only expressions that contain one
    are printed here, fully parenthesised; everything else stays exactly as isl prints it.
    """
    text = e.to_C_str()
    if "floord(" not in text or e.get_type() != isl.ast_expr_type.op:
        return text
    op = e.get_op_type()
    args = [_expr_c(e.get_op_arg(k)) for k in range(e.get_op_n_arg())]
    name = op.name
    if name == "fdiv_q":
        return floor_div_c(*args)
    if name in _OPS:
        return "(" + f" {_OPS[name]} ".join(f"({a})" for a in args) + ")"
    if name == "minus":
        return f"(-({args[0]}))"
    if name in ("min", "max"):
        return f"{name}(" + ", ".join(args) + ")" if len(args) == 2 else \
            _nest_minmax(name, args)
    if name in ("cond", "select"):
        return f"(({args[0]}) ? ({args[1]}) : ({args[2]}))"
    return text


def floor_div_c(a: str, d: str) -> str:
    """isl's `floord(a, d)` in plain C: its divisor is a positive constant, and it rounds towards minus infinity."""
    return f"(({a}) >= 0 ? ({a}) / ({d}) : -((-({a}) + ({d}) - 1) / ({d})))"


def _nest_minmax(name: str, args: list[str]) -> str:
    out = args[0]
    for a in args[1:]:
        out = f"{name}({out}, {a})"
    return out


# --------------------------------------------------------------------------- iteration domains in isl (the encoder)

class Unencodable(Exception):
    """A construct the encoder cannot express exactly and must not approximate (a reused loop variable)."""


@dataclass
class Domain:
    """A statement's iteration domain as isl constraint text over dimensions <prefix>0, <prefix>1, ..."""
    names: dict[str, str]           # IR loop variable -> isl dimension name
    dims: list[str]
    exists: list[str]               # existential variables (non-unit steps)
    cons: list[Con]
    exact: bool                     # False: something was left out (a larger domain), see `why`
    why: str
    steps: list[int | None]


Form = dict[str, Fraction]          # an affine form: {isl name: coefficient}, "" = the constant


class Encoder:
    """The IR of one nest in isl's terms: one translator for the dependence and subscript checks.

    Loop variables of a chain become set dimensions; every other variable is a parameter, named
    p0, p1, ... in the order met (so that any C or IR name, `min` or "t#2", is safe for isl);
    `params` maps names back.
    """

    def __init__(self, nest: Nest):
        self.loop_vars = {lp.var for lp in nest.loops()}
        self.params: dict[str, str] = {}            # parameter -> isl name p<k>

    def lin(self, p: Poly | None, names: dict[str, str]) -> Form | None:
        """An affine Poly as a form, or None.

        Variables that are loop variables of the chain map to its dimensions;
        other loop variables (not enclosing this site) make it unusable; anything
        else is a symbolic parameter (the frontend only lets names into a Poly
        when they are not assigned in the nest).
        """
        if p is None or not p.is_affine():
            return None
        out: Form = {}
        for mono, c in p.terms:
            if not mono:
                key = ""
            else:
                ((v, _power),) = mono
                if v in names:
                    key = names[v]
                elif v in self.loop_vars:
                    return None
                else:
                    key = self.params.setdefault(v, f"p{len(self.params)}")
            out[key] = out.get(key, Fraction(0)) + c
        return out

    def guard(self, g, names: dict[str, str]) -> "list[Con | AnyOf] | None":
        """The guard's constraints (a disjunction, `!=` or `||` or an else branch, as one AnyOf), or None."""
        def conjunction(cons) -> list[Con] | None:
            forms = [self.lin(c.expr, names) for c in cons]
            return None if None in forms else [con(f, "=" if c.kind == "eq" else ">=") for f, c in zip(forms, cons)]
        if g.constraints is not None:
            return conjunction(g.constraints)
        if g.alternatives is None:
            return None
        alternatives = [conjunction(alt) for alt in g.alternatives]
        return None if None in alternatives else [AnyOf(tuple(tuple(alt) for alt in alternatives))]

    def domain(self, chain, guards, prefix: str, label=lambda lp: lp.var) -> Domain:
        """The iteration domain of a statement (or condition) inside the loops `chain` under `guards`.

        Each enclosing loop contributes its bounds (lower <= v < upper for a
        positive step, upper < v <= lower for a negative one, v - lower a
        multiple of the step through an existential) and the guards around it;
        `guards` are those inside the innermost loop.  What cannot be expressed
        is dropped (a larger domain: sound) and the domain is then not exact.
        `label(loop)` names a loop in messages (its C variable).
        """
        names: dict[str, str] = {}
        dom = Domain(names, [], [], [], True, "", [])

        def inexact(why: str) -> None:
            if dom.exact:
                dom.exact, dom.why = False, why

        def add_guard(g) -> None:
            cons = self.guard(g, names)
            if cons is not None and all(c in dom.cons for c in cons):
                return                          # (an `if` around a loop guards the statements in it too)
            if cons is None:
                inexact(f"the condition '{g.text}' (line {g.loc.line}) is not affine, so it was left out")
            elif prod(len(c.alternatives) for c in dom.cons + cons if isinstance(c, AnyOf)) > MAX_CASES:
                inexact(f"the condition '{g.text}' (line {g.loc.line}) makes too many cases, so it was left out")
            else:
                dom.cons.extend(cons)

        for k, lp in enumerate(chain):
            for g in lp.guards:                       # evaluated before the loop starts: outer variables only
                add_guard(g)
            if lp.var in names:
                raise Unencodable(f"loop variable '{lp.var}' is reused by nested loops")
            v = f"{prefix}{k}"
            names[lp.var] = v
            dom.dims.append(v)
            x = {v: Fraction(1)}
            step = lp.step or 0
            dom.steps.append(step or None)
            # a bound written as a min or max of pieces: one constraint per piece (all of them hold)
            lowers = [self.lin(p, names) for p in lp.lowers]
            uppers = [self.lin(p, names) for p in lp.uppers]
            what = f"the bounds of loop '{label(lp)}' (line {lp.loc.line}) are not affine, so they were left out"
            if step:
                sign = 1 if step > 0 else -1      # counting down, the start is the top and the end below
                if lowers and None not in lowers:
                    dom.cons.extend(con(sub(x, lower) if sign > 0 else sub(lower, x), ">=") for lower in lowers)
                else:
                    inexact(what)
                if uppers and None not in uppers:
                    # v < upper, integers: upper - v - 1 >= 0 (counting down, v > upper: v - upper - 1 >= 0)
                    dom.cons.extend(con(sub(sub(upper, x), {"": Fraction(1)}) if sign > 0
                                        else sub(sub(x, upper), {"": Fraction(1)}), ">=") for upper in uppers)
                elif step > 0 and lp.normalized and lp.trip_count is not None \
                        and self.lin(lp.trip_count.num, names) is not None:
                    # v < floor(num/den)  <=>  den*(v + 1) <= num   (integers, den >= 1)
                    num = self.lin(lp.trip_count.num, names)
                    dom.cons.append(con(sub(sub(num, x, lp.trip_count.den), {"": Fraction(lp.trip_count.den)}), ">="))
                else:
                    inexact(what)
            else:
                inexact(f"loop '{label(lp)}' (line {lp.loc.line}) has no constant step")
            if abs(step) > 1:
                if len(lowers) == 1 and lowers[0] is not None:
                    # (the start must be one value: a stride from the max of several is not affine)
                    e = f"{prefix}e{k}"
                    dom.exists.append(e)
                    dom.cons.append(con(sub(sub(x, lowers[0]), {e: Fraction(1)}, step), "="))
                else:
                    inexact(what)
        for g in guards:
            add_guard(g)
        self._cases(dom)
        return dom

    def _cases(self, dom: Domain) -> None:
        """The domain's disjunctions multiplied out into the cases that hold somewhere, given its other
        constraints (`j != 0` inside `0 <= j < n` is only `j > 0`): none left, one conjunction of plain
        constraints, or one AnyOf of at most MAX_PIECES cases; with more, the disjunctions are dropped (a larger
        domain, not exact)."""
        choices = [c.alternatives for c in dom.cons if isinstance(c, AnyOf)]
        if not choices:
            return
        plain = [c for c in dom.cons if isinstance(c, Con)]
        cases = []
        for pick in itertools.product(*choices):
            case = tuple(c for alt in pick for c in alt)
            if not self._set(dom, plain + list(case)).is_empty():
                cases.append(case)
        if len(cases) > MAX_PIECES:
            dom.cons = plain
            if dom.exact:
                dom.exact, dom.why = False, "the conditions make too many cases, so they were left out"
        elif len(cases) == 1:
            dom.cons = plain + list(cases[0])
        elif cases:
            dom.cons = plain + [AnyOf(tuple(cases))]
        else:
            dom.cons = plain + [c for alt in next(itertools.product(*choices)) for c in alt]   # never runs: any case

    def space(self) -> str:
        return "[" + ", ".join(self.params.values()) + "] -> "

    def relation(self, src: Domain, snk: Domain, common: int, cons: list[Con]) -> isl.Map:
        """Pairs of iterations of the `common` shared loops for which `cons` holds (the rest projected out)."""
        exists = src.dims[common:] + src.exists + snk.dims[common:] + snk.exists
        return _relation(tuple(self.params.values()), tuple(src.dims[:common]), tuple(snk.dims[:common]),
                         tuple(exists), tuple(cons))

    def points(self, dom: Domain, cons: list[str]) -> isl.Set:
        """The iterations of `dom` (all its dimensions) where `cons` also hold."""
        return self._set(dom, dom.cons + cons)

    def _set(self, dom: Domain, cons: list) -> isl.Set:
        """The points of `dom`'s dimensions (its existential variables projected out) where `cons` hold."""
        body = " and ".join(map(str, cons)) or "0 = 0"
        if dom.exists:
            body = f"exists ({', '.join(dom.exists)} : {body})"
        return parse_set(f"{self.space()}{{ [{', '.join(dom.dims)}] : {body} }}")


def sub(a: Form, b: Form, k: int | Fraction = 1) -> Form:
    """a - k*b."""
    out = dict(a)
    for v, c in b.items():
        out[v] = out.get(v, Fraction(0)) - k * c
    return out


@dataclass(frozen=True)
class Con:
    """An affine constraint `coefficient * name + ... + constant >= 0` (op ">=") or `= 0` (op "="), with integer
    coefficients; str() is its isl text."""
    terms: tuple[tuple[str, int], ...]      # (isl name, coefficient), no zero, sorted by name; "" the constant
    op: str

    def __str__(self) -> str:
        parts = [str(n) if v == "" else f"{n}*{v}" for v, n in self.terms]
        return f"{' + '.join(parts) if parts else '0'} {self.op} 0"


@dataclass(frozen=True)
class AnyOf:
    """A disjunction of conjunctions of constraints (a condition with `!=` or `||`, an else branch); str() is
    its isl text."""
    alternatives: tuple[tuple[Con, ...], ...]

    def __str__(self) -> str:
        return "(" + " or ".join("(" + (" and ".join(map(str, alt)) or "0 = 0") + ")" for alt in self.alternatives) + ")"


# The most cases of its conditions' disjunctions an iteration domain keeps (each dependence test is a union of
# that many relations per side; cases that cannot hold are dropped first), and the most it multiplies out
# before that; beyond either, the conditions are dropped, which enlarges the domain (sound)
MAX_PIECES = 8
MAX_CASES = 64


def con(form: Form, op: str) -> Con:
    """`form >= 0` or `form = 0`, scaled to integer coefficients (a positive factor keeps both meanings)."""
    den = lcm(*[c.denominator for c in form.values()]) if form else 1
    scaled = ((v, int(c * den)) for v, c in sorted(form.items()))
    return Con(tuple((v, n) for v, n in scaled if n != 0), op)
