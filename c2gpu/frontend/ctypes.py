"""Just enough of C's type system to size arrays and classify arithmetic.

pycparser gives declarations as nested TypeDecl/PtrDecl/ArrayDecl nodes; we
reduce each to a `CType`: a scalar base spelling, pointer depth, array extents
(outermost first, as AST expressions) and qualifiers.
"""
from __future__ import annotations


from pycparser import c_ast
from ..records import dataclass

SIZES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "_Bool": 1,
    "short": 2, "unsigned short": 2,
    "int": 4, "unsigned int": 4,
    "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8,
    "float": 4, "double": 8, "long double": 16,
}
FLOAT_TYPES = ("float", "double", "long double")


def canonical(names: list[str]) -> str:
    """['unsigned'] -> 'unsigned int', ['long', 'int'] -> 'long', ['signed', 'char'] -> 'signed char'."""
    words = [n for n in names if n not in ("signed",)] if names != ["signed", "char"] else names
    if not words:
        return "int"
    if words == ["unsigned"]:
        return "unsigned int"
    words = [w for w in words if w != "int"] or ["int"]
    if words == ["unsigned"]:
        return "unsigned int"
    if words in (["short", "unsigned"], ["unsigned", "short"]):
        return "unsigned short"
    return " ".join(words)


@dataclass(frozen=True)
class CType:
    """A declaration's C type, reduced: base spelling, pointer depth, array extents and qualifiers."""
    base: str                                   # scalar spelling after typedefs, or "struct X"
    pointers: int = 0
    dims: tuple[c_ast.Node | None, ...] = ()    # array extents, outermost first
    const: bool = False
    restrict: bool = False
    pointer_rows: bool = False                  # a pointer below the outermost level (`int *rows[N]`, `float **a`):
    #                                             its rows are separate objects that may overlap one another

    @property
    def is_scalar(self) -> bool:
        return self.pointers == 0 and not self.dims

    @property
    def is_float(self) -> bool:
        return self.is_scalar and self.base in FLOAT_TYPES

    @property
    def is_integer(self) -> bool:
        return self.is_scalar and self.base in SIZES and self.base not in FLOAT_TYPES

    @property
    def elem_size(self) -> int:
        return SIZES.get(self.base, 0)


def decl_type(node: c_ast.Node, typedefs: dict[str, CType]) -> CType:
    """Reduce a declaration's type node to a CType, resolving typedef names."""
    pointers, dims, const, restrict = 0, [], False, False
    rows = False                 # a pointer declarator inside another declarator level
    while True:
        if isinstance(node, c_ast.Decl):
            const = "const" in node.quals
            node = node.type
        elif isinstance(node, c_ast.PtrDecl):
            rows = rows or pointers > 0 or bool(dims)
            pointers += 1
            restrict = restrict or "restrict" in node.quals
            node = node.type
        elif isinstance(node, c_ast.ArrayDecl):
            dims.append(node.dim)
            restrict = restrict or "restrict" in (node.dim_quals or [])
            node = node.type
        elif isinstance(node, c_ast.TypeDecl):
            const = const or "const" in node.quals
            inner = node.type
            if isinstance(inner, c_ast.IdentifierType):
                name = canonical(inner.names)
                if name in typedefs:
                    t = typedefs[name]
                    rows = rows or t.pointer_rows or (t.pointers > 0 and (pointers > 0 or bool(dims)))
                    return CType(t.base, t.pointers + pointers, tuple(dims) + t.dims, const or t.const, restrict,
                                 rows)
                return CType(name, pointers, tuple(dims), const, restrict, rows)
            if isinstance(inner, (c_ast.Struct, c_ast.Union)):
                kind = "struct" if isinstance(inner, c_ast.Struct) else "union"
                return CType(f"{kind} {inner.name or '?'}", pointers, tuple(dims), const, restrict, rows)
            if isinstance(inner, c_ast.Enum):
                return CType("int", pointers, tuple(dims), const, restrict)
            return CType("?", pointers, tuple(dims), const, restrict)
        elif isinstance(node, c_ast.Typename):
            node = node.type
        elif isinstance(node, c_ast.FuncDecl):
            return CType("function", pointers, tuple(dims))
        else:
            return CType("?", pointers, tuple(dims), const, restrict)


def arith_result(a: str, b: str) -> str:
    """Usual arithmetic conversions, reduced to what op classification needs."""
    for t in ("long double", "double", "float"):
        if t in (a, b):
            return t
    if "unsigned long long" in (a, b) or "unsigned long" in (a, b):
        return "unsigned long"
    if "long" in (a, b) or "long long" in (a, b):
        return "long"
    if "unsigned int" in (a, b):
        return "unsigned int"
    return "int"


# --------------------------------------------------------------------------- integer conversions (C11 6.3.1)

# Value ranges on the targets c2gpu supports (LP64: x86-64 and CUDA): char is signed.
INT_RANGES = {
    "_Bool": (0, 1), "char": (-2 ** 7, 2 ** 7 - 1), "signed char": (-2 ** 7, 2 ** 7 - 1), "unsigned char": (0, 2 ** 8 - 1),
    "short": (-2 ** 15, 2 ** 15 - 1), "unsigned short": (0, 2 ** 16 - 1),
    "int": (-2 ** 31, 2 ** 31 - 1), "unsigned int": (0, 2 ** 32 - 1),
    "long": (-2 ** 63, 2 ** 63 - 1), "unsigned long": (0, 2 ** 64 - 1),
    "long long": (-2 ** 63, 2 ** 63 - 1), "unsigned long long": (0, 2 ** 64 - 1),
}
_RANK = {"int": 1, "unsigned int": 1, "long": 2, "unsigned long": 2, "long long": 3, "unsigned long long": 3}


def promote(t: str) -> str:
    """The integer promotions: every type narrower than int becomes int (all their values fit)."""
    return "int" if t in INT_RANGES and t not in _RANK else t


def is_unsigned(t: str) -> bool:
    return t in INT_RANGES and INT_RANGES[t][0] == 0


def int_result(a: str, b: str) -> str | None:
    """The type of `a op b` for two integer types after the usual arithmetic conversions (C11 6.3.1.8).

    None when either is not an integer type.
    """
    a, b = promote(a), promote(b)
    if a not in _RANK or b not in _RANK:
        return None
    if a == b:
        return a
    if is_unsigned(a) == is_unsigned(b):
        return a if _RANK[a] >= _RANK[b] else b
    u, s = (a, b) if is_unsigned(a) else (b, a)
    if _RANK[u] >= _RANK[s]:
        return u
    if INT_RANGES[s][1] >= INT_RANGES[u][1]:
        return s                     # the signed type holds every value of the unsigned one (long vs unsigned int)
    return "unsigned " + s
