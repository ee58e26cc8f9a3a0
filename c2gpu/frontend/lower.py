"""Lower a pycparser AST to the loop-nest IR.

For every function we find the outermost `for` loops (honouring `#pragma scop`
regions and c2gpu's own `#pragma c2gpu port` / `#pragma c2gpu skip` markers)
and describe each nest: loops with affine bounds and trip counts, statements
with guards, array accesses with affine subscripts, scalars, reduction
candidates and operation counts.  Anything we cannot describe exactly becomes
a `Flag` with its source location; lowering never gives up on a whole file
because one nest is strange.

This module finds the nests and prepares them; the rest of lowering lives beside it: the scope and expression
context (context.py), statements (statements.py), reductions (reductions.py), guards and conditions (guards.py),
loop headers (loops.py), delinearization (delinearization.py), a nest's loop tree (nests.py), facts from the
function around a nest (facts.py) and helpers on syntax trees (syntax.py).
"""
from __future__ import annotations

import gc
import os
from collections import Counter
from dataclasses import replace

from pycparser import c_ast

from ..ir import ArrayInfo, Flag, Loc, Loop, Nest, Program, ScalarInfo, Span, Statement
from ..syntax_tree import For
from ..symbolic import Poly
from ..diagnostics import C2GPUError
from .libc import SETS_ERRNO
from .preprocess import INCLUDE_DIR, preprocess
from .objects import FileObjects
from .cxx import c_only_constructs
from .fields import invariant_elements, renamed, struct_fields
from . import initializers
from .inline import Inliner
from .parse import parse_c
from .functions import PureFunction, needed, pure_functions
from .run_order import run_order
from .inductions import Induction, substitute_inductions
from .row_pointers import replace_uses, resolve_entry_pointers, resolve_row_pointers
from .ctypes import CType, decl_type
from ..records import dataclass
from .source import directive_span
from .syntax import Sources, Trees, _walk, copy_tree, loc_of, nodes, swap
from .context import NestContext, Scope, Var, _one_scalar_type
from .guards import _truth
from .nests import NestLowerer
from .facts import FunctionFacts, _entry_values, _main_statics, _place


# --------------------------------------------------------------------------- discovery

@dataclass
class Candidate:
    """An outermost `for` loop found in a function, to be described as a nest: its scope, how it was
    selected (pragma, scop region or automatically) and the pragmas before it."""
    node: c_ast.For
    scope: Scope
    region: str
    outer: str = ""   # "while" when the for sits inside a while loop
    pragmas: tuple[str, ...] = ()
    pragma_spans: tuple[Span, ...] = ()    # where each pragma is
    stands_for: c_ast.Node | None = None   # a rewrite of the nest: the for-statement in the function it replaces
    fields: tuple[tuple[str, str], ...] = ()   # struct fields renamed in it: (variable, the C expression it is)
    inductions: tuple[Induction, ...] = ()     # counters substituted in it (frontend/inductions.py)
    aliases: tuple[str, ...] = ()              # what was rewritten in it, for the reports: pointers replaced by
    #                                            the array they always are (aliases_resolved), calls inlined
    inlined: tuple[str, ...] = ()              # the functions whose calls were inlined in it (calls_inlined)
    not_inlined: tuple[tuple[str, str], ...] = ()   # (function, why its calls in it were not inlined)
    passed: frozenset[tuple] = frozenset()     # where the arguments of the inlined calls name a variable (Coord
    #                                            places): those uses pass no pointer anywhere (FunctionFacts.escapes)


class FileLowerer:
    def __init__(self, ast: c_ast.FileAST, path: str, defines=(), foreign: dict[str, c_ast.FuncDef] | None = None,
                 source: str | None = None):
        self.ast = ast
        self.path = path
        self.source = source            # the text of `path` when it is not the file's (an editor's buffer)
        self.lines: dict[str, list[str] | None] = {}    # the lines of each file a directive is in (directive_span)
        self.foreign = foreign or {}    # functions the program's other files define (program_functions)
        self.main_statics: frozenset[str] = frozenset()   # static arrays of the file that only main names
        # an identifier given as a -D value (`-D N=abc`): named in the messages of what it breaks
        self.macro_origin = {v: f"-D {n}={v}" for n, v in defines if v and v.isidentifier()}
        self.typedefs: dict[str, CType] = {}
        self.functions: dict[str, CType] = {}
        self.globals = Scope()
        self.sources = Sources()        # the way back from the nests' syntax trees (describe_again)
        self.user_functions: set[str] = set()      # defined, or declared outside c2gpu's own headers
        self.notes: list[Flag] = []
        self.has_scop = False
        self.has_port_marker = False
        self.objects: FileObjects | None = None
        self.pure: dict[str, PureFunction] = {}
        self.inlinable: dict[str, c_ast.FuncDef] = {}
        self.structs: dict[str, dict[str, CType]] = {}
        self.only: frozenset[str] | None = None    # the functions whose nests are wanted (None: all)
        # each nest's for-statement, by its place (file, line, column): what describe_again reads
        self.places: dict[tuple[str, int, int], tuple[str, Candidate, FunctionFacts]] = {}

    def directive_span(self, loc: Loc) -> Span:
        """Where the directive at `loc` is in its file (source.directive_span): fix-its replace it."""
        if loc.file not in self.lines:
            try:
                if self.source is not None and loc.file == self.path:
                    text = self.source
                else:
                    with open(loc.file, encoding="utf-8", errors="surrogateescape", newline="") as f:
                        text = f.read()
                self.lines[loc.file] = text.split("\n")
            except OSError:
                self.lines[loc.file] = None
        return directive_span(self.lines[loc.file], loc)

    def run(self) -> list[Nest]:
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.Typedef):
                t = decl_type(ext.type, self.typedefs)
                # `typedef struct {...} vec;`: the struct is known by its typedef's name (fields.struct_fields)
                self.typedefs[ext.name] = replace(t, base=f"struct {ext.name}") if t.base == "struct ?" else t
        self.structs = struct_fields(self.ast, self.typedefs)
        self.main_statics = _main_statics(self.ast)
        self.scan_pragmas(self.ast)
        try:
            self.objects = FileObjects(self.ast, self.path, self.typedefs, lambda n: loc_of(n, Loc(self.path, 0)))
        except RecursionError:       # an expression too deep to walk: no pointer is known to be distinct
            self.objects = None
        self.pure = pure_functions(self.ast, self.typedefs, lambda n: loc_of(n, Loc(self.path, 0)))
        # the functions whose calls a nest may inline (frontend/inline.py): defined here, and not pure (a pure
        # function ports as a __device__ copy instead)
        self.inlinable = {ext.decl.name: ext for ext in self.ast.ext if isinstance(ext, c_ast.FuncDef)
                          and ext.decl.name not in self.pure}
        # and those of the program's other files, which its calls reach when the program is linked (NPB's randlc,
        # in c_randdp.c)
        self.defined = {ext.decl.name: ext for ext in self.ast.ext if isinstance(ext, c_ast.FuncDef)}
        self.inlinable.update({name: fn for name, fn in self.foreign.items() if name not in self.defined})
        self.errno_read = _errno_read(self.ast, Loc(self.path, 0))
        nests: list[Nest] = []
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.Typedef):
                continue
            if isinstance(ext, c_ast.Decl):
                if isinstance(ext.type, c_ast.FuncDecl):
                    self.functions[ext.name] = decl_type(ext.type.type, self.typedefs)
                    if not _from_c2gpu_headers(ext):
                        self.user_functions.add(ext.name)
                elif ext.name:
                    self.globals.vars[ext.name] = Var(decl_type(ext, self.typedefs), "global",
                                                      loc_of(ext, Loc(self.path, 0)), ext.name)
            elif isinstance(ext, c_ast.FuncDef):
                self.functions[ext.decl.name] = decl_type(ext.decl.type.type, self.typedefs)
                self.user_functions.add(ext.decl.name)
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.FuncDef) and (self.only is None or ext.decl.name in self.only):
                nests.extend(self.lower_function(ext))
        return _unique_names(nests)

    def scan_pragmas(self, node: c_ast.Node) -> None:
        for n in nodes(node):
            if isinstance(n, c_ast.Pragma):
                words = n.string.split()
                if words[:1] == ["scop"]:
                    self.has_scop = True
                if words[:2] == ["c2gpu", "port"]:
                    self.has_port_marker = True

    def lower_function(self, fn: c_ast.FuncDef) -> list[Nest]:
        scope = self.globals.child()
        fdecl = fn.decl.type
        for p in (fdecl.args.params if fdecl.args else []):
            if isinstance(p, c_ast.Decl) and p.name:
                t = decl_type(p, self.typedefs)
                storage = "param-array" if t.dims else "param-pointer" if t.pointers else "param"
                scope.vars[p.name] = Var(t, storage, loc_of(p, Loc(self.path, 0)), p.name)
        cands: list[Candidate] = []
        self.find(fn.body, scope, cands, state={"scop": False, "marker": None, "pragmas": [], "pragma_spans": []}, outer="")
        facts = FunctionFacts(fn, self.user_functions, self.inlinable)
        nests = []
        for index, cand in enumerate(cands, 1):
            try:
                nests.append(self.lower_nest(fn.decl.name, cand, facts))
            except RecursionError:
                loc = loc_of(cand.node, Loc(self.path, 0))
                self.notes.append(Flag("not-analysed", f"nest at line {loc.line} is nested too deeply to describe", loc))
            except Exception as e:  # a bug in lowering one nest must cost that nest, not the file
                loc = loc_of(cand.node, Loc(self.path, 0))
                self.notes.append(Flag("not-analysed", f"internal error while describing the nest at line {loc.line}: "
                                                       f"{type(e).__name__}: {e}", loc))
        return nests

    def find(self, node, scope: Scope, out: list[Candidate], state: dict, outer: str) -> None:
        """Collect outermost for loops in statement order, tracking pragmas."""
        if node is None:
            return
        if isinstance(node, c_ast.Compound):
            inner = scope.child()
            for item in node.block_items or []:
                if isinstance(item, c_ast.Pragma):
                    state["pragmas"].append(item.string.strip())
                    state["pragma_spans"].append(self.directive_span(loc_of(item, Loc(self.path, 0))))
                    words = item.string.split()
                    if words[:1] == ["scop"]:
                        state["scop"] = True
                    elif words[:1] == ["endscop"]:
                        state["scop"] = False
                    elif words[:1] == ["c2gpu"]:
                        if words[1:2] in (["port"], ["skip"]):
                            state["marker"] = (words[1], loc_of(item, Loc(self.path, 0)))
                        else:
                            self.notes.append(Flag("unknown-pragma", f"unknown c2gpu pragma '{item.string}' "
                                                   "(known: 'c2gpu port', 'c2gpu skip')", loc_of(item, Loc(self.path, 0))))
                    continue
                if isinstance(item, c_ast.Decl) and item.name:
                    # (an `extern` declaration names a global: it outlives the function like a static)
                    storage = "static" if {"static", "extern"} & set(item.storage or ()) else "local"
                    inner.vars[item.name] = Var(decl_type(item, self.typedefs), storage,
                                                loc_of(item, Loc(self.path, 0)), item.name)
                self._marker_without_for(state, item)
                self.find(item, inner, out, state, outer)
                state["marker"] = None
                state["pragmas"], state["pragma_spans"] = [], []
            self._marker_without_for(state, None)
            state["marker"] = None
            return
        if isinstance(node, c_ast.For):
            marker = state.get("marker")
            marked = bool(marker) and marker[0] == "port"
            loc = loc_of(node, Loc(self.path, 0))
            why_not = ("skipped by '#pragma c2gpu skip'" if marker and marker[0] == "skip"
                       else "not marked '#pragma c2gpu port'" if self.has_port_marker and not marked
                       else "is outside '#pragma scop' regions" if self.has_scop and not state["scop"] and not marked
                       else None)
            if why_not is None and not (state.get("host") and not marked):
                region = "pragma" if marker else "scop" if state["scop"] else "auto"
                out.append(Candidate(node, scope, region, outer, tuple(state["pragmas"]),
                                     tuple(state["pragma_spans"])))
                self._pragmas_inside_nest(node.stmt, loc)
                return
            if why_not is not None and not state.get("host"):
                self.notes.append(Flag("skipped", f"nest at line {loc.line} {why_not}", loc))
            # the loop stays on the host as written: a loop inside it marked '#pragma c2gpu port' is a nest
            inner = scope.child()
            for d in (node.init.decls if isinstance(node.init, c_ast.DeclList) else []):
                if d.name:
                    inner.vars[d.name] = Var(decl_type(d, self.typedefs), "local", loc_of(d, Loc(self.path, 0)), d.name)
            host = state.get("host")
            state.update(host=True, marker=None, pragmas=[], pragma_spans=[])
            self.find(node.stmt, inner, out, state, outer)
            state["host"] = host
            return
        if isinstance(node, c_ast.If):
            self.find(node.iftrue, scope, out, state, outer)
            self.find(node.iffalse, scope, out, state, outer)
        elif isinstance(node, (c_ast.While, c_ast.DoWhile)):
            self.find(node.stmt, scope, out, state, "while")
        elif isinstance(node, (c_ast.Switch, c_ast.Case, c_ast.Default, c_ast.Label)):
            for _, c in node.children():
                self.find(c, scope, out, state, outer)

    def _marker_without_for(self, state: dict, item: c_ast.Node | None) -> None:
        """A '#pragma c2gpu port/skip' selects the `for` right after it: before anything else (or nothing), say so."""
        marker = state.get("marker")
        if marker and not isinstance(item, c_ast.For):
            what = (f"the statement at line {loc_of(item, marker[1]).line}" if item is not None
                    else "the end of the block")
            self.notes.append(Flag("unknown-pragma", f"'#pragma c2gpu {marker[0]}' is followed by {what}, not by a "
                                   "for loop: it selects nothing", marker[1]))
            state["marker"] = None

    def _pragmas_inside_nest(self, body: c_ast.Node | None, nest_loc: Loc) -> None:
        """c2gpu pragmas inside a nest taken as a whole select nothing: never ignore one silently."""
        for n, _ in _walk(body) if body is not None else ():
            if isinstance(n, c_ast.Pragma) and n.string.split()[:1] == ["c2gpu"]:
                loc = loc_of(n, Loc(self.path, 0))
                self.notes.append(Flag("unknown-pragma", f"'#pragma {n.string.strip()}' is inside the nest at line "
                                       f"{nest_loc.line}, which is analysed as a whole: the pragma is ignored", loc))

    def _inner_array(self, ctx: NestContext, name: str, facts: "FunctionFacts", root: Loop) -> ArrayInfo:
        """The ArrayInfo of an array declared inside the nest (NestContext.inner_arrays): a new object in every
        iteration of the loops around its declaration (ArrayInfo.declared_in), so nothing it holds passes from one
        iteration of them to another, and nothing reads it after the nest.  Its address must not be taken (then
        a pointer may reach it from elsewhere): flagged local-array."""
        t, node, lids, dims = ctx.inner_arrays[name]
        loc = ctx.loc(node)
        if facts.escapes(name):
            ctx.flags.append(Flag("local-array", f"array '{name}' is declared inside the nest and its address is "
                                  "taken", loc, lids))
            return ArrayInfo(name, t.base, t.elem_size, dims, "local", False, t.const, loc)
        by_lid = {lp.lid: lp for lp in root.loops()}
        where = f"the loop at line {by_lid[lids[-1]].loc.line}" if lids and lids[-1] in by_lid else "the nest"
        return ArrayInfo(name, t.base, t.elem_size, dims, "local", False, t.const, loc, unreachable=True,
                         dead_after=f"declared inside {where}: a new array in every iteration", declared_in=lids)

    def lower_nest(self, function: str, cand: Candidate, facts: "FunctionFacts") -> Nest:
        cand = self.initializers_expanded(cand, facts)
        cand = self.dead_branches_removed(cand, facts)
        cand = self.calls_inlined(cand, facts)
        cand, stands_for = self.fields_renamed(cand, facts)
        cand = self.inductions_substituted(cand, facts)
        cand = self.aliases_resolved(cand, facts)
        cand = self.row_pointers_resolved(cand, facts)
        loc = loc_of(cand.node, Loc(self.path, 0))
        ctx = NestContext(cand.scope, self.typedefs, self.functions, loc, frozenset(self.user_functions),
                          facts.address_taken)
        ctx.trees = Trees(self.sources)
        ctx.live_in_nest = lambda loop, name: facts.read_later(loop, name, stop=cand.node)
        ctx.has_goto = facts.has_goto
        ctx.rows_distinct = self.objects.rows_distinct if self.objects is not None else lambda base: None
        ctx.macro_origin = self.macro_origin
        ctx.directive_span = self.directive_span
        ctx.pure = self.pure
        ctx.structs = self.structs
        ctx.not_inlined = dict(cand.not_inlined)
        lowerer = NestLowerer(ctx)
        lowerer.prepass(cand.node)
        ctx.entry_values = _entry_values(ctx, cand.stands_for or cand.node, facts)
        root = lowerer.lower_loop(cand.node, (), cand.scope, cand.pragmas, cand.pragma_spans)
        if any(ind.trip is None for ind in cand.inductions):       # the loop they count, as first described
            cand = replace(cand, inductions=tuple(ind if ind.trip is not None else replace(ind, trip=root.trip_count)
                                                  for ind in cand.inductions))
        stmts = list(root.statements())
        arrays = []
        for name in sorted(ctx.arrays_used):
            found = cand.scope.lookup(name)
            if name in ctx.inner_arrays:
                arrays.append(self._inner_array(ctx, name, facts, root))
                continue
            if found is None:
                continue
            t, storage, dloc = found.ctype, found.storage, found.loc
            dims: list[Poly | None] = []
            for d in t.dims:
                if d is None:
                    dims.append(None)
                    continue
                saved = set(ctx.params)
                p, _ = ctx.poly(d)
                ctx.params = saved | (p.variables if p is not None else set())
                dims.append(p)
            # `int *u[2]` is two pointers (rows of unknown extent); `int (*p)[N]` one pointer to rows of N
            dims = dims + [None] * t.pointers if t.pointer_rows and t.dims else [None] * t.pointers + dims
            target = self.objects.target(dloc) if self.objects is not None else None
            # a pointer parameter passed arrays of one constant extent at every call: it reaches that many elements
            known = self.objects.extent(dloc) if self.objects is not None and dims == [None] \
                and storage.startswith("param") else None
            if known is not None:
                dims = [Poly.const(known[0])]
            if name in ctx.by_field:        # seen by field: an array of the fields' type, one dimension more
                t = replace(t, base=_one_scalar_type(ctx.structs[t.base]))
                dims.append(Poly.const(len(ctx.by_field[name])))
                whole = next((a for st in stmts for a in st.accesses
                              if a.array == name and len(a.subscripts) != len(dims)), None)
                if whole is not None:       # `y[i] = x[i]` beside `y[i].re`: one access, several fields
                    ctx.flags.append(Flag("unsupported-access", f"'{whole.text}' reads or writes a whole struct of "
                                          f"'{name}', which the nest also accesses by field", whole.loc))
            # an array of this function that is only ever indexed: no pointer can point into it (a static array of
            # the file that only main names, main being called once, is as good as one of main's own: EP's x)
            own = storage in ("local", "static") or storage == "global" and function == "main" and \
                name in self.main_statics
            unreachable = own and not t.pointers and bool(t.dims) and not facts.escapes(name, cand.passed)
            # (a parameter: its callers do not read it after the calls either)
            # (a parameter the function only indexes: no copy of it outlives the call)
            callers = self.objects.dead_after_calls(dloc) if storage.startswith("param") and self.objects is not None \
                and not facts.escapes(name, cand.passed) else None
            dead_after = "" if not (storage in ("local", "global") and unreachable or callers) \
                or facts.read_later(cand.stands_for or cand.node, name, stop=None) \
                else "not read after the nest" + (f", and {callers}" if callers else "")
            arrays.append(ArrayInfo(name, t.base, t.elem_size, tuple(dims), "local" if storage == "static" else storage,
                                    t.restrict, t.const, dloc, assigned=name in facts.assigned, unreachable=unreachable,
                                    dead_after=dead_after,
                                    rows_source=(self.objects.rows_distinct(t.base) or "") if t.pointer_rows
                                    and self.objects is not None else "",
                                    target=target.labels if target is not None else None,
                                    target_source=target.source if target is not None else "",
                                    extent_source=known[1] if known is not None else "",
                                    fields=ctx.by_field.get(name, ())))
        red_targets = {r.target for s in stmts for r in s.reductions}
        scalars = []
        for name in sorted(ctx.scalars_used):
            local = ctx.locals.get(name)
            var = local[0] if local is not None else cand.scope.lookup(name)
            writers = [s for s in stmts if name in s.scalar_writes]
            if local is not None:
                role = "local"
            elif not writers:
                role = "invariant"
            elif name in red_targets and all(any(r.target == name for r in s.reductions) for s in writers):
                role = "reduction"
            else:
                role = "written"
            c_name = local[1].name if local is not None else name
            exposed = var is not None and (var.storage in ("global", "static") or c_name in facts.address_taken)
            scalars.append(ScalarInfo(name, var.ctype.base if var is not None else "?", role, ctx.scalars_used[name],
                                      exposed=exposed, declared_in=var.decl_lids if local is not None else None,
                                      c_name=c_name if c_name != name else ""))
        for name in sorted(ctx.params - set(ctx.scalars_used)):
            found = cand.scope.lookup(name)
            if found is not None and found.ctype.is_scalar:
                # symbolic sizes used only in bounds or subscripts are invariant scalars of the nest too
                exposed = found.storage in ("global", "static") or name in facts.address_taken
                scalars.append(ScalarInfo(name, found.ctype.base, "invariant", found.loc, exposed=exposed))
        scalars.sort(key=lambda s: s.name)
        flags = list(ctx.flags) + _exposed_loop_variables(root, cand.scope, arrays) + self.host_only(cand, stmts)
        if cand.outer == "while":
            flags.append(Flag("inside-while", "this nest sits inside a while loop, so it runs an unknown number of times", loc))
        loop_vars = {lp.var for lp in root.loops()}
        params = sorted(ctx.params - loop_vars)
        outside = {lp.var for lp in root.loops() if not lp.declared_in_header} | \
            {sc.name for sc in scalars if sc.declared_in is None} | {ind.name for ind in cand.inductions}
        live = facts.live_after(cand.stands_for or cand.node, cand.scope)
        sizes = []
        for name in params:
            found = cand.scope.lookup(name)
            known = self.objects.value(found.loc) if found is not None and self.objects is not None else None
            if known is not None:
                sizes.append((name, known[0], known[1]))
        # the first description of a for-statement is the one a rewrite of it is described in place of
        self.places.setdefault((loc.file, loc.line, loc.col), (function, cand, facts))
        return Nest(name=f"{function}@{loc.line}", function=function, loc=loc, end_loc=None, root=root,
                    arrays=tuple(arrays), scalars=tuple(scalars), params=tuple(params), flags=tuple(flags),
                    region=cand.region, sizes=tuple(sizes), live_after=tuple(sorted(outside & live)),
                    functions=needed(self.pure, {c for s in stmts for c in s.calls}),
                    stands_for=stands_for, inductions=cand.inductions, inlined=cand.inlined,
                    rewrites=tuple(ind.note(root.var, root.loc.line) for ind in cand.inductions) + cand.aliases)

    def inductions_substituted(self, cand: Candidate, facts: "FunctionFacts") -> Candidate:
        """The candidate with the counters its outer loop steps once per iteration substituted
        (frontend/inductions.py); a rewritten candidate keeps those found before."""
        def volatile(name: str) -> bool:
            return any(isinstance(n, c_ast.Decl) and n.name == name and "volatile" in (n.quals or ())
                       for n, _ in _walk(facts.fn))
        node, found = substitute_inductions(cand.node, cand.scope.lookup, facts.address_taken, volatile,
                                            lambda name: facts.read_later(cand.stands_for or cand.node, name,
                                                                          stop=None))
        if not found:
            return cand
        self._adopt(cand.node, node, facts)
        return replace(cand, node=node, stands_for=cand.stands_for or cand.node,
                       inductions=cand.inductions + tuple(found))

    def dead_branches_removed(self, cand: Candidate, facts: "FunctionFacts") -> Candidate:
        """The candidate without the branches of its `if`s whose condition is a constant (`if (TIMERS_ENABLED ==
        TRUE) timer_start(3);` with both macros numbers, `if (DEBUG) printf(...)`): they never run, so what they
        call or touch neither blocks a proof nor goes into a kernel."""
        dead = [n for n, _ in _walk(cand.node) if isinstance(n, c_ast.If) and _truth(n.cond) is not None]
        if not dead:
            return cand
        node = copy_tree(cand.node)
        lines = []
        for n, up in list(_walk(node)):
            if not isinstance(n, c_ast.If) or up is None or (value := _truth(n.cond)) is None:
                continue
            kept = n.iftrue if value else n.iffalse
            swap(up, n, kept if kept is not None else c_ast.EmptyStatement(coord=n.coord))
            lines.append(str(loc_of(n, Loc(self.path, 0)).line))
        if not lines:
            return cand
        self._adopt(cand.node, node, facts)
        lines = sorted(set(lines), key=int)
        many = len(lines) > 1
        note = f"{'ifs' if many else 'an if'} whose condition is a constant (line{'s' if many else ''} " \
               f"{', '.join(lines)}): the branch{'es' if many else ''} that never run{'' if many else 's'} left out"
        return replace(cand, node=node, stands_for=cand.stands_for or cand.node, aliases=cand.aliases + (note,))

    def initializers_expanded(self, cand: Candidate, facts: "FunctionFacts") -> Candidate:
        """The candidate with the arrays its body declares with an initializer read as declarations followed by
        the assignment of every element (frontend/initializers.py), with a note for each."""
        if not any(isinstance(n, c_ast.Decl) and isinstance(n.init, c_ast.InitList) for n in nodes(cand.node)):
            return cand
        node = copy_tree(cand.node)
        notes = initializers.rewrite(node)
        if not notes:
            return cand
        self._adopt(cand.node, node, facts)
        return replace(cand, node=node, stands_for=cand.stands_for or cand.node, aliases=cand.aliases + tuple(notes))

    def calls_inlined(self, cand: Candidate, facts: "FunctionFacts") -> Candidate:
        """The candidate with the calls of the file's void functions it can see into inlined (frontend/inline.py),
        with a note naming them."""
        inliner = Inliner(self.inlinable, self.typedefs, cand.scope.lookup, self.globals.vars.get,
                          set(facts.address_taken), foreign=frozenset(self.foreign))
        node = inliner.nest(cand.node)
        if node is cand.node:
            return replace(cand, not_inlined=tuple(sorted(inliner.why_not.items())))
        self._adopt(cand.node, node, facts)
        counts = Counter(inliner.inlined)
        note = "inlined " + ", ".join(f"{name}() ({k} call{'s' if k > 1 else ''})" for name, k in sorted(counts.items())) + \
            ": the nest is analysed and ported with the functions' bodies in place of the calls"
        return replace(cand, node=node, stands_for=cand.stands_for or cand.node, aliases=cand.aliases + (note,),
                       inlined=tuple(sorted(counts)), not_inlined=tuple(sorted(inliner.why_not.items())),
                       passed=frozenset(_place(n) for n in inliner.passed))

    def host_only(self, cand: Candidate, stmts: list[Statement]) -> list[Flag]:
        """What keeps a nest on the CPU although its loops may be parallel: C that CUDA's device code computes
        differently.  `long double` (nvcc makes it `double`: 8 bytes where the host copies 16, another
        rounding), and math calls whose errno the file reads (device math never sets errno)."""
        pure = needed(self.pure, {c for s in stmts for c in s.calls})
        flags = []
        bodies = [(cand.node, cand.scope)] + [(self.defined[f.name], None) for f in pure]
        for body, scope in bodies:
            found = _long_double_use(body, scope, self.typedefs)
            if found is not None:
                node, what = found
                where = loc_of(node, Loc(self.path, 0))
                flags.append(Flag("long-double", f"{what} (line {where.line}) is long double, which CUDA's device code does not have (nvcc "
                                  "computes it as double, in 8 bytes where the host has 16)", where))
                break
        if self.errno_read is not None:
            calls = [(c, s.loc) for s in stmts for c in s.calls if c in SETS_ERRNO and c not in self.user_functions]
            calls += [(n.name.name, loc_of(n, Loc(self.path, 0))) for f in pure for n, _ in _walk(self.defined[f.name])
                      if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in SETS_ERRNO
                      and n.name.name not in self.user_functions]
            if calls:
                name, where = calls[0]
                flags.append(Flag("errno-read", f"{name}() (line {where.line}) sets errno on the CPU and never on the GPU, and the file "
                                  f"reads errno (line {self.errno_read.line})", where))
        return flags

    def row_pointers_resolved(self, cand: Candidate, facts: "FunctionFacts") -> Candidate:
        """The candidate with the pointers its body declares into an array and then only indexes read as that
        array's elements (frontend/row_pointers.py)."""
        node, notes = resolve_row_pointers(cand.node, cand.scope.lookup, facts.address_taken,
                                           lambda d: decl_type(d, self.typedefs))
        node, more = resolve_entry_pointers(node, facts.writes, cand.stands_for or cand.node, cand.scope.lookup,
                                            facts.address_taken, lambda d: decl_type(d, self.typedefs))
        notes += more
        if not notes:
            return cand
        self._adopt(cand.node, node, facts)
        return replace(cand, node=node, stands_for=cand.stands_for or cand.node, aliases=cand.aliases + tuple(notes))

    def aliases_resolved(self, cand: Candidate, facts: "FunctionFacts") -> Candidate:
        """The candidate with every pointer that the file shows is always a declared array at a constant offset
        (FileObjects.alias: `float *xx = flat;`) replaced by that array, `xx[e]` by `flat[e + k]`: one object,
        one name, so its dependences are exact and the port copies it once.  Only where the nest sees the
        array's declaration, uses the pointer for nothing but subscripts and never assigns it."""
        if self.objects is None:
            return cand
        names = {n.name for n, _ in _walk(cand.node) if isinstance(n, c_ast.ID)}
        declared = {n.name for n, _ in _walk(cand.node) if isinstance(n, c_ast.Decl)}
        chosen = {}
        for name in sorted(names - declared):
            var = cand.scope.lookup(name)
            alias = self.objects.alias(var.loc) if var is not None and var.ctype.pointers == 1 else None
            if alias is None:
                continue
            seen = cand.scope.lookup(alias.array)
            if seen is None or seen.loc != alias.array_loc or alias.array in declared:
                continue
            chosen[name] = alias
        if not chosen:
            return cand
        for n, up in _walk(cand.node):       # the pointer only as the base of a subscript (so never assigned)
            if isinstance(n, c_ast.ID) and n.name in chosen and not (isinstance(up, c_ast.ArrayRef) and up.name is n):
                chosen.pop(n.name)
        if not chosen:
            return cand
        node = copy_tree(cand.node)
        for name, a in chosen.items():          # (an array and a constant offset: row_pointers' rewrite)
            offset = c_ast.Constant("int", str(abs(a.offset))) if a.offset else None
            replace_uses(node, name, (a.array, (), offset, "+" if a.offset > 0 else "-"))
        self._adopt(cand.node, node, facts)
        notes = tuple(f"'{name}' is always the array '{a.array}' ({a.source}): one object under two names, so the "
                      f"nest reads {name}[...] as {a.array}[...{f' + {a.offset}' if a.offset > 0 else f' - {-a.offset}' if a.offset < 0 else ''}] "
                      f"and the port copies {a.array} once" for name, a in sorted(chosen.items()))
        return replace(cand, node=node, stands_for=cand.stands_for or cand.node, aliases=cand.aliases + notes)

    def fields_renamed(self, cand: Candidate, facts: "FunctionFacts") -> tuple[Candidate, tuple[tuple[str, str], ...]]:
        """The candidate with its struct field accesses renamed to variables of their own (fields.renamed), in a
        scope that declares them, and what each stands for."""
        taken = set(facts.names) | set(self.functions)
        s: Scope | None = cand.scope
        while s is not None:
            taken |= set(s.vars)
            s = s.parent

        def lookup(name: str):
            var = cand.scope.lookup(name)
            return var.ctype if var is not None else None

        def own_struct(name: str) -> bool:
            var = cand.scope.lookup(name)
            return var is not None and var.storage == "local" and var.decl_lids is None and \
                name not in facts.address_taken and not facts.read_later(cand.stands_for or cand.node, name, stop=None)
        node, found = renamed(cand.node, lookup, self.structs, taken, own_struct)

        def lookup_after(name: str):        # the fields just renamed are variables too
            return found[name][0] if name in found else lookup(name)
        node, elements = invariant_elements(node, lookup_after, taken)
        found = {**found, **{name: (*v, False) for name, v in elements.items()}}
        if not found:
            return cand, cand.fields
        scope = cand.scope.child()
        for name, (ctype, _, ref, written) in found.items():
            # a scalar field is memory a pointer may reach, like a global, but one of the function's own structs
            # (written by the nest: see fields.renamed) is a local; a pointer or array field is a pointer
            storage = "local" if written else "global" if ctype.is_scalar else "param-pointer"
            scope.vars[name] = Var(ctype, storage, loc_of(ref, Loc(self.path, 0)), name)
        self._adopt(cand.node, node, facts)
        fields = cand.fields + tuple((name, text) for name, (_, text, _, _) in sorted(found.items()))
        return replace(cand, node=node, scope=scope, stands_for=cand.stands_for or cand.node, fields=fields), fields

    @staticmethod
    def _adopt(old: c_ast.Node, new: c_ast.Node, facts: "FunctionFacts") -> None:
        """Record `new`, a rewrite of `old`, in the function's parent map at `old`'s place (liveness scans)."""
        parent = facts.parent.get(id(old))
        if parent is not None:
            facts.parent[id(new)] = parent
        for n, up in _walk(new):
            if up is not None:
                facts.parent[id(n)] = up

    def describes(self, nest: Nest) -> bool:
        """Whether `nest` is one this file's lowering described (describe_again can describe its rewrites)."""
        return (nest.loc.file, nest.loc.line, nest.loc.col) in self.places

    def describe_again(self, nest: Nest, root: For) -> Nest:
        """The nest that `root`, a rewrite of `nest`'s for-statement as a syntax tree (transform/: fusion,
        schedule, wavefront, coarsen), would be in its place (same scope, same function, same code after it): the
        rewritten nodes' parents are recorded for the liveness scans, the original statement's position stands for
        the new root's.  ValueError when the tree holds a node the frontend cannot rebuild (Sources)."""
        function, cand, facts = self.places[nest.loc.file, nest.loc.line, nest.loc.col]
        node = self.sources.parser_node(root)
        self._adopt(cand.stands_for or cand.node, node, facts)
        return self.lower_nest(function, replace(cand, node=node, stands_for=cand.stands_for or cand.node), facts)


def _errno_read(ast: c_ast.FileAST, fallback: Loc) -> Loc | None:
    """Where the file first reads `errno` (anything but `errno = ...`), or None."""
    for n, up in _walk(ast):
        if isinstance(n, c_ast.ID) and n.name == "errno" and not (
                isinstance(up, c_ast.Assignment) and up.op == "=" and up.lvalue is n):
            return loc_of(n, fallback)
    return None


def _long_double_use(body: c_ast.Node, scope: Scope | None, typedefs: dict[str, CType]):
    """(the node, what it is) of the first long double value in `body`: a variable declared long double (in
    `body` or, with `scope`, around it), a constant with an L suffix, a cast to long double; None if there is
    none.  A function's parameters and return type count too."""
    for n, _ in sorted(_walk(body), key=lambda nu: (getattr(nu[0].coord, "line", 0), getattr(nu[0].coord, "column", 0))):
        if isinstance(n, c_ast.Decl) and not isinstance(n.type, c_ast.FuncDecl) and n.name \
                and decl_type(n, typedefs).base == "long double":
            return n, f"'{n.name}'"
        if isinstance(n, c_ast.FuncDef) and decl_type(n.decl.type.type, typedefs).base == "long double":
            return n, f"the value {n.decl.name}() returns"
        if isinstance(n, c_ast.ID) and scope is not None:
            var = scope.lookup(n.name)
            if var is not None and var.ctype.base == "long double":
                return n, f"'{n.name}'"
        if isinstance(n, c_ast.Constant) and n.type == "long double":
            return n, f"the constant {n.value}"
        if isinstance(n, c_ast.Cast) and decl_type(n.to_type, typedefs).base == "long double":
            return n, "a cast to long double"
    return None


def _exposed_loop_variables(root: Loop, scope: Scope, arrays: list[ArrayInfo]) -> list[Flag]:
    """A loop counting with a global or static variable, in a loop that writes through a pointer: the
    pointer may point to the counter (the loop variable is no scalar the dependence analysis compares)."""
    pointers = {a.name for a in arrays if not a.restrict and (a.storage in ("param-pointer", "param-array") or not a.dims or a.dims[0] is None)}
    out = []

    def walk(lp: Loop, path: tuple[int, ...]) -> None:
        path = path + (lp.lid,)
        var = scope.lookup(lp.var)
        if not lp.declared_in_header and var is not None and var.storage in ("global", "static"):
            write = next((a for s in lp.statements() for a in s.accesses
                          if a.kind == "write" and a.array in pointers), None)
            if write is not None:
                out.append(Flag("exposed-loop-variable", f"loop variable '{lp.var}' is a {var.storage} variable, and "
                                f"the write {write.text} (line {write.loc.line}) may change it through a pointer",
                                lp.loc, path))
        for n in lp.body:
            if isinstance(n, Loop):
                walk(n, path)
    walk(root, ())
    return out


def _from_c2gpu_headers(decl: c_ast.Node) -> bool:
    coord = getattr(decl, "coord", None)
    return coord is not None and coord.file is not None and str(coord.file).startswith(str(INCLUDE_DIR))


def _unique_names(nests: list[Nest]) -> list[Nest]:
    """Nest names key every analysis and name the generated kernels: two nests on one line
    (`for (...) a[i] = 1; for (...) b[i] = a[i];`) must not share one.  The first keeps
    `function@line`, the others get `function@line_column`."""
    seen: set[str] = set()
    out = []
    for n in nests:
        if n.name in seen:
            n = replace(n, name=f"{n.function}@{n.loc.line}_{n.loc.col}")
        seen.add(n.name)
        out.append(n)
    return out


def program_functions(path: str, options) -> tuple[dict[str, c_ast.FuncDef], list[Flag]]:
    """The functions defined in the program's other files (PreprocessOptions.program_files), each preprocessed
    as cc would with the same options, by name; a file that cannot be read is a note, its functions unknown."""
    found: dict[str, c_ast.FuncDef] = {}
    notes: list[Flag] = []
    for other in getattr(options, "program_files", ()) or ():
        if os.path.abspath(other) == os.path.abspath(path):
            continue
        try:
            tree = parse_c(preprocess(other, replace(options, program_files=())), other)
        except C2GPUError as e:
            notes.append(Flag("not-analysed", f"the program's file {other} could not be read ({e.message}): "
                              "calls to its functions stay calls c2gpu cannot see into", Loc(path, 0)))
            continue
        for ext in tree.ext:
            if isinstance(ext, c_ast.FuncDef):
                found.setdefault(ext.decl.name, ext)
    return found, notes


def lower_program(ast: c_ast.FileAST, path: str, options=None, original_source: str | None = None,
                  functions: frozenset[str] | None = None) -> Program:
    """The Program of a parsed file; with `functions`, only the nests of those functions (what the file
    declares is read all the same)."""
    foreign, notes = program_functions(path, options) if options is not None else ({}, [])
    fl = FileLowerer(ast, path, tuple(options.defines) if options is not None else (), foreign, original_source)
    fl.only = functions
    fl.notes.extend(notes)
    # Lowering allocates many small objects and frees none of them while the AST is alive: the cyclic garbage
    # collector would rescan the whole AST again and again (it doubled lowering time on a 50,000-line file).
    gc.freeze()
    try:
        nests = fl.run()
        c_only = c_only_constructs(ast)          # (a walk of the whole tree: inside the frozen region too)
    finally:
        gc.unfreeze()
    defines = tuple(options.defines) if options is not None else ()
    def position(node: c_ast.Node) -> tuple[str, int, int]:
        loc = loc_of(node, Loc("", 0, 0))
        return loc.file, loc.line, loc.col
    order = run_order(ast, {(n.loc.file, n.loc.line, n.loc.col) for n in nests}, position)
    return Program(path=path, nests=tuple(nests), diagnostics=tuple(fl.notes), defines=defines,
                   c_only=c_only, run_order=order, frontend=fl)
