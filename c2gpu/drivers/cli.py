"""Command line: `c2gpu analyze|passes ...`.

Exit codes (documented in README.md):
  0  success
  1  an input could not be analysed (missing file, syntax error, ...): compiler-style message on stderr
  2  bad command line (unknown option, bad -D, unknown pass)
  3  verify: the port computes something different from the original; check: the gate fails
  4  internal error (a bug in c2gpu): one line, `--debug` shows the traceback
"""
from __future__ import annotations

import argparse
import atexit
import gc
import json
import os
import shlex
import sys
import time
from dataclasses import replace
from typing import Sequence

from .. import __version__, units
from . import process
from ..diagnostics import CODES, C2GPUError
from .deep import deep_call
from .options import (BLOCK_HELP, MAP_HELP, Options, OptionsError, load_gpu_option, parse_block, parse_defines,
                      parse_map, parse_params)
from ..pipeline import ANALYZE, PORT
from ..registry import discover
from ..report import ir_json
from ..report.catalogue import explain
from ..report.text import diagnostic_lines
from ..report.rules import RULES, Finding

# Imports go at the top of a module unless a measured start-up cost says otherwise.  This module is imported by every
# command, so each command imports its implementation inside its function (marked "start-up"): `c2gpu --help`, `c2gpu
# codes` and `c2gpu gpus` never load the analysis stack.  Measured on the development machine (2 cores; time to import
# after this module, bytecode compiled, best of 9): the analysis stack (c2gpu.drivers.driver: frontend, pass manager,
# perf model, codegen, reports; islpy, numpy, jinja2, pycparser) ~200 ms; port, verify, annotate load most of it
# (~150-200 ms each); the HTML report ~8 ms more (pygments); the GPU catalog and its table ~12 ms; the default-GPU
# configuration (tomllib) ~3 ms; the model list ~2.5 ms; a process pool ~8 ms.  This module with its own imports:
# ~20 ms (`python -X importtime -c "import c2gpu.drivers.cli"`, cumulative); `c2gpu codes` loads nothing more.

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_VERIFY_FAILED, EXIT_INTERNAL = 0, 1, 2, 3, 4

# the pipelines and the pass manager live in c2gpu.pipeline and c2gpu.drivers.driver; these names stay for the tests
UsageError = OptionsError
__all__ = ["main", "build_parser", "UsageError"]
EXACT_FP_HELP = ("add floating-point values in the order C does: a floating-point sum stays in one thread instead "
                 "of a reduction across threads (for results that must match bit for bit)")


def _options(args, **command_fields) -> Options:
    """The Options of a command: what every command has (preprocessing, GPU, mapping, pass-manager output),
    plus `command_fields` (the pipeline, the prediction, the CPU baseline, ...)."""
    return Options(defines=parse_defines(args.define), include_dirs=tuple(args.include or []), cpp=args.cpp,
                   gpu=load_gpu_option(args.gpu) if args.gpu else None, assume_no_alias=bool(args.assume_no_alias),
                   exact_fp=bool(getattr(args, "exact_fp", False)),
                   map=(parse_map(args.map)[0] or None) if args.map else None,
                   map_host=parse_map(args.map)[1] if args.map else (),
                   block=parse_block(args.block) if args.block else None, shared_memory=args.shared_memory,
                   print_after=tuple(args.print_after), timings=args.timings,
                   silenced=tuple(getattr(args, "silence", None) or ()), **command_fields)


def _prediction_fields(args) -> dict:
    """analyze's and check's model options (with --gpu)."""
    return {"models": None if args.model in (None, "all") else (args.model,), "params": parse_params(args.param),
            "include_context": bool(args.include_context), "registers": args.registers}


def _baseline_fields(args) -> dict:
    """analyze's and check's CPU baseline and break-even options."""
    return {"run_cpu": not args.no_run, "cc": args.cc, "cflags": tuple(args.cflags.split()), "runs": args.runs,
            "timeout": args.timeout, "extra_sources": tuple(args.extra_source),
            "break_even": _wants_break_even(args), "break_even_param": args.break_even or None,
            "targets": tuple(args.target)}


def _wants_break_even(args) -> bool:
    """The break-even search re-analyses the file at other sizes: only on request and for the HTML report."""
    if getattr(args, "no_break_even", False):
        return False
    return getattr(args, "break_even", None) is not None or bool(getattr(args, "target", None)) \
        or bool(getattr(args, "html", None))


def _add_frontend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-D", dest="define", action="append", metavar="NAME[=VALUE]", help="define a macro, as for cc")
    p.add_argument("-I", dest="include", action="append", metavar="DIR", help="add an include directory")
    p.add_argument("--cpp", metavar="CMD", help="C preprocessor to use (default: cpp, else cc -E)")


def _add_pass_manager_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--silence", metavar="CODE", action="append", default=[],
                   help="leave diagnostics with this code out of the reports (repeatable; `c2gpu codes` lists them)")
    p.add_argument("--print-after", metavar="PASS", action="append", default=[],
                   help="print each nest's IR after the named pass (on stderr)")
    p.add_argument("--timings", action="store_true", help="print the time spent in each pass (on stderr)")


def _print_timings(timings: dict) -> None:
    for t in sorted(timings.values(), key=lambda t: -t.seconds):
        print(f"{t.kind + ' ' + t.name:<25} {t.runs:5d} runs {t.seconds * 1000:9.2f} ms", file=sys.stderr)


def _analyze_args(a: argparse.ArgumentParser) -> None:
    a.add_argument("files", nargs="+", metavar="FILE_OR_DIR")
    _add_frontend_args(a)
    a.add_argument("--format", choices=("text", "json", "sarif"), default="text",
                   help="text (default), json (schema c2gpu/schemas/analysis.schema.json) or sarif (SARIF 2.1.0)")
    a.add_argument("--passes", metavar="P1,P2", help=f"pipeline to run instead of {','.join(PORT.passes)} and the prediction (e.g. "
                        f"{','.join(ANALYZE.passes)}: the IR only; with no GPU unless --gpu is given)")
    _add_pass_manager_args(a)
    a.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    _add_performance_args(a)
    _add_verdict_args(a)
    _add_report_args(a)


def _mapping_args(p: argparse.ArgumentParser) -> None:
    """port's, emit's and verify's common options."""
    _add_frontend_args(p)
    p.add_argument("--gpu", metavar="NAME|FILE.toml",
                   help="plan the kernels (structure, block shapes, shared-memory tiles) by the predicted time on "
                        "this GPU, as analyze does (default: the GPU analyze predicts for: $C2GPU_GPU, else `gpu` in "
                        "c2gpu.toml or [tool.c2gpu] of pyproject.toml, else h100-sxm); `none`: c2gpu's rules and "
                        "default block shapes")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="value of a symbolic size (a function argument such as n) for the plan, as for analyze")
    p.add_argument("--registers", choices=("auto", "ptxas", "estimate"), default="auto",
                   help="registers per thread for the plan from ptxas (auto: when nvcc is on PATH) or the Alg. 6.4 "
                        "estimate, as for analyze")
    p.add_argument("--shared-memory", choices=("auto", "off"), default="auto",
                   help="stage reused data in shared memory (auto) or never (off)")
    p.add_argument("--shared-budget", type=int, metavar="BYTES", help="shared memory per block for the tiles")
    p.add_argument("--shared", action="append", default=[], metavar="ARRAY",
                   help="always stage this array's tiles (repeatable)")
    p.add_argument("--no-shared", action="append", default=[], metavar="ARRAY",
                   help="never stage this array (repeatable)")
    p.add_argument("--assume-no-alias", action="store_true",
                   help="treat distinct pointer parameters as non-overlapping (as if declared restrict)")
    p.add_argument("--exact-fp", action="store_true", help=EXACT_FP_HELP)
    p.add_argument("--map", metavar="I,J", help=MAP_HELP)
    p.add_argument("--block", metavar="BXxBY[xBZ]", help=BLOCK_HELP)
    _add_pass_manager_args(p)


def _port_args(po: argparse.ArgumentParser) -> None:
    po.add_argument("file", metavar="FILE")
    po.add_argument("-o", "--output", metavar="OUT.cu", help="output file (default: FILE with .cu)")
    po.add_argument("--check-compile", action="store_true", help="compile the result with nvcc and show ptxas usage")
    po.add_argument("--split", action="store_true",
                    help="write kernels and wrappers to OUT.cu and the C code calling them to OUT.host.c "
                         "(automatic when the C code cannot be compiled as C++, e.g. VLA parameters)")
    po.add_argument("--worth", action="store_true",
                    help="port only the nests whose verdict is PORT (analyze's, with the CPU baseline below); the "
                         "others stay C, each with its verdict as the reason")
    _add_baseline_run_args(po, "with --worth: ")
    _add_baseline_build_args(po)
    _mapping_args(po)


def _emit_args(em: argparse.ArgumentParser) -> None:
    em.add_argument("file", metavar="FILE")
    em.add_argument("-o", "--output", metavar="OUT.cu",
                    help="write the kernels to OUT.cu and the wrappers' prototypes to OUT.h beside it (default: "
                         "stdout, no header)")
    _mapping_args(em)


def _annotate_args(an: argparse.ArgumentParser) -> None:
    an.add_argument("file", metavar="FILE")
    dialect = an.add_mutually_exclusive_group(required=True)
    dialect.add_argument("--openmp", dest="dialect", action="store_const", const="openmp",
                         help="write `#pragma omp parallel for` with its clauses on the loops c2gpu proves parallel")
    dialect.add_argument("--openmp-target", dest="dialect", action="store_const", const="openmp-target",
                         help="write `#pragma omp target teams distribute parallel for` with its clauses and the "
                              "map clauses of what the loop reads and writes (offloading to a GPU)")
    dialect.add_argument("--openacc", dest="dialect", action="store_const", const="openacc",
                         help="write `#pragma acc parallel loop` with its clauses and copyin/copy clauses")
    an.add_argument("-o", "--output", metavar="OUT.c", help="output file (default: stdout)")
    _add_frontend_args(an)
    an.add_argument("--assume-no-alias", action="store_true",
                    help="assume that distinct pointer parameters never overlap (as for analyze)")
    an.add_argument("--exact-fp", action="store_true", help=EXACT_FP_HELP)


def _fix_args(fx: argparse.ArgumentParser) -> None:
    fx.add_argument("file", metavar="FILE")
    what = fx.add_mutually_exclusive_group()
    what.add_argument("--apply", action="store_true", help="write the fixed file over FILE (it asks for that)")
    what.add_argument("-o", "--output", metavar="OUT.c", help="write the fixed file to OUT.c")
    fx.add_argument("--assert", dest="asserted", action="store_true",
                    help="also the fixes that assert what the code does not show (restrict), for you to check")
    fx.add_argument("--gpu", metavar="NAME", help="the GPU the gains of unblocking edits are predicted for "
                                                  "(as for analyze)")
    _add_frontend_args(fx)
    fx.add_argument("--assume-no-alias", action="store_true",
                    help="assume that distinct pointer parameters never overlap (as for analyze)")


def _verify_args(ve: argparse.ArgumentParser) -> None:
    ve.add_argument("file", metavar="FILE")
    ve.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance for floating point (default 1e-5)")
    ve.add_argument("--atol", type=float, default=0.0, help="absolute tolerance added to it (default 0)")
    ve.add_argument("--timeout", type=float, default=120.0, help="seconds allowed for each compile and run")
    ve.add_argument("--cc", default="cc", help="C compiler for the original program")
    ve.add_argument("--keep", metavar="DIR", help="keep the instrumented sources and binaries in DIR")
    ve.add_argument("--extra-source", action="append", default=[], metavar="FILE.c",
                    help="another C file of the program, compiled and linked with both the original and the port "
                         "(repeatable; e.g. PolyBench's utilities/polybench.c)")
    _mapping_args(ve)


def _no_args(p: argparse.ArgumentParser) -> None:
    pass


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line.  With `command`, only that subcommand is declared (the one argv names: declaring every
    subcommand's parser and options was 2% of the first command's CPU); None declares all of them."""
    parser = argparse.ArgumentParser(prog="c2gpu", description="Is this C loop nest worth porting to a GPU?")
    parser.add_argument("--version", action="version", version=f"c2gpu {__version__}")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks for internal errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (declare, kwargs) in SUBCOMMANDS.items():
        if command in (None, name):
            declare(sub.add_parser(name, **kwargs))
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand `argv` names: its first word that is not an option (the top-level options take no value);
    None when that is not a subcommand (argparse then says what is wrong, from the whole parser)."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in SUBCOMMANDS else None


def run() -> None:
    """The `c2gpu` command (and `python -m c2gpu`): main(), then the process ends without Python's teardown.
    That teardown frees every object the analysis made one by one, collects cycles once more and unloads the
    modules: 4% of the first command's CPU, for nothing a finished command needs.  What must happen still
    does: the exit handlers run (a tool measuring coverage saves its data) and the output is flushed; every
    file c2gpu writes is closed when written."""
    code = main()
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:       # a closed pipe, an interrupted handler: let Python end as it would
        sys.exit(code)
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    # c2gpu does no linear algebra: numpy's OpenBLAS need not start a thread per core when it is imported
    # (about 0.07 s of CPU on every command here); the user's setting wins, and the user's program does not
    # inherit ours (process.user_environment)
    process.set_for_c2gpu("OPENBLAS_NUM_THREADS", "1")
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_in(argv))
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    # No automatic cycle collection while a command runs: it ran some 90 times while the first command loaded
    # its modules (0.02 s of CPU).  A file's analysis leaves a few thousand objects in cycles: a multi-file
    # run collects them after each file (_analyze_all); a caller of main() gets its collector back.
    collecting = gc.isenabled()
    gc.disable()
    try:
        # a large stack and recursion limit: deeply nested C (40 loops, thousands of terms) must not crash us
        return deep_call(COMMANDS[args.command], args)
    except UsageError as e:
        print(f"c2gpu: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except C2GPUError as e:
        print(str(e), file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        return 130
    except OSError as e:  # an output path that cannot be written (no such directory, a directory, ...)
        if args.debug:
            raise
        where = f"'{e.filename}': " if e.filename else ""
        print(f"error: {where}{e.strerror or e}", file=sys.stderr)
        return EXIT_INPUT
    except Exception as e:  # never a traceback for users unless asked
        if args.debug:
            raise
        print(f"c2gpu: internal error: {type(e).__name__}: {e} (rerun with --debug for details)", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        if collecting:
            gc.enable()


def cmd_analyze(args) -> int:
    # start-up: the analysis stack ~200 ms, the GPU configuration ~3 ms (see the top)
    from .config import choose_gpu
    from .driver import TextStyle, manager_for, merge_timings
    passes = tuple(p for p in args.passes.split(",") if p) if args.passes else None
    # the default GPU (C2GPU_GPU, c2gpu.toml, [tool.c2gpu], else config.DEFAULT_GPU) unless a pass list is given
    choice = choose_gpu(args.gpu) if args.gpu or passes is None else None
    args.gpu = choice.name if choice is not None else None
    if not args.gpu and (args.param or args.model or args.include_context or args.block):
        raise UsageError("--param, --model, --block and --include-context need --gpu NAME (--gpu none was given)")
    options = _options(args, pipeline=PORT.name, passes=passes, **_prediction_fields(args), **_baseline_fields(args))
    manager = manager_for(options)
    want_report = _wants_report(args)
    style = TextStyle(details=args.details, colour=_colour(args), gpu_origin=choice.origin if choice else "")
    # the files (directories expand to their *.c files), analysed in order or by --jobs worker processes
    paths, expand_errors = _expand_inputs(args.files)
    for written in filter(None, (args.output, args.html)):
        _not_an_input(written, paths)
    results = _analyze_all(args.jobs, paths, options, manager, style, want_report, want_json=args.format == "json")
    status = EXIT_INPUT if expand_errors or any(r.status for r in results) else EXIT_OK
    files = [r.file_dict for r in results if r.file_dict is not None]
    errors = expand_errors + [e for r in results for e in r.errors]
    texts = [r.text for r in results]
    for r in results:
        merge_timings(manager.timings, r.timings)
    if args.format == "sarif":
        # start-up: with the analysis stack (see the top)
        from ..report.sarif import sarif_document
        out = json.dumps(sarif_document([r.report for r in results if r.report is not None], errors), indent=2) + "\n"
    else:
        out = (json.dumps(ir_json.document(files, errors), indent=2) + "\n") if args.format == "json" else "".join(texts)
    if args.html:
        # start-up: ~8 ms over the analysis stack (pygments; see the top)
        from ..report.html import render_html
        with open(args.html, "w", encoding="utf-8") as f:
            f.write(render_html([r.report for r in results if r.report is not None], errors))
    if options.timings:
        _print_timings(manager.timings)
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
    for r in registered:
        p = r.instance
        print(f"{p.name}  ({'transform' if p.transforms else 'analysis'}, from {r.origin})\n    {p.description}\n"
              f"    requires: {', '.join(p.requires) or '-'}\n    uses: {', '.join(p.uses) or '-'}\n"
              f"    provides: {', '.join(p.provides) or '-'}")
    for f in failures:
        print(f"{f.origin}: failed to load: {f.message}")
    return EXIT_OK if not failures else EXIT_INPUT


def _port_outcomes_report(outcomes, notes=()) -> str:
    """What port did with each nest; `notes`: the file's own diagnostics (a nest not described, a pragma not
    understood), first, so that no nest disappears without a word."""
    lines = [line for f in notes for line in diagnostic_lines(f)]
    for o in outcomes:
        if o.ported:
            ks = o.code.kernels
            lines.append(f"{o.nest.loc}: note: ported nest {o.nest.name}: {len(ks)} kernel{'s' if len(ks) != 1 else ''}")
            for k in ks:
                lines.append(f"    {k.name}: block {k.block[0]}x{k.block[1]}x{k.block[2]}; {k.why}")
            for n in o.code.notes:
                lines.append(f"    note: {n}")
            for kernel, d in o.code.shared_decisions:
                opp = d.opportunity
                shape = "][".join(str(e) for e in opp.shape)
                lines.append(f"    shared memory {'KEPT' if d.taken else 'not kept'}: {opp.array} [{shape}] in {kernel} ({opp.kind}, "
                             f"{opp.size_bytes} B, saves {opp.loads_saved_per_block:.0f} global loads per block, "
                             f"value {units.significant(opp.value)} loads/B, bank conflicts {opp.conflicts}-way"
                             f"{' with padding' if opp.pad else ''}): {d.reason}")
            for k in ks:
                for p in k.promotions:
                    done = " and ".join(w for w, x in (("loaded before it", p.load), ("stored after it", p.store)) if x)
                    lines.append(f"    register: {p.text} across loop '{p.loop_var}' in {k.name} ({done})")
            for a in o.code.arrays:
                if a.why and not a.why.startswith("read by"):
                    lines.append(f"    {a.name}: {a.why}")
            perf = o.performance
            if perf is not None and perf.shared_trials:
                with_s = min(t for b, _, t, _ in perf.shared_trials if b is not None)
                kept = "no shared memory" if perf.shared_budget is None else f"shared budget {units.byte_size(perf.shared_budget)}"
                lines.append(f"    predicted on {perf.gpu.key} ({perf.default_model}): {units.seconds(perf.without_shared_s)} "
                             f"without shared memory, {units.seconds(with_s)} with it -> {kept}")
        elif o.left:
            lines.append(f"{o.loc or o.nest.loc}: note: {o.left} [{o.nest.name}]")
        else:
            lines.append(f"{o.loc or o.nest.loc}: note: not portable: {o.reason} [{o.nest.name}]")
    return "\n".join(lines)


def _port_options(args) -> Options:
    """port/emit/verify's options: the plan analyze predicts for (the same default GPU, sizes and register counts),
    so that the kernels emitted are the kernels whose times analyze printed."""
    # start-up: ~3 ms (see the top)
    from .config import choose_gpu
    args.gpu = choose_gpu(args.gpu).name
    return _options(args, pipeline=PORT.name, registers=args.registers, params=parse_params(args.param),
                    shared_budget=args.shared_budget, shared_force=tuple(args.shared),
                    shared_exclude=tuple(args.no_shared), extra_sources=tuple(getattr(args, "extra_source", ())))


def cmd_port(args) -> int:
    # start-up: ~150-200 ms (see the top)
    from .driver import manager_for
    from .port import port_file
    options = _port_options(args)
    manager = manager_for(options)
    out = args.output or (args.file[:-2] + ".cu" if args.file.endswith(".c") else args.file + ".cu")
    _not_the_input(out, args.file)
    left = _not_worth(args, options) if args.worth else None
    result = port_file(args.file, options.preprocess, manager, out, split=True if args.split else None, left=left)
    with open(out, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(result.text)
    print(_port_outcomes_report(result.outcomes, result.notes), file=sys.stderr)
    print(f"wrote {out}: {len(result.ported)} of {len(result.outcomes)} nests ported", file=sys.stderr)
    if result.host_text is not None:
        # start-up (see the top)
        from .port import host_name_for
        host = host_name_for(out)
        _not_the_input(host, args.file)
        with open(host, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(result.host_text)
        print(f"wrote {host}: the C code calling the kernels (split because {'; '.join(result.split_reasons)}); "
              f"build with: {_split_build_line(out, host, options.preprocess)}", file=sys.stderr)
    if options.timings:
        _print_timings(manager.timings)
    if args.check_compile:
        return _check_compile(out, options)
    return EXIT_OK


def _not_worth(args, options) -> dict[str, str]:
    """port --worth: the portable nests analyze does not recommend (verdict other than PORT, on the same plan
    and GPU), by name, with their verdict.  One analysis, as `analyze` runs it (CPU baseline included)."""
    # start-up: ~200 ms (see the top)
    from .driver import analyze
    if options.gpu is None:
        raise UsageError("--worth needs a GPU to predict for (--gpu NAME, not none)")
    report = analyze(args.file, replace(options, run_cpu=not args.no_run, cc=args.cc, cflags=tuple(args.cflags.split()),
                                        runs=args.runs, timeout=args.timeout,
                                        extra_sources=tuple(args.extra_source), break_even=False))
    return {n.name: f"left on the CPU (--worth): {n.verdict}: {n.reason}" for n in report.nests
            if n.ported and n.verdict_class != "port"}


def _split_build_line(cu: str, host: str, preprocess) -> str:
    """The commands that build a split port, objects named beside their sources (`-o`: `nvcc -c dir/x.cu` writes
    x.o in the working directory), with the user's -D and -I for the C compiler and the link."""
    flags = "".join(f" {_q(f'-D{n}={v}')}" for n, v in preprocess.defines) + \
        "".join(f" {_q(f'-I{d}')}" for d in preprocess.include_dirs)
    cu_o = (cu[:-3] if cu.endswith(".cu") else cu) + ".o"
    host_o = (host[:-2] if host.endswith(".c") else host) + ".o"
    return (f"nvcc -arch=sm_80 -c {_q(cu)} -o {_q(cu_o)} && cc{flags} -c {_q(host)} -o {_q(host_o)} && "
            f"nvcc -arch=sm_80 -o prog {_q(cu_o)} {_q(host_o)} -lm")


def _not_the_input(written: str, source: str) -> None:
    _not_an_input(written, [source])


def _not_an_input(written: str, sources) -> None:
    """No command writes over a file it reads."""
    for source in sources:
        if os.path.exists(source) and os.path.exists(written) and os.path.samefile(written, source):
            raise UsageError(f"the output '{written}' would overwrite the input file '{source}'; choose another")


def _q(path: str) -> str:
    """A file name as a shell word (the build hints are meant to be pasted)."""
    return shlex.quote(path)


def _check_compile(path: str, options) -> int:
    # start-up: ~120 ms, the code generator (see the top)
    from ..codegen.nvcc import compile_cuda
    res = compile_cuda(path, defines=options.defines, include_dirs=options.include_dirs)
    if res is None:
        print("c2gpu: note: nvcc is not on PATH: the emitted code was not compiled", file=sys.stderr)
        return EXIT_OK
    if not res.ok:
        print(res.stderr, file=sys.stderr)
        print(f"c2gpu: error: nvcc failed on {path}", file=sys.stderr)
        return EXIT_INPUT
    for k in res.kernels:
        print(f"ptxas: {k.name}: {k.registers} registers, {k.spill_stores} bytes spill stores, "
              f"{k.spill_loads} bytes spill loads, {k.shared_bytes} bytes shared memory", file=sys.stderr)
    return EXIT_OK


def cmd_annotate(args) -> int:
    # start-up: ~150 ms (see the top)
    from .annotate import annotate_file, said
    if args.output:
        _not_the_input(args.output, args.file)
    options = Options(defines=parse_defines(args.define), include_dirs=tuple(args.include or []), cpp=args.cpp,
                      assume_no_alias=bool(args.assume_no_alias), exact_fp=bool(args.exact_fp))
    result = annotate_file(args.file, options, args.dialect)
    print(said(args.file, result, args.dialect), file=sys.stderr)
    if not os.path.isfile(args.file):
        return EXIT_INPUT
    _write(result.source, args.output)
    return EXIT_INPUT if result.errors else EXIT_OK      # what could not be read is said, the rest is annotated


def cmd_fix(args) -> int:
    # start-up: the analysis stack, as annotate (see the top)
    from .fix import fix_file
    if args.output:
        _not_the_input(args.output, args.file)
    from .config import choose_gpu
    gpu = choose_gpu(args.gpu).name
    options = Options(defines=parse_defines(args.define), include_dirs=tuple(args.include or []), cpp=args.cpp,
                      assume_no_alias=bool(args.assume_no_alias), gpu=load_gpu_option(gpu) if gpu else None)
    written = args.output or (args.file if args.apply else None)
    return EXIT_OK if fix_file(args.file, options, written, args.asserted) else EXIT_INPUT


def cmd_lsp(args) -> int:
    try:    # start-up: pygls and the analysis stack, only for this command
        from .lsp import serve
    except ImportError as e:
        raise UsageError(f"the language server needs pygls ({e}): pip install 'c2gpu[lsp]'") from None
    serve()
    return EXIT_OK


def cmd_emit(args) -> int:
    # start-up: ~150-200 ms (see the top)
    from .driver import manager_for
    from ..codegen import emit_header, emit_kernels
    from .port import analyse_for_port
    options = _port_options(args)
    manager = manager_for(options)
    _, outcomes = analyse_for_port(args.file, options.preprocess, manager)
    # OUT.h beside OUT.cu: the C code calling the wrappers includes it
    header = os.path.splitext(args.output)[0] + ".h" if args.output else None
    for written in filter(None, (args.output, header)):
        _not_the_input(written, args.file)
    cu_name = os.path.basename(args.output) if args.output else "kernels.cu"
    text = emit_kernels(outcomes, args.file, cu_name, header and os.path.basename(header))
    print(_port_outcomes_report(outcomes), file=sys.stderr)
    if options.timings:
        _print_timings(manager.timings)
    _write(text, args.output)
    if header is not None:
        _write(emit_header(outcomes, args.file, header, cu_name), header)
    return EXIT_OK


def cmd_verify(args) -> int:
    # start-up: ~150-200 ms (see the top)
    from .driver import manager_for
    from .verify import verify
    options = _port_options(args)
    if not args.timeout > 0:
        raise UsageError(f"--timeout {args.timeout:g}: expected a number of seconds > 0")
    if not (args.rtol >= 0 and args.atol >= 0):
        raise UsageError("--rtol and --atol must be >= 0")
    manager = manager_for(options)
    res = verify(args.file, options.preprocess, manager, rtol=args.rtol, atol=args.atol, timeout=args.timeout,
                 cc=args.cc, keep=args.keep, extra_sources=tuple(args.extra_source))
    print(_port_outcomes_report(res.outcomes), file=sys.stderr)
    if options.timings:
        _print_timings(manager.timings)
    if res.ok:
        print(f"verify: PASS: {res.message}; largest difference {res.max_abs_diff:.3g} "
              f"(relative {res.max_rel_diff:.3g})")
        return EXIT_OK
    print(f"verify: FAIL: {res.message}")
    kind = _kind_of_difference(args, options, res)
    if kind:
        print(f"verify: {kind}")
    return EXIT_VERIFY_FAILED


def _kind_of_difference(args, options, res) -> str:
    """When a nest whose floating-point sums the port reassociates fails, which kind of difference it is: the
    same port with the sums in C's order (--exact-fp) is verified again.  If that one matches, the port computes
    the right thing in another order, and this input makes the order matter (its terms cancel); if it does not,
    the difference is something else."""
    # start-up (see the top)
    from .driver import manager_for
    from .verify import verify
    failing = res.worst.label.split("|", 1)[0] if res.worst is not None else None
    reassociated = [o for o in res.outcomes if o.ported and o.plan is not None and o.plan.mapping.reassociates
                    and (failing is None or o.nest.name == failing)]
    if options.exact_fp or not reassociated:
        return ""
    exact = replace(options, exact_fp=True)
    again = verify(args.file, exact.preprocess, manager_for(exact), rtol=args.rtol, atol=args.atol,
                   timeout=args.timeout, cc=args.cc, extra_sources=tuple(args.extra_source))
    names = ", ".join(o.nest.name for o in reassociated)
    before = {o.nest.name for o in res.outcomes if o.ported}
    after = {o.nest.name for o in again.outcomes if o.ported}
    if before - after:
        # the second run checks other kernels (a sum kept in C's order may leave a nest on the CPU): it cannot
        # separate the order of the additions from anything else
        return (f"with the floating-point sums of {names} in C's order (--exact-fp), {', '.join(sorted(before - after))} "
                "would not be ported, so a second run cannot tell whether the difference is the order of the additions")
    if again.ok:
        return (f"with the floating-point sums of {names} in C's order (--exact-fp) the port matches the original "
                f"({again.message}): the difference is the order of the additions, which this input makes large "
                "(terms that cancel), not a wrong port; port with --exact-fp to keep C's order")
    return (f"with the floating-point sums of {names} in C's order (--exact-fp) the port still differs "
            f"({again.message}): the difference is not the order of the additions")


# --------------------------------------------------------------------------- GPU model (issue 4)
# `c2gpu gpus`, and analyze's --gpu/--model/--param/... options and performance output.  Kept together
# here; the report itself is c2gpu.perf.report.

def _add_performance_args(a: argparse.ArgumentParser) -> None:
    # start-up: ~2.5 ms for commands without these options (see the top)
    from ..model import MODELS
    have = set(a._option_string_actions)
    a.add_argument("--gpu", metavar="NAME|FILE.toml",
                   help="predict performance on this GPU: a key of `c2gpu gpus` or a description file; `none`: no "
                        "prediction (default: $C2GPU_GPU, else `gpu` in c2gpu.toml or [tool.c2gpu] of "
                        "pyproject.toml, else h100-sxm)")
    a.add_argument("--model", choices=sorted(MODELS) + ["all"],
                   help="performance model to report (default: every model, the validated default marked)")
    a.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="value of a symbolic size (a function argument such as n) for the prediction")
    a.add_argument("--include-context", action="store_true", help="add CUDA context creation to the total time")
    a.add_argument("--registers", choices=("auto", "ptxas", "estimate"), default="auto",
                   help="registers per thread from ptxas (auto: when nvcc is on PATH) or the Alg. 6.4 estimate")
    if "--assume-no-alias" not in have:
        a.add_argument("--assume-no-alias", action="store_true",
                       help="treat distinct pointer parameters as non-overlapping (as if declared restrict)")
    if "--exact-fp" not in have:
        a.add_argument("--exact-fp", action="store_true", help=EXACT_FP_HELP)
    if "--map" not in have:
        a.add_argument("--map", metavar="I,J", help=MAP_HELP)
    if "--block" not in have:
        a.add_argument("--block", metavar="BXxBY[xBZ]", help=BLOCK_HELP)
    if "--shared-memory" not in have:
        a.add_argument("--shared-memory", choices=("auto", "off"), default="auto",
                       help="with --gpu: choose shared-memory tiles and their budget by predicted time, reporting the "
                            "time with and without them (auto, the default), or predict the plain kernels (off)")


def _gpus_args(g: argparse.ArgumentParser) -> None:
    g.add_argument("--format", choices=("text", "json"), default="text")


def cmd_gpus(args) -> int:
    # start-up: ~12 ms for the commands other than gpus (see the top)
    from ..model.gpu import list_gpus
    from ..perf.report import gpus_table
    gpus = list_gpus()
    if args.format == "json":
        sys.stdout.write(json.dumps([{"key": g.key, "name": g.name, "aliases": list(g.aliases), "sm_count": g.sm_count,
                                      "core_clock_ghz": g.core_clock_ghz, "dram_bandwidth_gbs": g.dram_bandwidth_gbs,
                                      "peak_fp32_gflops": g.peak_fp32_gflops, "pcie_generation": g.pcie_generation,
                                      "pcie_lanes": g.pcie_lanes, "transfer_peak_mbs": g.transfer_peak_mbs}
                                     for g in gpus], indent=2) + "\n")
    else:
        sys.stdout.write(gpus_table(gpus))
    return EXIT_OK


def _add_verdict_args(a: argparse.ArgumentParser) -> None:
    _add_baseline_run_args(a)
    _add_baseline_build_args(a)
    a.add_argument("--break-even", metavar="NAME", nargs="?", const="",
                   help="also find the size at which porting pays off (it analyses the file again at other sizes; "
                        "the HTML report always has it): over the size macro NAME (default: the -D sizes, then the "
                        "file's #defines)")
    a.add_argument("--no-break-even", action="store_true", help=argparse.SUPPRESS)   # the default since 0.2
    a.add_argument("--target", type=float, action="append", default=[],
                   help="also find the size reaching this speedup (e.g. --target 10; implies --break-even)")
    a.add_argument("--details", action="store_true",
                   help="also print each nest's IR and the performance analysis behind the verdict")
    a.add_argument("--brief", action="store_true", help=argparse.SUPPRESS)          # the default since 0.2


def _add_baseline_run_args(a: argparse.ArgumentParser, when: str = "") -> None:
    """How the CPU baseline runs (analyze, check, and port --worth: `when` says so in the help)."""
    a.add_argument("--no-run", action="store_true",
                   help=f"{when}do not build and time the original program: use the static CPU estimate")
    a.add_argument("--cc", default="cc", help=f"{when}C compiler for the CPU baseline (default: cc)")
    a.add_argument("--cflags", default="-O2", help=f"{when}flags for the CPU baseline build (default: -O2)")
    a.add_argument("--runs", type=int, default=3, help=f"{when}program runs for the CPU baseline median (default: 3)")


def _add_baseline_build_args(a: argparse.ArgumentParser) -> None:
    a.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="seconds allowed for each compile and run of the CPU baseline (default: 60)")
    a.add_argument("--extra-source", action="append", default=[], metavar="FILE.c",
                   help="another C file of the program, compiled and linked with it for the CPU baseline "
                        "(repeatable; e.g. PolyBench's utilities/polybench.c)")


def _colour(args) -> bool:
    """Colour only for a terminal: never in a file written with -o, nor under NO_COLOR."""
    # start-up: ~3 ms (see the top)
    from ..report.verdict_text import use_colour
    return not getattr(args, "output", None) and use_colour()


EXIT_BELOW_MIN = EXIT_VERIFY_FAILED   # check: the gate fails (a nest below --min-speedup, or not portable)


def _add_report_args(a: argparse.ArgumentParser) -> None:
    a.add_argument("--html", metavar="FILE", help="with --gpu, also write a self-contained HTML report to FILE")
    a.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="analyse N files at a time in worker processes (0: one per CPU; default 1)")


def _wants_report(args) -> bool:
    wanted = getattr(args, "format", "") == "sarif" or bool(getattr(args, "html", None))
    if wanted and not getattr(args, "gpu", None):
        raise UsageError("--format sarif and --html need a GPU (--gpu none was given; the reports are about the "
                         "porting verdict)")
    return wanted


def _expand_inputs(items) -> tuple[list[str], list[dict]]:
    """Files as given; a directory becomes its *.c files, recursively, sorted by path."""
    paths, errors = [], []
    for item in items:
        if os.path.isdir(item):
            found = sorted(os.path.join(root, f) for root, dirs, files in os.walk(item) for f in files
                           if f.endswith(".c"))
            if not found:
                message = "is a directory with no C files (*.c) in it"
                print(f"{item}: error: {message}", file=sys.stderr)
                errors.append({"path": item, "message": message, "location": None})
            paths.extend(found)
        else:
            paths.append(item)
    return paths, errors


class _Progress:
    """`[3/17] file.c` on stderr, rewritten in place; only when stderr is a terminal."""

    def __init__(self, total: int, stream=None):
        self.stream = stream or sys.stderr
        self.total = total
        self.active = total > 1 and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.done = 0

    def show(self, path: str) -> None:
        if self.active:
            line = f"[{self.done}/{self.total}] {path}"
            self.stream.write("\r\033[K" + line[:200])
            self.stream.flush()

    def step(self, path: str) -> None:
        self.done += 1
        self.show(path)

    def clear(self) -> None:
        if self.active:
            self.stream.write("\r\033[K")
            self.stream.flush()


class _Ticker:
    """For one file that takes long (--html, --break-even, a large file): what c2gpu is doing, on stderr and
    rewritten in place, from TICKER_AFTER_S seconds on; only when stderr is a terminal, and cleared at the end."""

    def __init__(self, path: str, stream=None):
        self.clock, self.path, self.stream = time.monotonic, path, stream or sys.stderr
        self.active = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start, self.shown = self.clock(), False

    def __call__(self, what: str) -> None:
        elapsed = self.clock() - self.start
        if self.active and elapsed >= TICKER_AFTER_S:
            self.stream.write("\r\033[K" + f"c2gpu: {self.path}: {what} ({elapsed:.0f} s)"[:200])
            self.stream.flush()
            self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


TICKER_AFTER_S = 2.0


def _analyze_all(jobs: int, paths: list[str], options: Options, manager, style: TextStyle | None,
                 want_report: bool, want_json: bool = True) -> list[FileAnalysis]:
    """Every file, results in the order given; --jobs N > 1 uses a process pool (output identical)."""
    # start-up: ~200 ms (see the top)
    from .driver import analyze_file, analyze_worker
    if jobs is None or jobs < 0:
        raise UsageError("--jobs must be 0 (one per CPU) or a positive number")
    jobs = jobs or os.cpu_count() or 1
    progress = _Progress(len(paths))

    def err(message):
        progress.clear()
        print(message, file=sys.stderr)

    if jobs <= 1 or len(paths) <= 1 or options.print_after:
        results = []
        for k, path in enumerate(paths):
            progress.show(path)
            ticker = manager.progress = _Ticker(path) if len(paths) == 1 else None
            results.append(analyze_file(path, options, manager, style=style, want_report=want_report, err=err,
                                        want_json=want_json))
            if ticker is not None:
                ticker.clear()
                manager.progress = None
            manager.clear()     # the file's report is built: its nests' analyses are not needed any more
            if k + 1 < len(paths):
                gc.collect(0)   # and the cycles they made can go (main runs commands without collection)
            progress.step(path)
        progress.clear()
        return results
    # start-up: a process pool, ~8 ms, for --jobs only (see the top)
    from concurrent.futures import ProcessPoolExecutor, as_completed
    import multiprocessing
    results: list = [None] * len(paths)
    # spawned workers (not forked: this process runs threads), each with the deep stack main() gives
    with ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(deep_call, analyze_worker, path, options, style, want_report, want_json): k
                   for k, path in enumerate(paths)}
        for fut in as_completed(futures):
            k = futures[fut]
            results[k] = fut.result()
            progress.step(paths[k])
    progress.clear()
    for r in results:
        for m in r.messages:
            print(m, file=sys.stderr)
    return results


def _check_args(c: argparse.ArgumentParser) -> None:
    c.add_argument("files", nargs="+", metavar="FILE_OR_DIR")
    _add_frontend_args(c)
    c.add_argument("--min-speedup", type=float, default=1.0, metavar="X",
                   help="smallest acceptable end-to-end speedup over the CPU (default 1: the GPU must be faster)")
    c.add_argument("--kernel-only", action="store_true",
                   help="compare the kernels-only speedup (data already on the GPU) with --min-speedup")
    c.add_argument("--strict", action="store_true",
                   help="also fail for a nest with no verdict (no CPU time or no prediction, e.g. a symbolic "
                        "size without --param)")
    c.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when the gate fails (1 and 2 still report unreadable input and bad options)")
    c.add_argument("--format", choices=("text", "json", "sarif"), default="text",
                   help="text (default), json (schema c2gpu/schemas/check.schema.json) or sarif (SARIF 2.1.0)")
    c.add_argument("-o", "--output", metavar="FILE",
                   help="write the report to FILE; the terminal still gets the text lines and the summary")
    c.add_argument("-v", "--verbose", action="store_true", help="also print a line for each nest that passes")
    c.add_argument("--jobs", "-j", type=int, default=1, metavar="N", help="analyse N files at a time (0: one per CPU)")
    _add_performance_args(c)
    _add_baseline_run_args(c)
    _add_baseline_build_args(c)
    _add_pass_manager_args(c)
    c.set_defaults(break_even=None, no_break_even=True, target=[])


def cmd_check(args) -> int:
    # start-up: ~200 ms (see the top)
    from ..report.sarif import sarif_document
    from ..report.check_json import check_document
    from .config import choose_gpu
    from .driver import manager_for, merge_timings
    args.gpu = choose_gpu(args.gpu).name     # the same default GPU as analyze (C2GPU_GPU, c2gpu.toml, ...)
    if not args.gpu:
        raise UsageError("check needs a GPU: --gpu none was given (see `c2gpu gpus`)")
    if args.min_speedup <= 0:
        raise UsageError("--min-speedup must be positive")
    options = _options(args, pipeline=PORT.name, **_prediction_fields(args), **_baseline_fields(args))
    manager = manager_for(options)
    paths, expand_errors = _expand_inputs(args.files)
    if args.output:
        _not_an_input(args.output, paths)
    results = _analyze_all(args.jobs, paths, options, manager, None, want_report=True)
    reports = [r.report for r in results if r.report is not None]
    findings = {id(n): _check_nest(n, args.min_speedup, args.kernel_only, args.strict)
                for rep in reports for n in rep.nests}
    lines = []
    for rep in reports:
        if not rep.nests and args.verbose:
            lines.append(f"{rep.path}: note: no loop nests to check")
        for n in rep.nests:
            f = findings[id(n)]
            if f.level != "note" or args.verbose:
                loc = n.location
                lines.append(f"{loc.file}:{loc.line}:{loc.col}: {f.level}: nest {n.name}: {f.message} [{f.rule}]")
    for r in results:
        merge_timings(manager.timings, r.timings)
    if options.timings:
        _print_timings(manager.timings)
    count = {rule: sum(f.rule == rule for f in findings.values()) for rule in RULES}
    failed = any(f.level == "error" for f in findings.values())
    reached, checked = count["c2gpu/reaches-min-speedup"], len(findings)
    others = [f"{count[rule]} {what}" for rule, what in (("c2gpu/below-min-speedup", "below"),
                                                        ("c2gpu/not-portable", "cannot be ported"),
                                                        ("c2gpu/no-verdict", "have no verdict")) if count[rule]]
    summary = (f"c2gpu check: {reached} of {checked} nest{'s' if checked != 1 else ''} "
               f"reach{'es' if checked == 1 else ''} {args.min_speedup:g}x on {args.gpu}"
               + (" (kernels only)" if args.kernel_only else "") + (f"; {', '.join(others)}" if others else "")
               + ("; the gate fails (--exit-zero)" if failed and args.exit_zero else ""))
    text = "".join(line + "\n" for line in lines + [summary])
    errors = expand_errors + [e for r in results for e in r.errors]
    if args.format == "sarif":
        document = json.dumps(sarif_document(reports, errors, findings=findings), indent=2) + "\n"
    elif args.format == "json":
        document = json.dumps(check_document(reports, findings, errors, gpu=args.gpu, min_speedup=args.min_speedup,
                                             kernel_only=args.kernel_only, strict=args.strict), indent=2) + "\n"
    else:
        document = text
    _write(document, args.output)
    # the terminal always gets the summary: the whole text report when the document is SARIF or JSON, on stderr
    # when stdout carries that document
    if args.format != "text":
        (sys.stdout if args.output else sys.stderr).write(text)
    elif args.output:
        print(summary)
    if expand_errors or any(r.status for r in results):
        return EXIT_INPUT
    if not checked:           # a gate that checked nothing has not passed
        print("c2gpu check: error: no loop nests in the files given: nothing was checked", file=sys.stderr)
        return EXIT_INPUT
    return EXIT_BELOW_MIN if failed and not args.exit_zero else EXIT_OK


def _check_nest(nest, minimum: float, kernel_only: bool, strict: bool) -> Finding:
    """The gate's finding for a NestReport: a nest that cannot be ported fails (error); one with no speedup to
    compare has no verdict (a warning, an error with --strict); otherwise its speedup against the minimum."""
    if nest.verdict_class == "not-portable":
        return Finding("c2gpu/not-portable", "error", f"cannot be ported: {nest.refusal}")
    what = "kernel speedup" if kernel_only else "speedup"
    s = nest.kernel_speedup if kernel_only else nest.speedup
    if s is None:
        why = (f"{nest.verdict}: no {what} ({nest.reason})" if nest.has_verdict
               else nest.no_verdict_reason or nest.reason or "no prediction")
        return Finding("c2gpu/no-verdict", "error" if strict else "warning", f"no verdict: {why}")
    ok = s >= minimum
    return Finding("c2gpu/reaches-min-speedup" if ok else "c2gpu/below-min-speedup", "note" if ok else "error",
                   f"{nest.verdict}, {what} {units.speedup(s)} ({'>=' if ok else '<'} min {minimum:g}x)")


def _codes_args(c: argparse.ArgumentParser) -> None:
    c.add_argument("--explain", metavar="CODE",
                   help="what the code means, why it keeps a nest off the GPU, how to change the C, and an example")


def cmd_codes(args) -> int:
    if args.explain:
        if args.explain not in CODES:
            raise UsageError(f"unknown diagnostic code '{args.explain}' (`c2gpu codes` lists them)")
        print(explain(args.explain))
        return EXIT_OK
    width = max(map(len, CODES))
    for code, d in sorted(CODES.items()):
        print(f"{code:<{width}}  {d.kind:<8}  {d.summary}")
    return EXIT_OK


COMMANDS = {"codes": cmd_codes, "gpus": cmd_gpus, "analyze": cmd_analyze, "passes": cmd_passes, "port": cmd_port, "emit": cmd_emit, "verify": cmd_verify,
            "annotate": cmd_annotate, "fix": cmd_fix, "lsp": cmd_lsp,
            "check": cmd_check}

# each subcommand: the function declaring its options, and add_parser's help and description (in --help's order)
SUBCOMMANDS = {
    "analyze": (_analyze_args, {"help": "describe every loop nest of C files"}),
    "passes": (_no_args, {"help": "list the available passes with what they require and provide"}),
    "codes": (_codes_args, {"help": "list the diagnostic codes (what --silence takes) with what each means; "
                                    "--explain CODE says more"}),
    "gpus": (_gpus_args, {"help": "list the GPU catalog (key, SMs, clock, DRAM bandwidth, peak, host link)"}),
    "check": (_check_args, {
        "help": "CI gate: fail when a nest's predicted speedup is below --min-speedup",
        "description": "Analyse the nests marked `#pragma c2gpu port` (every nest when none is marked) and print one "
                       "line per failing nest (every nest with -v), with its rule id, then a summary line. Exit "
                       "status: 0 every nest passes (or --exit-zero), 3 a nest falls below --min-speedup or cannot "
                       "be ported (or, with --strict, has no verdict), 1 an input could not be analysed, 2 bad "
                       "command line."}),
    "port": (_port_args, {"help": "write the whole file with the parallel nests ported to CUDA"}),
    "emit": (_emit_args, {"help": "write only the kernels and host wrappers (extern \"C\", for C code to call)"}),
    "verify": (_verify_args, {"help": "run the original and the port (on the CPU) and compare what the nests write"}),
    "annotate": (_annotate_args, {"help": "write the file with OpenMP directives on the loops c2gpu proves parallel"}),
    "fix": (_fix_args, {"help": "print the fix-its of c2gpu's findings as a unified diff (--apply writes them)"}),
    "lsp": (_no_args, {"help": "serve editors: a language server on stdin/stdout (diagnostics on open and save, "
                                "fix-its as code actions)"}),
}

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
