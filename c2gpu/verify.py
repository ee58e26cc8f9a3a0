"""CPU verification: run the original program and the port (through the CPU execution layer) and compare.

Both programs are instrumented identically: right after each ported nest (in
the original) and right after its wrapper call (in the port), every array
region the nest writes and every reduction result is appended to a dump
file.  Comparing the two dump streams record by record checks exactly what
the port changed, on the same inputs, with no knowledge of the program's
own output format.

User code is compiled and run only here, in a private temporary directory
removed afterwards, with argument lists (never a shell) and a time limit.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .diagnostics import C2GPUError
from .emulate.build import CompilerNotFoundError, compile_for_cpu
from .frontend import PreprocessOptions
from .port import NestOutcome, _esc, _read_source, analyse_for_port, c_only_constructs, render_port, render_split
from .source import SpanError, for_span, insert_at

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
  fprintf(f, "%s %s %lld\n", label, type, count);
  fwrite(p, elem, (size_t)count, f);
  fflush(f);
}
"""

DTYPES = {"float": np.float32, "double": np.float64, "int": np.int32, "unsigned int": np.uint32,
          "long": np.int64, "unsigned long": np.uint64, "long long": np.int64, "unsigned long long": np.uint64,
          "short": np.int16, "unsigned short": np.uint16, "char": np.int8, "signed char": np.int8,
          "unsigned char": np.uint8, "_Bool": np.uint8}


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


def dump_calls(o: NestOutcome) -> str:
    calls = []
    for label, ptr, count, ctype in o.code.dumps:
        calls.append(f'c2gpu_dump("{label}", "{ctype}", (const void *)({ptr}), (long long)({count}), sizeof({ctype}));')
    return " ".join(calls)


def instrument_original(path: str, source: str, outcomes: list[NestOutcome]) -> str:
    edits = []
    for o in outcomes:
        if not o.ported or o.nest.loc.file != path:
            continue
        start, end = for_span(source, o.nest.loc.line, o.nest.loc.col)
        edits.append((start, "{ "))
        edits.append((end, " " + dump_calls(o) + " }"))
    return DUMP_RUNTIME + f'#line 1 "{_esc(path)}"\n' + insert_at(source, edits)


def _run(cmd: list[str], env: dict, timeout: float, what: str, cwd: str) -> subprocess.CompletedProcess:
    # a session of its own: on a timeout the kill reaches what the command started too (cc -> cc1, as, ld;
    # the user's program -> its children), so nothing keeps running after verify returns
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        import signal
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        proc.communicate()
        raise C2GPUError(f"{what} did not finish within {timeout:g} s (use --timeout to allow more)") from None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def read_dump(path: Path) -> list[tuple[str, str, np.ndarray]]:
    data = path.read_bytes() if path.exists() else b""
    out, pos = [], 0
    while pos < len(data):
        nl = data.index(b"\n", pos)
        label, ctype_and_count = data[pos:nl].decode().split(" ", 1)
        ctype, count = ctype_and_count.rsplit(" ", 1)
        dt = np.dtype(DTYPES.get(ctype, np.uint8))
        n = int(count)
        start = nl + 1
        arr = np.frombuffer(data[start:start + n * dt.itemsize], dtype=dt)
        out.append((label, ctype, arr))
        pos = start + n * dt.itemsize
    return out


def compare(expected, actual, rtol: float, atol: float) -> VerifyResult:
    if len(expected) != len(actual):
        return VerifyResult(False, f"the original wrote {len(expected)} outputs, the port {len(actual)}")
    worst, max_abs, max_rel = None, 0.0, 0.0
    seen: dict[str, int] = {}
    for (la, ta, a), (lb, tb, b) in zip(expected, actual):
        occ = seen.get(la, 0)
        seen[la] = occ + 1
        if la != lb or a.shape != b.shape:
            return VerifyResult(False, f"output mismatch: expected {la} ({a.size} elements), got {lb} ({b.size})")
        if a.size == 0:
            continue
        if a.dtype.kind == "f":
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            same = (a64 == b64) | (np.isnan(a64) & np.isnan(b64))   # equal infinities and NaNs agree
            with np.errstate(invalid="ignore", over="ignore"):
                diff = np.where(same, 0.0, np.abs(a64 - b64))
            diff = np.where(np.isnan(diff), np.inf, diff)
            finite = np.abs(a64[np.isfinite(a64)])
            scale = max(float(finite.max()) if finite.size else 0.0, 1e-30)
            # relative to the array's magnitude, so values near zero are not judged by their own tiny size
            tol = atol + rtol * scale
            k = int(np.argmax(diff))
            rel = float(diff[k]) / scale
            if float(diff[k]) > max_abs:
                max_abs, max_rel = float(diff[k]), rel
                worst = Difference(la, occ, k, float(a64[k]), float(b64[k]))
            if diff[k] > tol:
                return VerifyResult(False, f"{la.split('|')[1]} differs (occurrence {occ + 1} of nest "
                                           f"{la.split('|')[0]}): element {k} is {b64[k]!r}, expected {a64[k]!r} "
                                           f"(relative difference {rel:.3g} > {rtol:g})",
                                    len(expected), max_abs, max_rel, Difference(la, occ, k, float(a64[k]), float(b64[k])))
        else:
            bad = np.nonzero(a != b)[0]
            if bad.size:
                k = int(bad[0])
                return VerifyResult(False, f"{la.split('|')[1]} differs (occurrence {occ + 1}): element {k} is "
                                           f"{b[k]}, expected {a[k]} ({bad.size} elements differ)",
                                    len(expected), float(abs(int(a[k]) - int(b[k]))), 0.0,
                                    Difference(la, occ, k, float(a[k]), float(b[k])))
    return VerifyResult(True, f"{len(expected)} outputs identical within tolerance", len(expected), max_abs, max_rel, worst)


def _compile_cu(cu: Path, out: Path, flags: list[str], cxx: str, timeout: float, result) -> None:
    try:
        cr = compile_for_cpu(cu, out, extra_flags=flags, cxx=cxx, timeout=timeout)
    except CompilerNotFoundError as e:
        raise C2GPUError(str(e)) from None
    result.commands.append(cr.command)
    if not cr.ok:
        raise C2GPUError(f"the ported program does not compile for the CPU execution layer:\n{cr.stderr.strip()}")


def verify(path: str, options: PreprocessOptions, manager, rtol: float = 1e-5, atol: float = 0.0,
           timeout: float = 120.0, cc: str = "cc", cxx: str = "g++", keep: str | None = None,
           cflags: tuple[str, ...] = ("-O1",)) -> VerifyResult:
    if shutil.which(cc) is None:
        raise C2GPUError(f"C compiler '{cc}' not found: verify needs it to build the original program")
    program, outcomes = analyse_for_port(path, options, manager)
    ported = [o for o in outcomes if o.ported]
    if not ported:
        return VerifyResult(False, "no nest of this file could be ported, so there is nothing to verify", outcomes=outcomes)
    source = _read_source(path)
    src_dir = str(Path(path).resolve().parent)
    # compilers run in the temporary directory: relative include directories must be made absolute
    flags = [f"-D{n}={v}" for n, v in options.defines] + [f"-I{Path(d).resolve()}" for d in options.include_dirs] \
        + ["-iquote", src_dir]
    tmp = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="c2gpu_verify_"))
    tmp.mkdir(parents=True, exist_ok=True)
    result = VerifyResult(False, "", outcomes=outcomes)
    try:
        orig_c = tmp / "original.c"
        orig_c.write_text(instrument_original(path, source, outcomes), errors="surrogateescape")
        port_cu = tmp / "ported.cu"
        orig_exe, port_exe = tmp / "original", tmp / "ported"
        cmd = [shutil.which(cc), *cflags, "-w", *flags, str(orig_c), "-o", str(orig_exe), "-lm"]
        result.commands.append(cmd)
        r = _run(cmd, dict(os.environ), timeout, "compiling the original program", str(tmp))
        if r.returncode != 0:
            raise C2GPUError(f"the original program does not compile:\n{r.stderr.decode(errors='replace').strip()}")
        split = bool(c_only_constructs(program))
        if split:
            # C host code (e.g. VLA parameters) + CUDA wrappers: compile apart and link, as a user would
            cu_text, host_text = render_split(path, source, outcomes, str(port_cu), "ported.host.c",
                                              after_nest=dump_calls, prefix=DUMP_RUNTIME)
            port_cu.write_text(cu_text, errors="surrogateescape")
            host_c = tmp / "ported.host.c"
            host_c.write_text(host_text, errors="surrogateescape")
            cmd = [shutil.which(cc), *cflags, "-w", *flags, "-c", str(host_c), "-o", str(tmp / "host.o")]
            result.commands.append(cmd)
            r = _run(cmd, dict(os.environ), timeout, "compiling the ported host code", str(tmp))
            if r.returncode != 0:
                raise C2GPUError(f"the ported host code does not compile:\n{r.stderr.decode(errors='replace').strip()}")
            cr = _compile_cu(port_cu, tmp / "kernels.o", ["-c", "-w", *flags], cxx, timeout, result)
            link = [shutil.which(cxx) or cxx, str(tmp / "host.o"), str(tmp / "kernels.o"), "-o", str(port_exe),
                    "-pthread", "-lm"]
            result.commands.append(link)
            r = _run(link, dict(os.environ), timeout, "linking the ported program", str(tmp))
            if r.returncode != 0:
                raise C2GPUError(f"the ported program does not link:\n{r.stderr.decode(errors='replace').strip()}")
        else:
            port_cu.write_text(render_port(path, source, outcomes, str(port_cu), after_nest=dump_calls,
                                           prefix=DUMP_RUNTIME), errors="surrogateescape")
            _compile_cu(port_cu, port_exe, ["-w", *flags, "-lm"], cxx, timeout, result)
        # The port runs twice: with each block's threads in order and in reverse order. A loop wrongly
        # claimed parallel usually gives the sequential answer in one order but not in the other.
        runs = {}
        for exe, name, order in ((orig_exe, "original", None), (port_exe, "ported", "forward"),
                                 (port_exe, "ported-reverse", "reverse")):
            env = dict(os.environ, C2GPU_DUMP=str(tmp / f"{name}.dump"))
            if order:
                env["C2GPU_EMU_ORDER"] = order
            r = _run([str(exe)], env, timeout, f"the {name} program", str(tmp))
            if r.returncode != 0:
                raise C2GPUError(f"the {name} program exited with status {r.returncode}:\n"
                                 f"{r.stderr.decode(errors='replace').strip()[-2000:]}")
            runs[name] = read_dump(tmp / f"{name}.dump")
        result = compare(runs["original"], runs["ported"], rtol, atol)
        if result.ok:
            reverse = compare(runs["original"], runs["ported-reverse"], rtol, atol)
            if not reverse.ok:
                reverse.message += " (with the threads of each block run in reverse order)"
                result = reverse
        result.outcomes = outcomes
        return result
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
