"""C frontend: preprocess with the system preprocessor, parse with pycparser, lower to the IR."""
from .preprocess import preprocess, PreprocessOptions
from .parse import parse_c
from .lower import lower_program

__all__ = ["preprocess", "PreprocessOptions", "parse_c", "lower_program", "load_program"]


def load_program(path: str, options: PreprocessOptions | None = None, source: str | None = None):
    """Read, preprocess, parse and lower one C file into a `Program`."""
    options = options or PreprocessOptions()
    text = preprocess(path, options, source=source)
    ast = parse_c(text, path)
    return lower_program(ast, path, options, original_source=source)
