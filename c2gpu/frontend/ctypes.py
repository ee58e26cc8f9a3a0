"""Just enough of C's type system to size arrays and classify arithmetic.

pycparser gives declarations as nested TypeDecl/PtrDecl/ArrayDecl nodes; we
reduce each to a `CType`: a scalar base spelling, pointer depth, array extents
(outermost first, as AST expressions) and qualifiers.
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

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
    base: str                                   # scalar spelling after typedefs, or "struct X"
    pointers: int = 0
    dims: tuple[c_ast.Node | None, ...] = ()    # array extents, outermost first
    const: bool = False
    restrict: bool = False

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
    while True:
        if isinstance(node, c_ast.Decl):
            const = "const" in node.quals
            node = node.type
        elif isinstance(node, c_ast.PtrDecl):
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
                    return CType(t.base, t.pointers + pointers, tuple(dims) + t.dims, const or t.const, restrict)
                return CType(name, pointers, tuple(dims), const, restrict)
            if isinstance(inner, (c_ast.Struct, c_ast.Union)):
                kind = "struct" if isinstance(inner, c_ast.Struct) else "union"
                return CType(f"{kind} {inner.name or '?'}", pointers, tuple(dims), const, restrict)
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
