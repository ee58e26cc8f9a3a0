"""PolyBench/C 4.2.1 as an external oracle for ports: build a kernel as written and as c2gpu ports it, compare dumps.

The corpus (testdata/corpora/polybench-c-4.2.1, Ohio State University, its licence beside it) is 30 kernels nobody on this
project wrote.  Built with -DPOLYBENCH_DUMP_ARRAYS, a kernel prints its live-out arrays to stderr
between "==BEGIN DUMP_ARRAYS==" and "==END   DUMP_ARRAYS==": that dump is the ground truth.  The port
is built the way a user builds a split port (the .cu file with the CPU execution layer, the .host.c
file and utilities/polybench.c with the C compiler) and must print the same dump.

Floating point: PolyBench prints doubles with "%0.2lf", two decimals.  A port may reassociate a
reduction (block trees, per-thread partial sums); at MINI sizes that changes a value by about 1e-14
relative, far below the printed precision, but a value that lies on a rounding boundary can still
print one unit of the last digit apart (1.005 -> "1.00" or "1.01").  So floating-point values may
differ by one unit of the last printed digit and no more; integers (and integer dumps such as
floyd-warshall's or nussinov's "%d") must be identical.
"""
from __future__ import annotations

import hashlib
import math
from decimal import Decimal
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from c2gpu.drivers.driver import make_manager
from c2gpu.pipeline import PORT
from c2gpu.emulate.build import compile_for_cpu
from c2gpu.frontend import PreprocessOptions
from c2gpu.ir import Loop
from c2gpu.drivers.port import port_file
from c2gpu.drivers.verify import ORDERS

CORPUS = Path(__file__).resolve().parent.parent / "testdata" / "corpora" / "polybench-c-4.2.1"
UTILITIES = CORPUS / "utilities"
DEFINES = (("MINI_DATASET", "1"), ("POLYBENCH_DUMP_ARRAYS", "1"))
TIMEOUT = 120.0          # seconds for each compile and each run (MINI runs take milliseconds)
BEGIN, END = "==BEGIN DUMP_ARRAYS==", "==END   DUMP_ARRAYS=="


def kernels() -> list[Path]:
    """The 30 kernel sources, in the order of utilities/benchmark_list."""
    lines = (UTILITIES / "benchmark_list").read_text().split()
    return [CORPUS / line for line in lines if line.endswith(".c")]


class BuildError(Exception):
    """A compiler or a program failed; the message says which command and why."""


def _run(cmd: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    try:
        r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, errors="replace", timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise BuildError(f"timed out after {TIMEOUT} s: {' '.join(cmd)}") from None
    if r.returncode != 0:
        raise BuildError(f"exit status {r.returncode}: {' '.join(cmd)}\n{r.stderr[-3000:]}")
    return r


def _cflags(kernel: Path) -> list[str]:
    return ["-O1", "-w", f"-I{UTILITIES}", f"-I{kernel.parent}", *[f"-D{n}={v}" for n, v in DEFINES]]


# ---------------------------------------------------------------------------
# Dumps
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Array:
    name: str
    values: tuple[str, ...]     # the printed tokens, as printed


def parse_dump(stderr: str) -> list[Array]:
    """The arrays of a PolyBench dump, in order ("begin dump: A" ... "end   dump: A")."""
    if BEGIN not in stderr or END not in stderr:
        raise BuildError(f"no {BEGIN} ... {END} block on stderr:\n{stderr[-2000:]}")
    body = stderr[stderr.index(BEGIN) + len(BEGIN): stderr.index(END)]
    arrays, name, values = [], None, []
    for line in body.splitlines():
        words = line.split()
        if line.startswith("begin dump:"):
            name, values = words[-1], []
        elif line.startswith("end   dump:") or line.startswith("end dump:"):
            arrays.append(Array(name, tuple(values)))
            name = None
        elif name is not None:
            values.extend(words)
    return arrays


def _same_value(expected: str, actual: str) -> bool:
    if "." not in expected and "e" not in expected.lower():      # an integer dump ("%d"): bit for bit
        return expected == actual
    try:
        a, b = float(expected), float(actual)
        unit = 10.0 ** Decimal(expected).as_tuple().exponent      # "12.34" -> 0.01, "1.5e+03" -> 100
    except (ValueError, ArithmeticError):
        return expected == actual
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return abs(a - b) <= unit * (1 + 1e-9)      # one unit of the last printed digit (see the module docstring)


def compare_dumps(expected: list[Array], actual: list[Array]) -> str | None:
    """None when the dumps agree, else what differs first (array, index, both values)."""
    if [a.name for a in expected] != [a.name for a in actual]:
        return f"arrays {[a.name for a in actual]} instead of {[a.name for a in expected]}"
    for e, a in zip(expected, actual):
        if len(e.values) != len(a.values):
            return f"{e.name}: {len(a.values)} values instead of {len(e.values)}"
        bad = [k for k, (x, y) in enumerate(zip(e.values, a.values)) if not _same_value(x, y)]
        if bad:
            k = bad[0]
            return f"{e.name}[{k}] (flat index) = {a.values[k]} instead of {e.values[k]} ({len(bad)} of {len(e.values)} differ)"
    return None


# ---------------------------------------------------------------------------
# Original and port
# ---------------------------------------------------------------------------

def polybench_object(tmp: Path) -> Path:
    """utilities/polybench.c compiled once (the timer and allocation helpers every kernel links)."""
    obj = tmp / "polybench.o"
    if not obj.exists():
        _run([shutil.which("cc"), *_cflags(UTILITIES / "polybench.c"), "-c", str(UTILITIES / "polybench.c"), "-o", str(obj)], tmp)
    return obj


def run_original(kernel: Path, tmp: Path) -> list[Array]:
    exe = tmp / f"{kernel.stem}.original"
    _run([shutil.which("cc"), *_cflags(kernel), str(UTILITIES / "polybench.c"), str(kernel), "-o", str(exe), "-lm"], tmp)
    return parse_dump(_run([str(exe)], tmp).stderr)


@dataclass
class Port:
    nests: list[str]                      # every nest c2gpu found (PolyBench: the #pragma scop region)
    depths: dict[str, int]                # nest -> how many loops deep it goes
    ported: list[str]
    reasons: dict[str, str]               # refused nest -> why
    cu: str
    host: str | None
    reassociates: bool = False            # a floating-point sum is reduced across threads (added in another order)

    @property
    def main_computation_ported(self) -> bool:
        """One of the deepest nests is ported: the computation, not only a loop that zeroes an array
        before it (atax's `y[i] = 0` is a nest of its own inside the scop)."""
        deepest = max(self.depths.values(), default=0)
        return any(self.depths[n] == deepest for n in self.ported)

    def key(self) -> str:
        return hashlib.sha256((self.cu + "\0" + (self.host or "")).encode()).hexdigest()


def _depth(loop: Loop) -> int:
    return 1 + max((_depth(node) for node in loop.body if isinstance(node, Loop)), default=0)


def port(kernel: Path, assume_no_alias: bool, exact_fp: bool = False) -> Port:
    """c2gpu port KERNEL -o OUT.cu --split -I utilities -I KERNEL_DIR -D MINI_DATASET -D POLYBENCH_DUMP_ARRAYS
    [--assume-no-alias] [--exact-fp], through the same calls the command line makes."""
    options = PreprocessOptions(defines=DEFINES, include_dirs=(str(UTILITIES), str(kernel.parent)))
    manager = make_manager(list(PORT.passes), {"assume_no_alias": assume_no_alias, "exact_fp": exact_fp})
    res = port_file(str(kernel), options, manager, f"{kernel.stem}.cu", split=True)
    floats = {(o.nest.name, s.name) for o in res.ported for s in o.nest.scalars if s.ctype in ("float", "double")}
    reassociates = any(r.op == "+" and (o.nest.name, r.target) in floats
                       for o in res.ported for k in o.plan.kernels() for r in k.reductions)
    return Port(nests=[o.nest.name for o in res.outcomes], depths={o.nest.name: _depth(o.nest.root) for o in res.outcomes},
                ported=[o.nest.name for o in res.ported],
                reasons={o.nest.name: o.reason for o in res.outcomes if not o.ported},
                cu=res.text, host=res.host_text, reassociates=reassociates)


def run_port(kernel: Path, p: Port, tmp: Path) -> dict[str, list[Array]]:
    """Build the split port with the CPU execution layer and run it in every thread order of verify
    (forward, reverse, shuffled; fresh device memory poisoned differently each time).  order -> dump."""
    d = tmp / f"{kernel.stem}-{p.key()[:12]}"
    d.mkdir(parents=True, exist_ok=True)
    cu, host = d / f"{kernel.stem}.cu", d / f"{kernel.stem}.host.c"
    cu.write_text(p.cu)
    host.write_text(p.host)
    flags = _cflags(kernel)
    _run([shutil.which("cc"), *flags, "-c", str(host), "-o", str(d / "host.o")], d)
    cr = compile_for_cpu(cu, d / "kernels.o", extra_flags=["-c", *flags], timeout=TIMEOUT)
    if not cr.ok:
        raise BuildError(f"the port does not compile for the CPU execution layer:\n{cr.stderr[-3000:]}")
    exe = d / "ported"
    _run([shutil.which("g++"), str(d / "host.o"), str(d / "kernels.o"), str(polybench_object(tmp)), "-o", str(exe),
          "-pthread", "-lm"], d)
    dumps = {}
    for order, (poison, _) in ORDERS.items():
        env = dict(os.environ, C2GPU_EMU_ORDER=order, C2GPU_EMU_POISON=poison, C2GPU_EMU_SEED="1", C2GPU_EMU_THREADS="1")
        dumps[order] = parse_dump(_run([str(exe)], d, env).stderr)
    return dumps


@dataclass
class Outcome:
    kernel: str
    mode: str                               # "default" or "--assume-no-alias"
    port: Port
    mismatches: list[str] = field(default_factory=list)   # "order: what differs"
    error: str | None = None                # the port did not build or run
    reassociated: str | None = None         # the default port differs only by its reassociated floating-point sums:
    #                                         what differed (the --exact-fp port printed the original's dump)


def _mismatches(kernel: Path, p: Port, expected: list[Array], tmp: Path, built: dict) -> list[str] | str:
    """"order: what differs" for every run of the port that does not print `expected`, or the build error.
    built: port key -> dumps, so that a port identical in both modes is built and run once."""
    if p.key() not in built:
        try:
            built[p.key()] = run_port(kernel, p, tmp)
        except BuildError as e:
            built[p.key()] = str(e)
    dumps = built[p.key()]
    if isinstance(dumps, str):
        return dumps
    return [f"{order}: {diff}" for order, actual in dumps.items() if (diff := compare_dumps(expected, actual))]


def check(kernel: Path, expected: list[Array], assume_no_alias: bool, tmp: Path, built: dict) -> Outcome:
    """Port one kernel in one mode and compare every run of the port with the original's dump.

    A port that reduces a floating-point sum across threads adds in another order than C; in an
    ill-conditioned kernel (gramschmidt at MINI size has more columns than rows) that alone changes the
    printed values.  Such a port that differs is ported again with --exact-fp (the sums stay in one thread),
    which must then print the original's dump exactly: only the order of the additions may differ."""
    p = port(kernel, assume_no_alias)
    out = Outcome(kernel.stem, "--assume-no-alias" if assume_no_alias else "default", p)
    if not p.ported:
        return out
    found = _mismatches(kernel, p, expected, tmp, built)
    if isinstance(found, str):
        out.error = found
        return out
    if found and p.reassociates:
        exact = _mismatches(kernel, port(kernel, assume_no_alias, exact_fp=True), expected, tmp, built)
        if isinstance(exact, str):
            out.error = f"--exact-fp: {exact}"
            return out
        if not exact:
            out.reassociated = found[0]
            return out
        found = [f"--exact-fp {m}" for m in exact]
    out.mismatches = found
    return out


def summary(outcomes: list[Outcome]) -> str:
    """One line per kernel and mode, then the totals per mode."""
    lines = [f"{'kernel':16} {'mode':18} {'nests':>5} {'ported':>6}  main  result"]
    for o in outcomes:
        refused = next(iter(o.port.reasons.values()), "")
        result = (f"nothing ported ({refused[:110]})" if not o.port.ported else f"BUILD/RUN ERROR" if o.error
                  else f"MISMATCH {o.mismatches[0]}" if o.mismatches
                  else f"same dump with --exact-fp (reassociated sums: {o.reassociated})" if o.reassociated
                  else "same dump")
        lines.append(f"{o.kernel:16} {o.mode:18} {len(o.port.nests):5} {len(o.port.ported):6}  "
                     f"{'yes' if o.port.main_computation_ported else 'no ':4}  {result}")
    for mode in sorted({o.mode for o in outcomes}):
        mine = [o for o in outcomes if o.mode == mode]
        lines.append(f"total {mode}: {len(mine)} kernels, {sum(len(o.port.nests) for o in mine)} nests, "
                     f"{sum(len(o.port.ported) for o in mine)} ported; "
                     f"{sum(1 for o in mine if o.port.ported)} kernels with a ported nest, "
                     f"{sum(1 for o in mine if o.port.main_computation_ported)} with the main computation (a deepest nest) ported; "
                     f"{sum(1 for o in mine if o.mismatches)} mismatches, {sum(1 for o in mine if o.error)} build/run errors, "
                     f"{sum(1 for o in mine if o.reassociated)} same only with --exact-fp")
    return "\n".join(lines)
