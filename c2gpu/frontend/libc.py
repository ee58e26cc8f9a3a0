"""The C library functions c2gpu knows: what they compute and in which type (no side effects but errno)."""

# Math library calls the model recognizes: name -> (op kind, result type or None = "same as the f/no-f form").
_SPECIAL = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sin", "cos", "tan",
            "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
            "erf", "erfc", "tgamma", "lgamma", "cbrt", "hypot")
_CHEAP = ("fabs", "floor", "ceil", "round", "trunc", "copysign", "rint", "nearbyint")
_MINMAX = ("fmin", "fmax")
MATH_FUNCTIONS: dict[str, tuple[str, str]] = {}
for _name in _SPECIAL + _CHEAP + _MINMAX + ("sqrt", "rsqrt", "fma", "fmod", "ldexp"):
    _kind = ("sqrt" if _name in ("sqrt", "rsqrt") else "special" if _name in _SPECIAL
             else "minmax" if _name in _MINMAX else "fma" if _name == "fma"
             else "div" if _name == "fmod" else "add")
    MATH_FUNCTIONS[_name] = (_kind, "double")
    MATH_FUNCTIONS[_name + "f"] = (_kind, "float")
for _name in ("abs", "labs", "llabs"):
    MATH_FUNCTIONS[_name] = ("int", "int")
# `min` and `max` are not C library functions: in C they are the user's own (a macro is already expanded),
# and a function of the user's is never taken for a library one (see NestContext.is_math).

# The math functions that report a domain, pole or range error through errno (C11 7.12.1; glibc's default
# math_errhandling includes MATH_ERRNO): every one above but the exact ones, which never fail.  CUDA's device
# math never sets errno.
_EXACT = _CHEAP + _MINMAX + ("abs", "labs", "llabs")
SETS_ERRNO = frozenset(n for n in MATH_FUNCTIONS if n not in _EXACT and n.removesuffix("f") not in _EXACT)
