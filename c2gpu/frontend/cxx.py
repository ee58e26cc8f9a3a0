"""C that C++ rejects: the constructs of a file that keep its host code from being compiled as C++ in one .cu
file with the kernels (`c_only_constructs`, which the frontend hands over as Program.c_only), and the names
involved (C++ keywords, the functions a CUDA translation unit declares).

Read off the file's syntax tree while the frontend has it: the port decides from the reasons, without the tree.
"""
from __future__ import annotations

from pathlib import Path

from pycparser import c_ast


# C++ keywords that are ordinary names in C (`bool`, `true` and `false` left out: C code that has them
# usually means stdbool's, which C++ accepts)
CXX_KEYWORDS = frozenset("""
    alignas alignof and and_eq asm bitand bitor catch char8_t char16_t char32_t class compl concept consteval
    constexpr constinit const_cast co_await co_return co_yield decltype delete dynamic_cast explicit export
    friend mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    reinterpret_cast requires static_assert static_cast template this thread_local throw try typeid typename
    using virtual wchar_t xor xor_eq""".split())

# malloc, calloc and realloc return a void * the prelude's shim converts (c2gpu/templates/prelude.cu.j2)
SHIMMED_ALLOCATORS = ("malloc", "calloc", "realloc")


def _user_nodes(ast: c_ast.FileAST):
    """(node, its line) for every AST node of the user's code (c2gpu's own libc headers left out).

    A node without coordinates (a designated initializer) gets the line of the nearest node around it.
    """
    include_dir = str(Path(__file__).resolve().parent.parent / "include")
    stack = [(n, None) for n in reversed(ast.ext)]
    while stack:
        n, line = stack.pop()
        if n.coord is not None and str(n.coord.file).startswith(include_dir):
            continue
        line = n.coord.line if n.coord is not None else line
        yield n, line
        stack.extend((c, line) for _, c in reversed(n.children()))


def _names(node) -> list[str]:
    if isinstance(node, c_ast.IdentifierType):
        return list(node.names)
    return [v for v in (getattr(node, "name", None), getattr(node, "declname", None), getattr(node, "field", None))
            if isinstance(v, str)]


def _is_void_ptr(t) -> bool:
    return (isinstance(t, c_ast.PtrDecl) and isinstance(t.type, c_ast.TypeDecl)
            and isinstance(t.type.type, c_ast.IdentifierType) and t.type.type.names == ["void"])


def c_only_constructs(ast: c_ast.FileAST) -> tuple[str, ...]:
    """Why this file's host code cannot be compiled as C++ (then the port is split into .cu + .c).

    Variable-length array parameters, C++ keywords used as names (`int new;`), a void * value
    converted implicitly to another pointer type (`int *p = v;`; malloc's is shimmed), designated
    initializers.  Each reason names the construct and its line.
    """
    reasons = []
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef) and ext.param_decls:   # see frontend.parse.ansi_parameters
            reasons.append(f"{ext.decl.name}() is a K&R (old-style) definition (line {ext.decl.coord.line})")
        if isinstance(ext, c_ast.FuncDef) and ext.decl.type.args is not None:
            for p in ext.decl.type.args.params:
                t = getattr(p, "type", None)
                while isinstance(t, (c_ast.ArrayDecl, c_ast.PtrDecl)):
                    if isinstance(t, c_ast.ArrayDecl) and t.dim is not None and not isinstance(t.dim, c_ast.Constant):
                        reasons.append(f"{ext.decl.name}() has a variable-length array parameter '{p.name}'")
                        break
                    t = t.type
    located = list(_user_nodes(ast))
    nodes = [n for n, _ in located]
    lines = {id(n): line for n, line in located}
    where = lambda n: f"line {lines[id(n)]}"  # noqa: E731
    keyword = next(((name, n) for n in nodes for name in _names(n) if name in CXX_KEYWORDS), None)
    if keyword is not None:
        reasons.append(f"'{keyword[0]}' ({where(keyword[1])}) is a C++ keyword")
    # void * values: variables and parameters declared void *, functions returning one (not the shimmed allocators)
    void_vars = {n.name for n in nodes if isinstance(n, c_ast.Decl) and _is_void_ptr(n.type)}
    void_funcs = {n.name for n in nodes if isinstance(n, c_ast.Decl) and isinstance(n.type, c_ast.FuncDecl)
                  and _is_void_ptr(n.type.type) and n.name not in SHIMMED_ALLOCATORS}
    void_vars -= void_funcs

    def is_void_value(e) -> bool:
        return ((isinstance(e, c_ast.ID) and e.name in void_vars)
                or (isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID) and e.name.name in void_funcs))

    for n in nodes:
        if isinstance(n, c_ast.Decl) and isinstance(n.type, c_ast.PtrDecl) and not _is_void_ptr(n.type) \
                and is_void_value(n.init):
            reasons.append(f"'{n.name}' ({where(n)}) is initialized from a void * without a cast")
            break
        if isinstance(n, c_ast.Assignment) and n.op == "=" and is_void_value(n.rvalue) \
                and not (isinstance(n.lvalue, c_ast.ID) and n.lvalue.name in void_vars):
            reasons.append(f"a void * is assigned without a cast ({where(n)})")
            break
    named = next((n for n in nodes if isinstance(n, c_ast.NamedInitializer)), None)
    if named is not None:
        reasons.append(f"a designated initializer ({where(named)})")
    clash = next((n for n in nodes if isinstance(n, c_ast.Decl) and isinstance(n.type, c_ast.FuncDecl)
                  and n.name in CUDA_FUNCTIONS), None)
    if clash is not None:
        reasons.append(f"{clash.name}() ({where(clash)}) has the name of a CUDA function")
    return tuple(reasons)


def _cuda_host_names() -> frozenset[str]:
    text = (Path(__file__).resolve().parent / "cuda_host_names.txt").read_text()
    return frozenset(w for line in text.splitlines() if not line.startswith("#") for w in line.split())


# Functions a CUDA translation unit declares before the user's code (cuda_host_names.txt says where they come
# from), and those c2gpu's CPU execution layer defines: a C file defining or declaring one cannot share a .cu
# file with the kernels.
CUDA_FUNCTIONS = _cuda_host_names() | {"saturate"}
