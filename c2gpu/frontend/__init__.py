"""C frontend: preprocess with the system preprocessor, parse with pycparser, lower to the IR."""
import importlib

from .preprocess import preprocess, preprocess_recovering, PreprocessOptions

# parse (pycparser) and lower are imported on first use (start-up: ~15 ms): c2gpu.drivers.options needs
# PreprocessOptions only, and `c2gpu gpus` must not import pycparser
_LAZY = {"parse_c": ".parse", "parse_c_recovering": ".parse", "lower_program": ".lower"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["preprocess", "PreprocessOptions", "parse_c", "lower_program", "load_program", "load_program_recovering",
           "functions_as_written"]


def functions_as_written(path: str, options: PreprocessOptions | None = None):
    """The file's function definitions as written (c2gpu.syntax_tree.Function by name: no call inlined, no
    counter substituted), for what reads whole functions (`annotate`); a syntax error costs the definition it
    is in.  Raises C2GPUError when the file cannot be preprocessed."""
    from .parse import parse_c_recovering
    from .syntax import function_trees
    ast, _ = parse_c_recovering(preprocess(path, options or PreprocessOptions()), path)
    return function_trees(ast)


def load_program(path: str, options: PreprocessOptions | None = None, source: str | None = None):
    """Read, preprocess, parse and lower one C file into a `Program`; the first error is raised."""
    # start-up: parse and lower (pycparser) cost ~15 ms for commands that never read C (`c2gpu gpus`, --help)
    from .lower import lower_program
    from .parse import parse_c
    options = options or PreprocessOptions()
    text = preprocess(path, options, source=source)
    ast = parse_c(text, path)
    return lower_program(ast, path, options, original_source=source)


def load_program_recovering(path: str, options: PreprocessOptions | None = None, source: str | None = None,
                            functions: frozenset[str] | None = None):
    """Like load_program, but analyse what can be analysed: (Program, errors).

    A syntax error costs only the external declaration (function, declaration) it
    is in; a missing header is replaced by an empty one; non-fatal preprocessor
    errors keep the output.  Every such problem is returned as a C2GPUError (the
    caller reports it, compiler-style, and exits with status 1).  Raises when
    nothing of the file could be read (missing file, binary data, no declaration
    that parses).  With `functions`, only the nests of those functions are described.
    """
    # start-up: ~15 ms (pycparser), as in load_program
    from .lower import lower_program
    from .parse import parse_c_recovering
    options = options or PreprocessOptions()
    text, errors = preprocess_recovering(path, options, source=source)
    ast, parse_errors = parse_c_recovering(text, path)
    return lower_program(ast, path, options, original_source=source, functions=functions), errors + parse_errors
