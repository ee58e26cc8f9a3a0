"""Command line: `c2gpu analyze|passes ...`.

Exit codes (documented in README.md):
  0  success
  1  an input could not be analysed (missing file, syntax error, ...): compiler-style message on stderr
  2  bad command line (unknown option, bad -D, unknown pass)
  3  verify: the port computes something different from the original
  4  internal error (a bug in c2gpu): one line, `--debug` shows the traceback
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from . import __version__
from .diagnostics import C2GPUError
from .frontend import PreprocessOptions, load_program, load_program_recovering
from .frontend.preprocess import parse_define
from .frontend.parse import deep_call
from .pipeline import PassManager, PipelineError
from .registry import discover
from .report import ir_json, text

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_VERIFY_FAILED, EXIT_INTERNAL = 0, 1, 2, 3, 4

DEFAULT_PIPELINE = ("normalize",)
PORT_PIPELINE = ("normalize", "dependence", "mapping", "shared-memory")


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
    _add_performance_args(a)
    _add_verdict_args(a)

    sub.add_parser("passes", help="list the available passes with what they require and provide")
    _add_gpus_command(sub)

    def mapping_args(p):
        _add_frontend_args(p)
        p.add_argument("--assume-no-alias", action="store_true",
                       help="treat distinct pointer parameters as non-overlapping (as if declared restrict)")
        p.add_argument("--map", metavar="I,J", help="loop variables to map to the thread grid (as named in the C code)")
        p.add_argument("--block", metavar="BXxBY[xBZ]", help="thread block shape, e.g. 32x8")

    po = sub.add_parser("port", help="write the whole file with the parallel nests ported to CUDA")
    po.add_argument("file", metavar="FILE")
    po.add_argument("-o", "--output", metavar="OUT.cu", help="output file (default: FILE with .cu)")
    po.add_argument("--check-compile", action="store_true", help="compile the result with nvcc and show ptxas usage")
    po.add_argument("--split", action="store_true",
                    help="write kernels and wrappers to OUT.cu and the C code calling them to OUT.host.c "
                         "(automatic when the C code cannot be compiled as C++, e.g. VLA parameters)")
    mapping_args(po)

    em = sub.add_parser("emit", help="write only the kernels and host wrappers")
    em.add_argument("file", metavar="FILE")
    em.add_argument("-o", "--output", metavar="OUT.cu")
    mapping_args(em)

    ve = sub.add_parser("verify", help="run the original and the port (on the CPU) and compare what the nests write")
    ve.add_argument("file", metavar="FILE")
    ve.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance for floating point (default 1e-5)")
    ve.add_argument("--atol", type=float, default=0.0, help="absolute tolerance added to it (default 0)")
    ve.add_argument("--timeout", type=float, default=120.0, help="seconds allowed for each compile and run")
    ve.add_argument("--cc", default="cc", help="C compiler for the original program")
    ve.add_argument("--keep", metavar="DIR", help="keep the instrumented sources and binaries in DIR")
    mapping_args(ve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
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
    manager = make_manager(*_performance_pipeline(args, pipeline))
    manager.print_after = set(args.print_after)
    for name in manager.print_after:
        if name not in manager.available:
            raise UsageError(f"--print-after: unknown pass '{name}'")
    manager.dump = lambda pass_name, nest: print(f"--- {nest.name} after {pass_name} ---\n{text.nest_ir(nest)}", file=sys.stderr)
    status = EXIT_OK
    files, errors, texts = [], [], []
    for path in args.files:
        try:
            # a syntax error or missing header costs its declaration, not the file: report it, analyse the rest
            program, problems = load_program_recovering(path, options)
        except C2GPUError as e:
            problems, program = [e], None
        for e in problems:
            print(str(e), file=sys.stderr)
            errors.append({"path": path, "message": e.message,
                           "location": ir_json.loc(e.loc)})
            status = EXIT_INPUT
        if program is None:
            continue
        program = manager.run(program)
        advice = _advise(args, path, program, manager, options)
        fd = _with_performance_json(ir_json.program(program, manager.errors), program, manager)
        files.append(_with_verdict_json(fd, program, advice))
        if advice is not None and not args.details:
            texts.append(_verdict_text(program, manager, advice))
        else:
            texts.append(text.program(program, manager.errors, extra=_performance_text_hook(manager)))
            if advice is not None:
                texts.append(_verdict_text(program, manager, advice))
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


def _mapping_options(args) -> dict:
    opts: dict = {"assume_no_alias": bool(args.assume_no_alias)}
    if args.map:
        opts["map"] = [v.strip() for v in args.map.split(",") if v.strip()]
    if args.block:
        try:
            dims = tuple(int(x) for x in args.block.lower().split("x"))
        except ValueError:
            raise UsageError(f"--block '{args.block}': expected e.g. 256 or 32x8") from None
        if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims) or dims[0] * (dims[1:2] or (1,))[0] * (dims[2:3] or (1,))[0] > 1024:
            raise UsageError(f"--block '{args.block}': 1 to 3 positive sizes with at most 1024 threads in all")
        opts["block"] = dims
    return opts


def _port_outcomes_report(outcomes) -> str:
    lines = []
    for o in outcomes:
        if o.ported:
            ks = o.code.kernels
            lines.append(f"{o.nest.loc}: note: ported nest {o.nest.name}: {len(ks)} kernel{'s' if len(ks) != 1 else ''}")
            for k in ks:
                lines.append(f"    {k.name}: block {k.block[0]}x{k.block[1]}x{k.block[2]}; {k.why}")
            for n in o.code.notes:
                lines.append(f"    note: {n}")
            for d in o.code.shared_decisions:
                opp = d.opportunity
                shape = "][".join(str(e) for e in opp.shape)
                lines.append(f"    shared memory {'KEPT' if d.taken else 'not kept'}: {opp.array} [{shape}] ({opp.kind}, "
                             f"{opp.size_bytes} B, saves {opp.loads_saved_per_block:.0f} global loads per block, "
                             f"value {opp.value:.2f} loads/B, bank conflicts {opp.conflicts}-way"
                             f"{' with padding' if opp.pad else ''}): {d.reason}")
            for a in o.code.arrays:
                if a.why and not a.why.startswith("read by"):
                    lines.append(f"    {a.name}: {a.why}")
        else:
            lines.append(f"{o.loc or o.nest.loc}: note: not ported: {o.reason} [{o.nest.name}]")
    return "\n".join(lines)


def cmd_port(args) -> int:
    from .port import port_file
    options = _preprocess_options(args)
    manager = make_manager(PORT_PIPELINE, _mapping_options(args))
    out = args.output or (args.file[:-2] + ".cu" if args.file.endswith(".c") else args.file + ".cu")
    result = port_file(args.file, options, manager, out, split=True if args.split else None)
    with open(out, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(result.text)
    print(_port_outcomes_report(result.outcomes), file=sys.stderr)
    print(f"wrote {out}: {len(result.ported)} of {len(result.outcomes)} nests ported", file=sys.stderr)
    if result.host_text is not None:
        from .port import host_name_for
        host = host_name_for(out)
        with open(host, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(result.host_text)
        print(f"wrote {host}: the C code calling the kernels (split because "
              f"{'; '.join(result.split_reasons)}); build with: nvcc -c {out} && cc -c {host} && "
              f"nvcc -o prog {out[:-3]}.o {host[:-2]}.o", file=sys.stderr)
    if args.check_compile:
        return _check_compile(out, options)
    return EXIT_OK


def _check_compile(path: str, options) -> int:
    from .nvcc import compile_cuda
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


def cmd_emit(args) -> int:
    from .port import analyse_for_port, emit_kernels
    options = _preprocess_options(args)
    manager = make_manager(PORT_PIPELINE, _mapping_options(args))
    _, outcomes = analyse_for_port(args.file, options, manager)
    text = emit_kernels(outcomes, args.file)
    print(_port_outcomes_report(outcomes), file=sys.stderr)
    _write(text, args.output)
    return EXIT_OK


def cmd_verify(args) -> int:
    from .verify import verify
    options = _preprocess_options(args)
    manager = make_manager(PORT_PIPELINE, _mapping_options(args))
    res = verify(args.file, options, manager, rtol=args.rtol, atol=args.atol, timeout=args.timeout, cc=args.cc,
                 keep=args.keep)
    print(_port_outcomes_report(res.outcomes), file=sys.stderr)
    if res.ok:
        print(f"verify: PASS: {res.message}; largest difference {res.max_abs_diff:.3g} "
              f"(relative {res.max_rel_diff:.3g})")
        return EXIT_OK
    print(f"verify: FAIL: {res.message}")
    return EXIT_VERIFY_FAILED


# --------------------------------------------------------------------------- GPU model (issue 4)
# `c2gpu gpus`, and analyze's --gpu/--model/--param/... options and performance output.  Kept together
# here; the report itself is c2gpu.perf.report.

def _add_performance_args(a: argparse.ArgumentParser) -> None:
    from .model import MODELS
    have = set(a._option_string_actions)
    a.add_argument("--gpu", metavar="NAME|FILE.toml",
                   help="predict performance on this GPU (a key of `c2gpu gpus` or a description file)")
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
    if "--map" not in have:
        a.add_argument("--map", metavar="I,J", help="loop variables to map to the thread grid (with --gpu)")
    if "--block" not in have:
        a.add_argument("--block", metavar="BXxBY[xBZ]",
                       help="force the thread block shape (with --gpu; default: the block-size search's choice)")
    if "--shared-memory" not in have:
        a.add_argument("--shared-memory", choices=("auto", "off"), default="auto",
                       help="with --gpu: choose shared-memory tiles and their budget by predicted time, reporting the "
                            "time with and without them (auto, the default), or predict the plain kernels (off)")


def _add_gpus_command(sub) -> None:
    g = sub.add_parser("gpus", help="list the GPU catalog (key, SMs, clock, DRAM bandwidth, peak, host link)")
    g.add_argument("--format", choices=("text", "json"), default="text")


def cmd_gpus(args) -> int:
    from .gpu import list_gpus
    from .perf.report import gpus_table
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


def _parse_params(items) -> dict[str, int]:
    out = {}
    for item in items or []:
        name, eq, value = item.partition("=")
        try:
            if not eq or not name.strip().isidentifier():
                raise ValueError
            out[name.strip()] = int(value.strip(), 0)
        except ValueError:
            raise UsageError(f"--param '{item}': expected NAME=INTEGER, e.g. --param n=2048") from None
    return out


def _performance_pipeline(args, pipeline: list[str]) -> tuple[list[str], dict]:
    """analyze's pipeline and options: with --gpu, the port pipeline plus the performance pass."""
    if not getattr(args, "gpu", None):
        if args.param or args.model or args.include_context or args.block:
            raise UsageError("--param, --model, --block and --include-context need --gpu")
        return pipeline, _mapping_options(args)   # --assume-no-alias / --map still reach the pipeline
    from .gpu import GPUDescriptionError, load_gpu
    try:
        gpu = load_gpu(args.gpu)
    except GPUDescriptionError as e:
        looks_like_file = args.gpu.lower().endswith((".toml", ".json")) or "/" in args.gpu
        if looks_like_file:
            raise
        raise UsageError(f"--gpu: {e.message}") from None
    from .model import MODELS
    opts = _mapping_options(args)
    opts.update({"gpu": gpu, "params": _parse_params(args.param), "include_context": bool(args.include_context),
                 "registers": args.registers, "shared_memory": getattr(args, "shared_memory", None) or "auto",
                 "models": None if args.model in (None, "all") else [args.model]})
    if not args.passes:
        pipeline = list(PORT_PIPELINE)
    if "performance" not in pipeline:
        pipeline = pipeline + ["performance"]
    return pipeline, opts


def _performance_text_hook(manager):
    if "performance" not in {p.name for p in manager.steps}:
        return None
    from .perf.report import performance_text

    def extra(nest) -> str:
        perf = manager.result("performance", nest)
        if perf is None:
            return "  performance: not predicted (see the flags below)"
        return performance_text(perf)
    return extra


def _with_performance_json(file_dict: dict, program, manager) -> dict:
    if "performance" in {p.name for p in manager.steps}:
        from .perf.report import performance_json
        for nd, nest in zip(file_dict["nests"], program.nests):
            errs = [f.message for f in manager.errors.get(nest.name, [])]
            nd["performance"] = performance_json(manager.result("performance", nest),
                                                 "; ".join(errs) or "not predicted")
    return file_dict


# --------------------------------------------------------------------------- verdict (issue 6)

def _add_verdict_args(a: argparse.ArgumentParser) -> None:
    a.add_argument("--no-run", action="store_true",
                   help="do not build and time the original program: use the static CPU estimate")
    a.add_argument("--cc", default="cc", help="C compiler for the CPU baseline (default: cc)")
    a.add_argument("--cflags", default="-O2", help="flags for the CPU baseline build (default: -O2)")
    a.add_argument("--runs", type=int, default=3, help="program runs for the CPU baseline median (default: 3)")
    a.add_argument("--break-even", metavar="NAME",
                   help="size macro for the break-even search (default: the -D sizes, then the file's #defines)")
    a.add_argument("--no-break-even", action="store_true", help="skip the break-even search")
    a.add_argument("--target", type=float, action="append", default=[],
                   help="also find the size reaching this speedup (e.g. --target 10)")
    a.add_argument("--details", action="store_true",
                   help="with --gpu, also print the IR and the full performance analysis of each nest")


def _advise(args, path, program, manager, options):
    if "performance" not in {p.name for p in manager.steps}:
        return None
    from .advisor import AdvisorOptions, advise
    aopts = AdvisorOptions(run_cpu=not args.no_run, cc=args.cc, cflags=tuple(args.cflags.split()),
                           repeats=max(1, args.runs), break_even=not args.no_break_even,
                           break_even_param=args.break_even, targets=(1.0, *args.target))
    steps = [p.name for p in manager.steps]
    return advise(path, program, manager, options, lambda: make_manager(steps, dict(manager.options, block_search=False,
                                                                                   registers="estimate")), aopts)


def _verdict_text(program, manager, advice) -> str:
    from .report.verdict_text import nest_table, use_colour
    colour = use_colour()
    parts = [f"{program.path}: {len(program.nests)} loop nest{'s' if len(program.nests) != 1 else ''}\n"]
    for nest in program.nests:
        parts.append(nest_table(nest, advice.get(nest.name), manager.result("performance", nest), colour))
    return "\n".join(parts) + "\n"


def _with_verdict_json(fd: dict, program, advice) -> dict:
    if advice is None:
        return fd
    from .report.verdict_json import verdict_json
    for nd, nest in zip(fd["nests"], program.nests):
        nd["verdict"] = verdict_json(advice.get(nest.name))
    return fd


COMMANDS = {"gpus": cmd_gpus, "analyze": cmd_analyze, "passes": cmd_passes, "port": cmd_port, "emit": cmd_emit, "verify": cmd_verify}

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
