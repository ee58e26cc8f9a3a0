"""CPU verification: run the original program and the port (through the CPU execution layer) and compare.

Both programs are instrumented identically.  When a ported nest is entered
(in the original) or its wrapper called (in the port), the regions to
compare are evaluated and kept in locals; right after it, the following are
appended to a dump file: whether the nest ran, every element of every array
it writes (the hull of all the elements the nest touches in that array,
from the state at entry, so a nest that changes a scalar of its own bounds
does not shift the region), and every scalar it writes that may be read
after it (loop variables declared outside their `for` included: their final
values).  Comparing the two dump streams record by record checks
exactly what the port changed, on the same inputs, with no knowledge of the
program's own output format: integers bit for bit, floating point within a
tolerance.

The port runs three times, with the blocks and the threads of each block in
forward, reverse and shuffled order (a loop wrongly run in parallel rarely
gives the sequential answer in all three), and with different poison bytes
in fresh device memory each time (a missing copy-in reads poison).  A ported
nest that never ran with the inputs fails verification: nothing was checked.

User code is compiled and run only here, in a private temporary directory
removed afterwards, with argument lists (never a shell) and a time limit.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import field, replace
from pathlib import Path
from typing import Callable

import numpy as np

from . import process
from ..diagnostics import C2GPUError
from ..emulate.build import CompilerNotFoundError, compile_for_cpu
from ..frontend import PreprocessOptions
from ..ir import Nest
from ..codegen import host_not_cxx, escape_c_string, nonempty_condition, render_port, render_split
from .port import NestOutcome, analyse_for_port, read_source
from ..frontend.source import for_span, insert_at
from ..records import dataclass

DUMP_RUNTIME = r"""/* c2gpu verify: dump of the values each ported nest writes */
#include <stdio.h>
#include <stdlib.h>
static void c2gpu_dump(const char *label, const char *type, const void *p, long long count, size_t elem)
{
  static FILE *f;
  if (!f) {
    const char *path = getenv("C2GPU_DUMP");
    if (!path || !(f = fopen(path, "wb")))
      return;
  }
  if (count < 0)
    count = 0;
  fprintf(f, "%s %s %lld %zu\n", label, type, count, elem);
  fwrite(p, elem, (size_t)count, f);
  fflush(f);
}
static long long c2gpu_min(long long a, long long b) { return a < b ? a : b; }
static long long c2gpu_max(long long a, long long b) { return a < b ? b : a; }
#include <time.h>
static double c2gpu_now(void)
{
#ifdef TIME_UTC
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
#else
  return (double)clock() / CLOCKS_PER_SEC;
#endif
}
/* With C2GPU_TIMES=FILE, one line per execution of a ported nest (the original's nest, or the port's wrapper
   call: copies, launches and all): "nest seconds".  tests/gpu_check.py times both programs this way. */
static void c2gpu_lap(const char *nest, double start)
{
  static FILE *f;
  static int off;
  double seconds = c2gpu_now() - start;
  if (!f && !off) {
    const char *path = getenv("C2GPU_TIMES");
    if (!path || !(f = fopen(path, "w"))) {
      off = 1;
      return;
    }
  }
  if (f)
    fprintf(f, "%s %.9f\n", nest, seconds);
}
"""

DTYPES = {"float": np.float32, "double": np.float64, "long double": np.longdouble,
          "int": np.int32, "unsigned int": np.uint32,
          "long": np.int64, "unsigned long": np.uint64, "long long": np.int64, "unsigned long long": np.uint64,
          "short": np.int16, "unsigned short": np.uint16, "char": np.int8, "signed char": np.int8,
          "unsigned char": np.uint8, "_Bool": np.uint8}

# The port's runs: (C2GPU_EMU_ORDER, poison byte of fresh device memory, how a message names it).
# Each run has its own poison, so a read of memory never copied in cannot agree by chance in all three.
ORDERS = {"forward": ("0xFF", "with blocks and threads in order"),
          "reverse": ("0x7F", "with blocks and threads in reverse order"),
          "shuffle": ("0xA5", "with blocks and threads in a shuffled order (C2GPU_EMU_SEED=1)")}
RAN = "(ran)"    # the label of the record that says whether a nest executed a statement
@dataclass
class Difference:
    label: str
    occurrence: int
    index: int
    expected: float
    actual: float


@dataclass
class VerifyResult:
    ok: bool
    message: str
    records: int = 0
    max_abs_diff: float = 0.0
    max_rel_diff: float = 0.0
    worst: Difference | None = None
    outcomes: list[NestOutcome] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)
    never_ran: list[str] = field(default_factory=list)   # ported nests that never ran: nothing was checked there


@dataclass
class Probe:
    """What verify adds around one ported nest: C run when it is entered, and C run right after it."""
    entry: str
    exit: str


def probe(o: NestOutcome, k: int) -> Probe:
    """The instrumentation of ported nest `o` (k-th of the file: its locals are c2gpu_v<k>_*)."""
    nest, v = o.nest, f"c2gpu_v{k}_"
    # the variables that stand for struct fields (v__n is v->n): the probes below name them
    entry = [f"__typeof__(&({expr}) == 0 ? ({expr}) : ({expr})) {name} = ({expr});" for name, expr in nest.stands_for]
    entry.append(f"const int {v}ran = ({nonempty_condition(nest)}) != 0;")
    exit = [f'c2gpu_lap("{nest.name}", {v}t);', f'c2gpu_dump("{nest.name}|{RAN}", "int", &{v}ran, 1, sizeof(int));']
    for n, a in enumerate(a for a in o.code.arrays if a.written):
        if a.packed:
            # a table of rows (ArrayPlan.packed): each row the port writes back, from its first to its last element
            scan = a.packed
            row = a.name + "".join(f"[{r}]" for r in scan.rows)
            body = (f'c2gpu_dump("{nest.name}|{a.name}", "{a.ctype}", &{row}[{scan.first}], ({scan.last}) - '
                    f'({scan.first}) + 1, sizeof({a.ctype}));')
            exit.append(f"if ({v}ran) {{ " + " ".join(line.strip() for line in scan.code(body)) + " }")
            continue
        first, end = touched_region(a)
        entry.append(f"const {a.ctype} *{v}p{n} = ((const {a.ctype} *)({a.name})) + ({v}ran ? ({first}) : 0); "
                     f"const long long {v}n{n} = {v}ran ? ({end}) - ({first}) : 0;")
        exit.append(f'c2gpu_dump("{nest.name}|{a.name}", "{a.ctype}", {v}p{n}, {v}n{n}, sizeof({a.ctype}));')
    for name, ctype in live_out_scalars(nest):
        # a copy, so that register variables dump too; pointers are addresses, which differ between the programs
        exit.append(f"{{ __typeof__({name}) {v}s = ({name}); c2gpu_dump(\"{nest.name}|{name}\", \"{ctype}\", "
                    f"&{v}s, __builtin_classify_type({v}s) != 5 /* pointer */, sizeof {v}s); }}")
    entry.append(f"const double {v}t = c2gpu_now();")   # last: the time of the nest alone
    return Probe(" ".join(entry), " ".join(exit))


def touched_region(a) -> tuple[str, str]:
    """[first, end) of the elements of array plan `a` that the nest reads or writes, as C on the parameters.

    The plan's copy-in region is that hull when the array is copied in at all, its copy-out region the hull
    of the writes; their union covers every element the port may write back, including holes between
    the writes that must come back unchanged.
    """
    regions = [r for r in (a.copy_in, a.copy_out) if r]
    if len(regions) == 1:
        (first, count), = regions
        return first, f"({first}) + ({count})"
    (f1, c1), (f2, c2) = regions
    return f"c2gpu_min({f1}, {f2})", f"c2gpu_max(({f1}) + ({c1}), ({f2}) + ({c2}))"


def live_out_scalars(nest: Nest) -> list[tuple[str, str]]:
    """(C name, C type) of every scalar the nest writes whose value may be read after it.

    Loop variables declared outside their `for` header (their final values), induction counters, and the
    scalars written or reduced in the nest, among Nest.live_after (declared outside the nest and possibly read after it:
    later in the function, in the next iteration of a loop around the nest, global, static or
    address-taken).  A value nobody reads cannot make a difference: the port need not restore it.
    """
    out: dict[str, str] = {}
    for lp in nest.loops():
        if not lp.declared_in_header:
            out.setdefault(lp.source_var, lp.c_type)
    for s in nest.scalars:
        if s.role in ("written", "reduction"):
            out.setdefault(s.source_name, s.ctype)
    for ind in nest.inductions:             # counters the nest's C steps (frontend/inductions.py)
        out.setdefault(ind.name, ind.ctype)
    return [(name, ctype) for name, ctype in sorted(out.items()) if name in nest.live_after]


def instrument_original(path: str, source: str, probes: dict[str, Probe], outcomes: list[NestOutcome]) -> str:
    edits = []
    for o in outcomes:
        if o.nest.name in probes:
            start, end = for_span(source, o.nest.loc.line, o.nest.loc.col)
            edits.append((start, "{ " + probes[o.nest.name].entry + " "))
            edits.append((end, " " + probes[o.nest.name].exit + " }"))
    return DUMP_RUNTIME + f'#line 1 "{escape_c_string(path)}"\n' + insert_at(source, edits)


def _probed(outcomes: list[NestOutcome], probes: dict[str, Probe]) -> list[NestOutcome]:
    """Copies of the outcomes whose wrapper calls are preceded by their probe's entry code."""
    return [replace(o, code=replace(o.code, call=probes[o.nest.name].entry + " " + o.code.call))
            if o.nest.name in probes else o for o in outcomes]


def _run(cmd: list[str], env: dict, timeout: float, what: str, cwd: str) -> process.Completed:
    r = process.run(cmd, timeout=timeout, env=env, cwd=cwd)
    if r.timed_out:
        raise C2GPUError(f"{what} did not finish within {timeout:g} s (use --timeout to allow more)")
    return r


def read_dump(path: Path) -> list[tuple[str, str, np.ndarray]]:
    """(label, C type, values) of every record; a type read as anything but its own size is compared as bytes."""
    data = path.read_bytes() if path.exists() else b""
    out, pos = [], 0
    while pos < len(data):
        nl = data.index(b"\n", pos)
        label, rest = data[pos:nl].decode().split(" ", 1)
        ctype, count, elem = rest.rsplit(" ", 2)
        n, size = int(count), int(elem)
        dt = np.dtype(DTYPES.get(ctype, np.uint8))
        if dt.itemsize != size:
            dt, n = np.dtype(np.uint8), n * size
        start = nl + 1
        out.append((label, ctype, np.frombuffer(data[start:start + n * dt.itemsize], dtype=dt)))
        pos = start + n * dt.itemsize
    return out


def _what(label: str, occurrence: int) -> str:
    nest, name = label.split("|", 1)
    what = "whether the nest ran" if name == RAN else name
    return f"{what} (nest {nest}, occurrence {occurrence + 1})"


def compare(expected, actual, rtol: float, atol: float) -> VerifyResult:
    """Record by record: integers (and types without a known layout) bit for bit, floating point within
    rtol of the record's largest magnitude plus atol (NaN equals NaN, infinities must match)."""
    worst, max_abs, max_rel = None, 0.0, 0.0
    seen: dict[str, int] = {}
    for (la, ta, a), (lb, tb, b) in zip(expected, actual):
        occ = seen.get(la, 0)
        seen[la] = occ + 1
        if la != lb or a.shape != b.shape:
            return VerifyResult(False, f"the port left different records: expected {_what(la, occ)} with {a.size} "
                                       f"elements, got {lb.split('|', 1)[-1]} with {b.size}", len(expected))
        if a.size == 0:
            continue
        if a.dtype.kind == "f":
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            same = (a64 == b64) | (np.isnan(a64) & np.isnan(b64))   # equal infinities and NaNs agree
            signs = np.nonzero((a64 == 0) & (b64 == 0) & (np.signbit(a64) != np.signbit(b64)))[0]
            if signs.size:          # -0 and +0 compare equal but print, divide and copysign apart
                k = int(signs[0])
                return VerifyResult(False, f"{_what(la, occ)} differs: element {k} is {b64[k]!r}, expected {a64[k]!r} "
                                           "(the sign of zero differs)", len(expected), 0.0, 0.0,
                                    Difference(la, occ, k, float(a64[k]), float(b64[k])))
            with np.errstate(invalid="ignore", over="ignore"):
                diff = np.where(same, 0.0, np.abs(a64 - b64))
            diff = np.where(np.isnan(diff), np.inf, diff)
            finite = np.abs(a64[np.isfinite(a64)])
            scale = max(float(finite.max()) if finite.size else 0.0, 1e-30)
            # relative to the record's magnitude, so values near zero are not judged by their own tiny size
            tol = atol + rtol * scale
            k = int(np.argmax(diff))
            rel = float(diff[k]) / scale
            if float(diff[k]) > max_abs:
                max_abs, max_rel = float(diff[k]), rel
                worst = Difference(la, occ, k, float(a64[k]), float(b64[k]))
            if diff[k] > tol:
                return VerifyResult(False, f"{_what(la, occ)} differs: element {k} is {b64[k]!r}, expected "
                                           f"{a64[k]!r} (relative difference {rel:.3g} > {rtol:g})",
                                    len(expected), max_abs, max_rel, Difference(la, occ, k, float(a64[k]), float(b64[k])))
        else:
            bad = np.nonzero(a != b)[0]
            if bad.size:
                k = int(bad[0])
                unit = "byte" if ta not in DTYPES else "element"
                return VerifyResult(False, f"{_what(la, occ)} differs: {unit} {k} is {b[k]}, expected {a[k]} "
                                           f"({bad.size} of {a.size} {unit}s differ)",
                                    len(expected), float(abs(int(a[k]) - int(b[k]))), 0.0,
                                    Difference(la, occ, k, float(a[k]), float(b[k])))
    if len(expected) != len(actual):
        longer, which = (expected, "the port stopped") if len(expected) > len(actual) else (actual, "the port added")
        la = longer[min(len(expected), len(actual))][0]
        return VerifyResult(False, f"the original left {len(expected)} records, the port {len(actual)}: {which} at "
                                   f"{_what(la, seen.get(la, 0))}", len(expected))
    return VerifyResult(True, f"{len(expected)} records identical", len(expected), max_abs, max_rel, worst)


def _compile_cu(cu: Path, out: Path, flags: list[str], cxx: str, timeout: float, commands: list) -> None:
    try:
        cr = compile_for_cpu(cu, out, extra_flags=flags, cxx=cxx, timeout=timeout)
    except CompilerNotFoundError as e:
        raise C2GPUError(str(e)) from None
    commands.append(cr.command)
    if not cr.ok:
        raise C2GPUError(f"the ported program does not compile for the CPU execution layer:\n{cr.stderr.strip()}")


PORT_CU, PORT_HOST_C = "ported.cu", "ported.host.c"


@dataclass
class Instrumented:
    """The original program and its port, each with the probes around the ported nests, as source text."""
    outcomes: list[NestOutcome]
    probes: dict[str, Probe]          # ported nest -> its probe (empty: nothing to verify)
    original: str                     # the original C file, instrumented
    port: str                         # PORT_CU: the port (with its host code unless split)
    host: str | None                  # PORT_HOST_C: the port's host code in C, when the port is split
    flags: list[str]                  # the -D and -I flags of both builds (include directories absolute)


def _exit(probes: dict[str, Probe], o: NestOutcome) -> str:
    """The code after the wrapper call of ported nest `o`: its probe's, or none for a nest left unprobed."""
    return probes[o.nest.name].exit if o.nest.name in probes else ""


def instrument(path: str, options: PreprocessOptions, manager, split: bool = False) -> Instrumented:
    """The original and the port with identical probes (see the module's docstring); split: the port's host
    code is C (it is anyway when it cannot be C++, e.g. with VLA parameters)."""
    with manager.active():     # what the analyses' helpers keep lives as long as the manager (pipeline.memo)
        return _instrument(path, options, manager, split)


def _instrument(path: str, options: PreprocessOptions, manager, split: bool = False) -> Instrumented:
    program, outcomes = analyse_for_port(path, options, manager)
    src_dir = str(Path(path).resolve().parent)
    # compilers run in a temporary directory: relative include directories must be made absolute
    flags = [f"-D{n}={v}" for n, v in options.defines] + [f"-I{Path(d).resolve()}" for d in options.include_dirs] \
        + ["-iquote", src_dir]
    if not any(o.ported for o in outcomes):
        return Instrumented(outcomes, {}, "", "", None, flags)
    source = read_source(path)
    # a nest of a function whose calls a ported nest holds inlined runs fewer times in the port (not from there):
    # its records would not line up; the ported nests around its calls check what it does there
    inlined = {f for o in outcomes if o.ported for f in o.nest.inlined}
    probes = {o.nest.name: probe(o, k) for k, o in enumerate(o for o in outcomes if o.ported and o.nest.loc.file == path
                                                            and o.nest.function not in inlined)}
    probed = _probed(outcomes, probes)
    host_text = None
    if split or host_not_cxx(program, path, options):
        # C host code (e.g. VLA parameters) + CUDA wrappers: compile apart and link, as a user would
        cu_text, host_text = render_split(path, source, probed, PORT_CU, PORT_HOST_C,
                                          after_nest=lambda o: _exit(probes, o), prefix=DUMP_RUNTIME)
    else:
        cu_text = render_port(path, source, probed, PORT_CU, after_nest=lambda o: _exit(probes, o),
                              prefix=DUMP_RUNTIME)
    for o, p in zip(outcomes, probed):   # the nests the port could not locate in the text stay as they are
        o.ported, o.reason = p.ported, p.reason
    probes = {name: pr for name, pr in probes.items() if any(o.ported and o.nest.name == name for o in outcomes)}
    original = instrument_original(path, source, probes, outcomes) if probes else ""
    return Instrumented(outcomes, probes, original, cu_text, host_text, flags)


def verify(path: str, options: PreprocessOptions, manager, rtol: float = 1e-5, atol: float = 0.0,
           timeout: float = 120.0, cc: str = "cc", cxx: str = "g++", keep: str | None = None,
           cflags: tuple[str, ...] = ("-O1",), orders: tuple[str, ...] = tuple(ORDERS),
           edit_port: Callable[[str, str], str] | None = None,
           extra_sources: tuple[str, ...] = ()) -> VerifyResult:
    """Run the original and the port on the same inputs and compare what each ported nest leaves behind.

    orders: the runs of the port (keys of ORDERS).  edit_port(file name, text) -> text changes the
    rendered port before it is compiled (tests use it to break a port on purpose).  extra_sources: other C
    files of the program, compiled with the C compiler and linked into both (the port is then split, so
    that its host code is C and calls them by their C names).
    """
    missing = next((f for f in extra_sources if not Path(f).is_file()), None)
    if missing is not None:
        raise C2GPUError(f"{missing}: no such file (--extra-source)")
    if shutil.which(cc) is None:
        raise C2GPUError(f"C compiler '{cc}' not found: verify needs it to build the original program")
    unknown = [o for o in orders if o not in ORDERS]
    if unknown or not orders:
        raise C2GPUError(f"verify: unknown thread order {unknown[0] if unknown else '(none)'}: "
                         f"expected some of {', '.join(ORDERS)}")
    built = instrument(path, options, manager, split=bool(extra_sources))
    outcomes, probes, split, flags = built.outcomes, built.probes, built.host is not None, built.flags
    if not probes:
        return VerifyResult(False, "no nest of this file could be ported, so there is nothing to verify", outcomes=outcomes)
    # absolute: the compilers and programs run inside it
    tmp = Path(keep).resolve() if keep else Path(tempfile.mkdtemp(prefix="c2gpu_verify_"))
    tmp.mkdir(parents=True, exist_ok=True)
    commands: list[list[str]] = []   # every compiler command, for --keep and error reports
    edit = edit_port or (lambda name, text: text)
    try:
        port_cu = tmp / PORT_CU
        orig_exe, port_exe = tmp / "original", tmp / "ported"
        extra_objects = []
        for k, extra in enumerate(extra_sources):
            obj = tmp / f"extra{k}.o"
            cmd = [shutil.which(cc), *cflags, "-w", *flags, "-c", str(Path(extra).resolve()), "-o", str(obj)]
            commands.append(cmd)
            r = _run(cmd, process.user_environment(), timeout, f"compiling {extra}", str(tmp))
            if r.returncode != 0:
                raise C2GPUError(f"{extra} does not compile:\n{r.stderr_text.strip()}")
            extra_objects.append(str(obj))
        orig_c = tmp / "original.c"
        orig_c.write_text(built.original, errors="surrogateescape")
        cmd = [shutil.which(cc), *cflags, "-w", *flags, str(orig_c), *extra_objects, "-o", str(orig_exe), "-lm"]
        commands.append(cmd)
        r = _run(cmd, process.user_environment(), timeout, "compiling the original program", str(tmp))
        if r.returncode != 0:
            raise C2GPUError(f"the original program does not compile:\n{r.stderr_text.strip()}")
        port_cu.write_text(edit(port_cu.name, built.port), errors="surrogateescape")
        if split:
            host_c = tmp / PORT_HOST_C
            host_c.write_text(edit(host_c.name, built.host), errors="surrogateescape")
            cmd = [shutil.which(cc), *cflags, "-w", *flags, "-c", str(host_c), "-o", str(tmp / "host.o")]
            commands.append(cmd)
            r = _run(cmd, process.user_environment(), timeout, "compiling the ported host code", str(tmp))
            if r.returncode != 0:
                raise C2GPUError(f"the ported host code does not compile:\n{r.stderr_text.strip()}")
            _compile_cu(port_cu, tmp / "kernels.o", ["-c", "-w", *flags], cxx, timeout, commands)
            link = [shutil.which(cxx) or cxx, str(tmp / "host.o"), str(tmp / "kernels.o"), *extra_objects,
                    "-o", str(port_exe), "-pthread", "-lm"]
            commands.append(link)
            r = _run(link, process.user_environment(), timeout, "linking the ported program", str(tmp))
            if r.returncode != 0:
                raise C2GPUError(f"the ported program does not link:\n{r.stderr_text.strip()}")
        else:
            _compile_cu(port_cu, port_exe, ["-w", *flags, "-lm"], cxx, timeout, commands)

        def run(exe: Path, name: str, emu: dict[str, str]):
            env = process.user_environment(C2GPU_DUMP=str(tmp / f"{name}.dump"), **emu)
            r = _run([str(exe)], env, timeout, f"the {name} program", str(tmp))
            how = f"was killed by signal {-r.returncode}" if r.returncode < 0 else f"exited with status {r.returncode}"
            err = r.stderr_text.strip()[-2000:]
            return read_dump(tmp / f"{name}.dump"), r.returncode, how + (f":\n{err}" if err else "")

        expected, status, exited = run(orig_exe, "original", {})
        if status < 0:
            raise C2GPUError(f"the original program {exited}")
        best = None
        for order in orders:
            poison, words = ORDERS[order]
            # one worker: the blocks run one after the other in exactly the chosen order, reproducibly
            actual, port_status, exited = run(port_exe, f"ported-{order}", {
                "C2GPU_EMU_ORDER": order, "C2GPU_EMU_POISON": poison, "C2GPU_EMU_SEED": "1", "C2GPU_EMU_THREADS": "1"})
            found = compare(expected, actual, rtol, atol)
            if port_status != status:   # what differs first (a record, or the records a crash cut off), then the exit
                found = replace(found, ok=False, message=(found.message + "; the ported program then " if not found.ok
                                                          else "the ported program ") + exited
                                + ("" if status == 0 else f" (the original exited with status {status})"))
            if not found.ok:
                found.message += f" ({words}; fresh device memory filled with {poison} bytes)"
                return replace(found, outcomes=outcomes, commands=commands)
            if best is None or found.max_abs_diff > best.max_abs_diff:
                best = found
        ran = {label.split("|", 1)[0] for label, _, values in expected if label.endswith("|" + RAN) and values.any()}
        idle = [o for o in outcomes if o.nest.name in probes and o.nest.name not in ran]
        if idle:
            which = ", ".join(f"{o.nest.name} ({o.nest.loc.file}:{o.nest.loc.line})" for o in idle)
            return VerifyResult(False, f"nothing was checked: nest{'s' if len(idle) > 1 else ''} {which} never ran "
                                       "with these inputs", best.records, outcomes=outcomes, commands=commands,
                                never_ran=[o.nest.name for o in idle])
        plural = "s" if len(orders) > 1 else ""
        message = (f"{len(probes)} nest{'s' if len(probes) > 1 else ''} checked: {best.records} records identical to "
                   f"the original's in {len(orders)} run{plural} of the port ({', '.join(orders)} order{plural})")
        return replace(best, message=message, outcomes=outcomes, commands=commands)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
