"""Command line: `c2gpu analyze|passes ...`.

Exit codes (documented in README.md):
  0  success
  1  an input could not be analysed (missing file, syntax error, ...): compiler-style message on stderr
  2  bad command line (unknown option, bad -D, unknown pass)
  4  internal error (a bug in c2gpu): one line, `--debug` shows the traceback
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from . import __version__
from .diagnostics import C2GPUError
from .frontend import PreprocessOptions, load_program
from .frontend.preprocess import parse_define
from .pipeline import PassManager, PipelineError
from .registry import discover
from .report import ir_json, text

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 4

DEFAULT_PIPELINE = ("normalize",)


class UsageError(Exception):
    pass


def _preprocess_options(args) -> PreprocessOptions:
    try:
        defines = tuple(parse_define(d) for d in (args.define or []))
    except C2GPUError as e:
        raise UsageError(e.message) from None
    return PreprocessOptions(defines=defines, include_dirs=tuple(args.include or []), cpp=args.cpp)


def _add_frontend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-D", dest="define", action="append", metavar="NAME[=VALUE]", help="define a macro, as for cc")
    p.add_argument("-I", dest="include", action="append", metavar="DIR", help="add an include directory")
    p.add_argument("--cpp", metavar="CMD", help="C preprocessor to use (default: cpp, else cc -E)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="c2gpu", description="Is this C loop nest worth porting to a GPU?")
    parser.add_argument("--version", action="version", version=f"c2gpu {__version__}")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks for internal errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    a = sub.add_parser("analyze", help="describe every loop nest of C files")
    a.add_argument("files", nargs="+", metavar="FILE")
    _add_frontend_args(a)
    a.add_argument("--format", choices=("text", "json"), default="text")
    a.add_argument("--passes", metavar="P1,P2", help=f"pipeline to run (default: {','.join(DEFAULT_PIPELINE)})")
    a.add_argument("--print-after", metavar="PASS", action="append", default=[],
                   help="print each nest's IR after the named pass")
    a.add_argument("--timings", action="store_true", help="print the time spent in each pass")
    a.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")

    sub.add_parser("passes", help="list the available passes with what they require and provide")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return COMMANDS[args.command](args)
    except UsageError as e:
        print(f"c2gpu: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except C2GPUError as e:
        print(str(e), file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # never a traceback for users unless asked
        if args.debug:
            raise
        print(f"c2gpu: internal error: {type(e).__name__}: {e} (rerun with --debug for details)", file=sys.stderr)
        return EXIT_INTERNAL


def make_manager(pipeline: Sequence[str], options: dict | None = None) -> PassManager:
    registered, failures = discover()
    for f in failures:
        print(f"c2gpu: warning: pass {f.origin} failed to load: {f.message}", file=sys.stderr)
    try:
        return PassManager([r.instance for r in registered], pipeline, options)
    except PipelineError as e:
        raise UsageError(str(e)) from None


def cmd_analyze(args) -> int:
    options = _preprocess_options(args)
    pipeline = [p for p in (args.passes.split(",") if args.passes else DEFAULT_PIPELINE) if p]
    manager = make_manager(pipeline, {})
    manager.print_after = set(args.print_after)
    for name in manager.print_after:
        if name not in manager.available:
            raise UsageError(f"--print-after: unknown pass '{name}'")
    manager.dump = lambda pass_name, nest: print(f"--- {nest.name} after {pass_name} ---\n{text.nest_ir(nest)}", file=sys.stderr)
    status = EXIT_OK
    files, errors, texts = [], [], []
    for path in args.files:
        try:
            program = load_program(path, options)
        except C2GPUError as e:
            print(str(e), file=sys.stderr)
            errors.append({"path": path, "message": e.message,
                           "location": ir_json.loc(e.loc)})
            status = EXIT_INPUT
            continue
        program = manager.run(program)
        files.append(ir_json.program(program, manager.errors))
        texts.append(text.program(program, manager.errors))
    out = (json.dumps(ir_json.document(files, errors), indent=2) + "\n") if args.format == "json" else "".join(texts)
    if args.timings:
        for t in sorted(manager.timings.values(), key=lambda t: -t.seconds):
            print(f"pass {t.name:<20} {t.runs:5d} runs {t.seconds * 1000:9.2f} ms", file=sys.stderr)
    _write(out, args.output)
    return status


def _write(out: str, path: str | None) -> None:
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write(out)
    else:
        sys.stdout.write(out)


def cmd_passes(args) -> int:
    registered, failures = discover()
    rows = [(r.instance.name, r.origin, "transform" if r.instance.transforms else "analysis",
             ", ".join(r.instance.requires) or "-", ", ".join(r.instance.provides) or "-", r.instance.description)
            for r in registered]
    for name, origin, kind, req, prov, desc in rows:
        print(f"{name}  ({kind}, from {origin})\n    {desc}\n    requires: {req}\n    provides: {prov}")
    for f in failures:
        print(f"{f.origin}: failed to load: {f.message}")
    return EXIT_OK if not failures else EXIT_INPUT


COMMANDS = {"analyze": cmd_analyze, "passes": cmd_passes}

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
