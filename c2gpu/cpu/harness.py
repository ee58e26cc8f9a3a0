"""Measured CPU baseline: time the ORIGINAL loop nests inside the user's own program.

How: the user's whole file is compiled with the user's C compiler, with timing code spliced
around each nest by source coordinates (`c2gpu.frontend.source.for_span`, as `c2gpu.drivers.verify` does):

    { long long c2gpu_t0; c2gpu_param(slot, (long long)(n)); c2gpu_t0 = c2gpu_now_ns();
      <the nest, as written>
      c2gpu_record(id, c2gpu_now_ns() - c2gpu_t0); }

so every nest runs with the program's real inputs, exactly as it does in production, and
nothing else in the file changes.  The hooks live in a second translation unit
(c2gpu_timer.c, clock_gettime(CLOCK_PROCESS_CPUTIME_ID): CPU time, so another process on the machine
does not lengthen the nest's time as it does wall-clock time) so no header is added to the user's file and
the user's macros and feature-test settings are untouched; the user's file only gets three
prototypes and a `#line 1` directive, so compiler messages point at the user's own lines.

Repeats: the PROGRAM is run `repeats` times, never the nest several times within one run.
Re-running a nest in place would change its inputs (`a[i] += ...`, time loops, convergence
loops) and the program's behaviour after it; a fresh run each time keeps everything as the
user wrote it.  Every execution of every nest is timed (a nest in a function called several
times, or inside a `while`, executes several times per run):
  - `median_s`, `min_s`, `max_s`: per execution, over all executions of all runs (the median
    over at most the first 65,536 executions of each run; min and max are exact);
  - `executions`: executions per program run;
  - `total_median_s`: the median over runs of the nest's summed time in one run;
  - `program_median_s`: the median over runs of the whole program's CPU time (its main and everything
    before exit), which the nests' shares of the program are taken from.
A CPU-time clock read is a system call (some 200 ns): the cost of one read, measured at the first
hook (the least of 100 back-to-back pairs), is taken off every execution's time; what is left of it
matters only for nests that take well under a microsecond.  A nest left by `return`, `goto` or `break` out of it is not counted.
The nest's symbolic parameters (function arguments such as `n`) are recorded at nest entry as
`observed_params` (min, max over executions), so a model can be evaluated at the sizes the
program really used.

Safety: compilers and the program run with argument lists (never a shell), in a private
temporary directory that is removed afterwards (also on errors), as their own process group,
with a time limit (`timeout`, per compile and per program run) after which the whole group is
killed and a clear error is raised.  The program runs in that directory, with no arguments,
stdin from /dev/null and its output discarded, so it writes nothing in the user's directories.

Cache: results are cached by (source hash, nest name, -D defines, -I dirs, compiler path and
file stamp, cflags, repeats) in `cpu-baseline.json` under `cache_dir`, else $C2GPU_CACHE_DIR,
else ~/.cache/c2gpu; nothing is written anywhere else, and an unusable cache directory just
means no caching.  Headers the file includes are not part of the key: clear the cache (or pass
use_cache=False) after editing them.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import statistics
import tempfile
from dataclasses import field
from pathlib import Path
from typing import Iterable, Mapping

from ..drivers import process
from ..drivers.cache import cache_dir as where
from ..diagnostics import C2GPUError
from ..frontend import PreprocessOptions, load_program
from ..ir import Nest, Program
from ..records import dataclass
from ..frontend.source import SpanError, for_span, insert_at
from .timing import AtSize, CpuTiming

CACHE_FILE = "cpu-baseline.json"
CACHE_VERSION = 3          # 2: CPU time instead of wall-clock time, and the program's time; 3: time per size
CACHE_MAX_ENTRIES = 2000
MAX_SAMPLES = 65536          # per nest and run; count, total, min and max stay exact beyond it
MAX_SIZES = 16               # distinct tuples of a nest's parameter values recorded per run (executions beyond: "other")

PRELUDE = """/* c2gpu cpu baseline: timing hooks, defined in c2gpu_timer.c */
long long c2gpu_now_ns(void);
void c2gpu_record(int, long long);
void c2gpu_param(int, long long);
void c2gpu_sizes(int, int, int);
"""

TIMER_C = r"""/* c2gpu cpu baseline: per-nest timing, written to $C2GPU_TIMING at exit */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NESTS %(nests)d
#define SLOTS %(slots)d
#define MAX_SAMPLES %(max_samples)d
#define MAX_SIZES %(max_sizes)d
#define PARAMS %(params)d

static long long count[NESTS], total[NESTS], tmin[NESTS], tmax[NESTS], nsamples[NESTS];
static long long *samples[NESTS];
static long long pmin[SLOTS + 1], pmax[SLOTS + 1], pcur[SLOTS + 1];
static int pseen[SLOTS + 1], registered;
/* per nest, the distinct tuples of its parameters' values at entry, with executions and time at each */
static long long sizeval[NESTS][MAX_SIZES][PARAMS], sizecount[NESTS][MAX_SIZES], sizetotal[NESTS][MAX_SIZES];
static long long sizeother[NESTS];
static int nsizes[NESTS], cursize[NESTS];   /* cursize: the tuple of the nest's current execution (-1: other) */
long long c2gpu_now_ns(void);

static void c2gpu_flush(void)
{
  const char *path = getenv("C2GPU_TIMING");
  FILE *f;
  int i;
  long long k;
  if (!path || !(f = fopen(path, "w")))
    return;
  for (i = 0; i < NESTS; i++) {
    fprintf(f, "nest %%d %%lld %%lld %%lld %%lld", i, count[i], total[i], tmin[i], tmax[i]);
    for (k = 0; k < nsamples[i]; k++)
      fprintf(f, " %%lld", samples[i][k]);
    fputc('\n', f);
  }
  for (i = 0; i < SLOTS; i++)
    if (pseen[i])
      fprintf(f, "param %%d %%lld %%lld\n", i, pmin[i], pmax[i]);
  for (i = 0; i < NESTS; i++) {
    int s, p;
    for (s = 0; s < nsizes[i]; s++) {
      fprintf(f, "size %%d %%lld %%lld", i, sizecount[i][s], sizetotal[i][s]);
      for (p = 0; p < PARAMS; p++)
        fprintf(f, " %%lld", sizeval[i][s][p]);
      fputc('\n', f);
    }
    if (sizeother[i])
      fprintf(f, "sizeother %%d %%lld\n", i, sizeother[i]);
  }
  fprintf(f, "program %%lld\n", c2gpu_now_ns());
  fclose(f);
}

static long long overhead;          /* one clock read, taken off every execution's time */

static void c2gpu_register(void)
{
  int k;
  long long a, b;
  if (!registered) {
    registered = 1;
    atexit(c2gpu_flush);
    overhead = -1;
    for (k = 0; k < 100; k++) {
      a = c2gpu_now_ns();
      b = c2gpu_now_ns();
      if (overhead < 0 || b - a < overhead)
        overhead = b - a;
    }
  }
}

long long c2gpu_now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (long long)t.tv_sec * 1000000000LL + (long long)t.tv_nsec;
}

void c2gpu_record(int i, long long ns)
{
  c2gpu_register();
  ns = ns > overhead ? ns - overhead : 0;
  if (count[i] == 0 || ns < tmin[i])
    tmin[i] = ns;
  if (count[i] == 0 || ns > tmax[i])
    tmax[i] = ns;
  count[i]++;
  total[i] += ns;
  if (cursize[i] >= 0)      /* (a nest without sizes adds to a tuple 0 it never reports) */
    sizetotal[i][cursize[i]] += ns;
  if (nsamples[i] < MAX_SAMPLES) {
    if (!samples[i])
      samples[i] = (long long *)malloc(MAX_SAMPLES * sizeof(long long));
    if (samples[i])
      samples[i][nsamples[i]++] = ns;
  }
}

void c2gpu_param(int s, long long v)
{
  c2gpu_register();
  if (!pseen[s] || v < pmin[s])
    pmin[s] = v;
  if (!pseen[s] || v > pmax[s])
    pmax[s] = v;
  pseen[s] = 1;
  pcur[s] = v;
}

/* after the c2gpu_param calls of nest i's entry (slots first .. first+n-1): count the execution under its
   tuple of values, a new one while there is room (beyond MAX_SIZES tuples it only counts as "other") */
void c2gpu_sizes(int i, int first, int n)
{
  int s, p;
  for (s = 0; s < nsizes[i]; s++) {
    for (p = 0; p < n && sizeval[i][s][p] == pcur[first + p]; p++)
      ;
    if (p == n)
      break;
  }
  if (s == nsizes[i]) {
    if (s == MAX_SIZES) {
      cursize[i] = -1;
      sizeother[i]++;
      return;
    }
    for (p = 0; p < n; p++)
      sizeval[i][s][p] = pcur[first + p];
    nsizes[i]++;
  }
  cursize[i] = s;
  sizecount[i][s]++;
}
"""


class CompilerNotFound(C2GPUError):
    pass


# --------------------------------------------------------------------------- cache

def cache_path(cache_dir: str | os.PathLike | None = None) -> Path | None:
    """Where results are cached: cache_dir, else $C2GPU_CACHE_DIR, else ~/.cache/c2gpu (c2gpu/drivers/cache.py)."""
    d = where(cache_dir)
    return None if d is None else d / CACHE_FILE


def _cache_read(path: Path | None) -> dict:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("version") == CACHE_VERSION else {}


def _cache_write(path: Path | None, entries: dict[str, dict]) -> None:
    """Merge `entries` into the cache file (atomic replace); any OS error just means no caching."""
    if path is None or not entries:
        return
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = _cache_read(path).get("entries", {})
        data.update(entries)
        keep = dict(list(data.items())[-CACHE_MAX_ENTRIES:])   # oldest first: drop the oldest
        fd, tmp = tempfile.mkstemp(prefix=".cpu-baseline.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w") as f:
            json.dump({"version": CACHE_VERSION, "entries": keep}, f, indent=1, sort_keys=False)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _cache_key(source_hash: str, nest: str, defines, include_dirs, cc_path: str, cflags, repeats: int) -> str:
    try:
        st = os.stat(os.path.realpath(cc_path))
        stamp = [os.path.realpath(cc_path), st.st_size, st.st_mtime_ns]   # a compiler upgrade misses the cache
    except OSError:
        stamp = [cc_path]
    text = json.dumps([CACHE_VERSION, source_hash, nest, sorted(defines), list(include_dirs), cc_path, stamp,
                       list(cflags), repeats])
    return hashlib.sha256(text.encode()).hexdigest()


# --------------------------------------------------------------------------- running

def _tail(r: process.Completed, limit: int = 3000) -> str:
    return r.stderr[-limit:].decode(errors="replace").strip()


_UNDEFINED = re.compile(r"undefined reference to [`'\"]?([A-Za-z_]\w*)")
_ERROR_LINE = re.compile(r"^(?:.*?: )?(?:fatal )?error: .*$", re.M)


def _complaint(r: process.Completed) -> str:
    """What the compiler or linker said, in one line and without c2gpu's temporary files: the symbols the link
    misses (the program's other C files, to give with --extra-source), or the first error."""
    text = r.stderr.decode(errors="replace")
    missing = list(dict.fromkeys(_UNDEFINED.findall(text)))
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        return (f"it does not link: undefined reference to {shown} (defined in another C file of the program? give "
                "it with --extra-source FILE.c)")
    first = _ERROR_LINE.search(text)
    if first:
        return f"it does not compile: {first.group(0).strip()}"
    lines = [line for line in text.splitlines() if line.strip()]
    return f"the compiler failed: {lines[-1].strip() if lines else f'exit status {r.returncode}'}"


def _run(cmd: list[str], *, cwd: Path, env: dict, timeout: float, what: str, hint: str) -> process.Completed:
    """Run with no shell, standard output discarded; at the time limit the whole process group is killed."""
    try:
        r = process.run(cmd, timeout=timeout, cwd=cwd, env=env, keep_stdout=False)
    except OSError as e:
        raise C2GPUError(f"cannot run {what}: {e}") from None
    if r.timed_out:
        raise C2GPUError(f"{what} did not finish within {timeout:g} s{hint}")
    return r


def compiler_version(cc_path: str, timeout: float = 10) -> str:
    """First line of `cc --version` ('' when the compiler does not say)."""
    try:
        r = process.run([cc_path, "--version"], timeout=timeout)
    except OSError:
        return ""
    lines = r.stdout_text.strip().splitlines() if not r.timed_out else []
    return lines[0].strip() if lines else ""


def _esc(p: str) -> str:
    return p.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def instrument(path: str, source: str, targets: list[tuple[int, int, int, list[tuple[int, str]]]]) -> str:
    """The user's text with timing around each target (id, start, end, [(param slot, name)])."""
    edits = []
    for nid, start, end, slots in targets:
        params = "".join(f" c2gpu_param({s}, (long long)({name}));" for s, name in slots)
        if slots:
            params += f" c2gpu_sizes({nid}, {slots[0][0]}, {len(slots)});"
        edits.append((start, f"{{ long long c2gpu_t0;{params} c2gpu_t0 = c2gpu_now_ns(); "))
        edits.append((end, f" c2gpu_record({nid}, c2gpu_now_ns() - c2gpu_t0); }}"))
    return PRELUDE + f'#line 1 "{_esc(path)}"\n' + insert_at(source, edits)


@dataclass
class RunTiming:
    """One run's timing file: per nest (count, total, min, max, samples), per slot the parameter's (min, max),
    the program's CPU time at exit (ns), and per nest its parameters' value tuples (values, executions, total ns)
    with the executions beyond MAX_SIZES tuples."""
    nests: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    program_ns: int | None = None
    sizes: dict = field(default_factory=dict)
    sizes_other: dict = field(default_factory=dict)


def _parse_timing(text: str) -> RunTiming:
    run = RunTiming()
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "nest" and len(f) >= 6:
            run.nests[int(f[1])] = (int(f[2]), int(f[3]), int(f[4]), int(f[5]), [int(x) for x in f[6:]])
        elif f and f[0] == "param" and len(f) == 4:
            run.params[int(f[1])] = (int(f[2]), int(f[3]))
        elif f and f[0] == "size" and len(f) >= 4:
            run.sizes.setdefault(int(f[1]), []).append((tuple(int(x) for x in f[4:]), int(f[2]), int(f[3])))
        elif f and f[0] == "sizeother" and len(f) == 3:
            run.sizes_other[int(f[1])] = int(f[2])
        elif f and f[0] == "program" and len(f) == 2:
            run.program_ns = int(f[1])
    return run


def _build_and_run(path: str, source: str, targets, nslots: int, cc_path: str, cflags, flags, repeats: int,
                   timeout: float, extra_sources: tuple[str, ...] = ()):
    """Build the instrumented program once (linked with the program's other C files, `extra_sources`) and run
    it `repeats` times; returns (runs, command)."""
    tmp = Path(tempfile.mkdtemp(prefix="c2gpu_cpu_"))
    try:
        (tmp / "c2gpu_timer.c").write_text(TIMER_C % {
            "nests": max(len(targets), 1), "slots": max(nslots, 1), "max_samples": MAX_SAMPLES,
            "max_sizes": MAX_SIZES, "params": max([len(t[3]) for t in targets] + [1])})
        (tmp / "nest_timing.c").write_text(instrument(path, source, targets), errors="surrogateescape")
        env = process.user_environment()
        hint = " (--timeout SECONDS allows more)"
        # the hooks run outside the timed spans (one clock read, measured, is taken off each): -O0 compiles
        # them in half the time, after the user's flags so that those that set the ABI (-m32) still apply
        timer_cmd = [cc_path, *cflags, "-O0", "-w", "-c", "c2gpu_timer.c", "-o", "c2gpu_timer.o"]
        r = _run(timer_cmd, cwd=tmp, env=env, timeout=timeout, what="compiling the timing hooks", hint=hint)
        if r.returncode != 0:
            raise C2GPUError(f"{cc_path} cannot compile c2gpu's timing hooks:\n{_tail(r)}")
        objects = []
        for k, extra in enumerate(extra_sources):
            obj = f"extra{k}.o"
            r = _run([cc_path, *cflags, "-w", *flags, "-c", str(Path(extra).resolve()), "-o", obj], cwd=tmp, env=env,
                     timeout=timeout, what=f"compiling '{extra}'", hint=hint)
            if r.returncode != 0:
                raise C2GPUError(f"'{extra}' (--extra-source): {_complaint(r)}")
            objects.append(obj)
        cmd = [cc_path, *cflags, "-w", *flags, "nest_timing.c", *objects, "c2gpu_timer.o", "-o", "nest_timing", "-lm"]
        r = _run(cmd, cwd=tmp, env=env, timeout=timeout, what=f"compiling '{path}' for timing", hint=hint)
        if r.returncode != 0:
            raise C2GPUError(_complaint(r))
        runs = []
        for k in range(repeats):
            out = tmp / "timing.txt"
            if out.exists():
                out.unlink()
            r = _run([str(tmp / "nest_timing")], cwd=tmp, env=dict(env, C2GPU_TIMING=str(out)), timeout=timeout,
                     what=f"'{path}' (timing run {k + 1} of {repeats})",
                     hint=": a nest or the program may not terminate with its inputs, or it waits for input;"
                          " --timeout SECONDS allows more")
            if r.returncode != 0:
                rc = r.returncode
                how = f"was killed by signal {signal.Signals(-rc).name}" if rc < 0 else f"exited with status {rc}"
                raise C2GPUError(f"'{path}' {how} in timing run {k + 1} of {repeats}:\n{_tail(r)}".rstrip(":\n"))
            runs.append(_parse_timing(out.read_text() if out.exists() else ""))
        return runs, cmd
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------- API

def _same_file(loc_file: str, path: str) -> bool:
    # the frontend's locations keep the preprocessor's escaping of the file name ('my \\"q\\".c')
    return loc_file in (path, path.replace("\\", "\\\\").replace('"', '\\"'))


def _split_params(params: Mapping[str, object] | None, program: Program) -> tuple[dict[str, str], list[str]]:
    """Parameters that are macros become -D defines; variables of the program (function arguments,
    found as nest parameters) cannot be bound in a measurement: the program's own values are used."""
    variables = {p for n in program.nests for p in n.params}
    macros, ignored = {}, []
    for name, value in (params or {}).items():
        if name in variables:
            ignored.append(name)
        else:
            macros[name] = str(value)
    return macros, sorted(ignored)


def _aggregate(nest: Nest, nid: int, slot_names: dict[int, str], runs, base: dict) -> CpuTiming:
    counts, totals, mins, maxs, samples = [], [], [], [], []
    observed: dict[str, tuple[int, int]] = {}
    for run in runs:
        nests, params = run.nests, run.params
        c, tot, lo, hi, smp = nests.get(nid, (0, 0, 0, 0, []))
        counts.append(c)
        totals.append(tot / 1e9)
        if c:
            mins.append(lo / 1e9)
            maxs.append(hi / 1e9)
            samples.extend(x / 1e9 for x in smp)
        for slot, name in slot_names.items():
            if slot in params:
                a, b = params[slot]
                old = observed.get(name, (a, b))
                observed[name] = (min(old[0], a), max(old[1], b))
    notes = list(base.pop("notes", []))
    details = {"executions_per_run": counts, "total_per_run_s": totals, "samples": len(samples)}
    if not any(counts):
        notes.insert(0, f"the nest never ran in {len(runs)} runs of the program (with its own inputs)")
        return CpuTiming(nest=nest.name, source="measured", median_s=None, executions=0, runs=len(runs),
                         total_median_s=0.0, note="; ".join(notes), details=details, **base)
    if len(set(counts)) > 1:
        notes.append(f"executions per run vary: {counts}")
    median = statistics.median(samples)
    per_run = statistics.median(counts)
    programs = [r.program_ns / 1e9 for r in runs if r.program_ns]
    notes.insert(0, f"median of {len(samples)} timed executions over {len(runs)} program runs "
                    f"({int(per_run)} per run)")
    if median < 1e-6:
        notes.append("under 1 µs per execution: the clock reads (some 200 ns, taken off) may be a visible part of it")
    return CpuTiming(nest=nest.name, source="measured", median_s=median, min_s=min(mins), max_s=max(maxs),
                     executions=int(per_run), runs=len(runs), total_median_s=statistics.median(totals),
                     program_median_s=statistics.median(programs) if programs else None,
                     note="; ".join(notes), observed_params=observed, sizes=_sizes(nid, slot_names, runs),
                     details=details, **base)


def _sizes(nid: int, slot_names: dict[int, str], runs) -> tuple[AtSize, ...]:
    """The nest's parameter tuples over the runs, per run (executions and seconds averaged over the runs);
    empty when some executions fell beyond the MAX_SIZES tuples a run records (their sizes are not known)."""
    names = [slot_names[k] for k in sorted(slot_names)]
    if not names or any(r.sizes_other.get(nid) for r in runs):
        return ()
    summed: dict[tuple, list[int]] = {}
    for r in runs:
        for values, count, total in r.sizes.get(nid, []):
            acc = summed.setdefault(values[:len(names)], [0, 0])
            acc[0] += count
            acc[1] += total
    return tuple(AtSize(tuple(zip(names, values)), count / len(runs), total / 1e9 / len(runs))
                 for values, (count, total) in sorted(summed.items(), key=lambda kv: -kv[1][1]))


def measure_file(path: str, options: PreprocessOptions | None = None, nests: Iterable[str | Nest] | None = None, *,
                 cc: str = "cc", cflags: Iterable[str] = ("-O2",), repeats: int = 5, timeout: float = 60,
                 params: Mapping[str, object] | None = None, cache_dir: str | os.PathLike | None = None,
                 use_cache: bool = True, program: Program | None = None,
                 source: str | None = None, extra_sources: Iterable[str] = ()) -> dict[str, CpuTiming]:
    """Time several nests of one file with ONE build (all nests instrumented at once), by nest name.

    nests: names or Nest objects (default: every nest of the file).  params: values for size
    macros, passed as -D NAME=VALUE like options.defines; a name that is a variable of the program
    (a function argument) cannot be bound here and is ignored, with a note.  program: the file's
    already loaded Program (else it is loaded with `options`).  source: the file's text when it is not read
    from `path` (C source given to the API: `path` only names it).  extra_sources: the program's other C files,
    compiled and linked with it (PolyBench's utilities/polybench.c).
    A nest that cannot be timed (a `for` produced by a macro, or one that never ran) gets a
    CpuTiming with median_s None and a note saying why.  Errors (no compiler, the file does
    not compile, a crash, the time limit) raise C2GPUError.
    """
    options = options or PreprocessOptions()
    cflags = tuple(cflags)
    if repeats < 1:
        raise C2GPUError("repeats must be at least 1")
    cc_path = shutil.which(cc)
    if cc_path is None:
        raise CompilerNotFound(f"C compiler '{cc}' not found on PATH: cannot time the nests of '{path}'")
    if source is None:
        try:
            source = Path(path).read_bytes().decode("utf-8", "surrogateescape")
        except OSError as e:
            raise C2GPUError(f"cannot read '{path}': {e.strerror or e}") from None
    program = program or load_program(path, options, source=source)
    macros, ignored = _split_params(params, program)
    defines = dict(options.defines)
    defines.update(macros)
    include_dirs = [os.path.abspath(d) for d in options.include_dirs]   # the compiler runs in a temp dir
    flags = ([f"-D{n}={v}" for n, v in defines.items()] + [f"-I{d}" for d in include_dirs]
             + ["-iquote", str(Path(path).resolve().parent)])

    wanted: list[Nest] = []
    for item in (program.nests if nests is None else nests):
        if isinstance(item, Nest):
            wanted.append(item)
            continue
        try:
            wanted.append(program.nest(item))
        except KeyError:
            names = ", ".join(n.name for n in program.nests) or "none"
            raise C2GPUError(f"no nest '{item}' in '{path}' (nests: {names})") from None

    extra_sources = tuple(str(x) for x in extra_sources)
    digest = hashlib.sha256(source.encode("utf-8", "surrogateescape"))
    for extra in extra_sources:        # the other files are part of the program the timings are of
        try:
            digest.update(b"\0" + extra.encode() + b"\0" + Path(extra).read_bytes())
        except OSError as e:
            raise C2GPUError(f"cannot read '{extra}' (--extra-source): {e.strerror or e}") from None
    source_hash = digest.hexdigest()
    cpath = cache_path(cache_dir) if use_cache else None
    cached = _cache_read(cpath).get("entries", {})
    keys = {n.name: _cache_key(source_hash, n.name, defines.items(), include_dirs, cc_path, cflags, repeats)
            for n in wanted}
    results: dict[str, CpuTiming] = {}
    todo: list[Nest] = []
    for n in wanted:
        entry = cached.get(keys[n.name])
        if entry is not None:
            try:
                results[n.name] = CpuTiming.from_dict({**entry["timing"], "cached": True})
                continue
            except (KeyError, TypeError, ValueError):
                pass
        todo.append(n)
    if not todo:
        return {n.name: results[n.name] for n in wanted}

    version = compiler_version(cc_path, min(timeout, 10))
    common_notes = [f"{name} is a variable of the program: its own value was used (see observed_params)"
                    for name in ignored]
    targets, slot_names, by_id, failed = [], {}, {}, {}
    for n in todo:
        if not _same_file(n.loc.file, path):
            failed[n.name] = f"the nest is in '{n.loc.file}', not in '{path}'"
            continue
        try:
            start, end = for_span(source, n.loc.line, n.loc.col)
        except SpanError as e:
            failed[n.name] = f"cannot find the nest in the source to time it: {e}"
            continue
        nid = len(targets)
        slots = []
        at_nest = dict(n.stands_for)      # a parameter standing for a field or an element (v->n, d[0]) is that
        for p in n.params:
            slots.append((len(slot_names), at_nest.get(p, p)))
            slot_names[len(slot_names)] = (nid, p)
        targets.append((nid, start, end, slots))
        by_id[nid] = n

    runs, cmd = [], []
    if targets:
        try:
            runs, cmd = _build_and_run(path, source, targets, len(slot_names), cc_path, cflags, flags, repeats,
                                       timeout, extra_sources)
        except C2GPUError:
            if not slot_names:
                raise
            # recording the parameters is a convenience: never let it break a build that works without
            targets = [(nid, s, e, []) for nid, s, e, _ in targets]
            slot_names = {}
            runs, cmd = _build_and_run(path, source, targets, 0, cc_path, cflags, flags, repeats, timeout,
                                       extra_sources)

    base = dict(compiler=tuple(cmd), compiler_version=version, flags=cflags + tuple(flags))
    fresh: dict[str, dict] = {}
    for nid, n in by_id.items():
        names = {slot: p for slot, (owner, p) in slot_names.items() if owner == nid}
        t = _aggregate(n, nid, names, runs, dict(base, notes=common_notes))
        results[n.name] = t
        fresh[keys[n.name]] = {"path": path, "nest": n.name, "timing": t.to_dict()}
    for name, why in failed.items():
        results[name] = CpuTiming(nest=name, source="measured", median_s=None, runs=0, note=why, **base)
    _cache_write(cpath, fresh)
    return {n.name: results[n.name] for n in wanted}


def measure_nest(program_path: str, nest: str | Nest, options: PreprocessOptions | None = None, *, cc: str = "cc",
                 cflags: Iterable[str] = ("-O2",), repeats: int = 5, timeout: float = 60,
                 params: Mapping[str, object] | None = None, cache_dir: str | os.PathLike | None = None,
                 use_cache: bool = True, program: Program | None = None) -> CpuTiming:
    """Time one nest (by name or Nest) of `program_path` in its own program; see `measure_file`.

    Unlike measure_file, a nest that cannot be timed or never ran is an error.
    """
    name = nest.name if isinstance(nest, Nest) else nest
    t = measure_file(program_path, options, [nest], cc=cc, cflags=cflags, repeats=repeats, timeout=timeout,
                     params=params, cache_dir=cache_dir, use_cache=use_cache, program=program)[name]
    if t.median_s is None:
        raise C2GPUError(f"cannot time nest '{name}' of '{program_path}': {t.note}")
    return t
