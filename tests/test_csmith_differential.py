"""csmith differential: every nest c2gpu ports in a csmith program must leave the program's checksum unchanged.

csmith's programs print a CRC of all their globals at exit, an oracle nobody on this project wrote.  For each
program: build the original with cc and run it (programs that do not finish in time are skipped and counted);
port every nest c2gpu accepts, as split output (csmith programs are not valid C++: OUT.cu with the kernels,
OUT.host.c with the user's C calling them); build the kernels with c2gpu's CPU execution layer, link, run with
each block's threads in order and in reverse order, and require the original's output, byte for byte.

The csmith options keep the C semantics this project must get right (globals, local arrays, casts, every
integer width, signed/unsigned mixes, comma operators, embedded assignments, `++` inside expressions) and leave
out what c2gpu refuses wholesale (pointers, structs, unions, volatiles, jumps), so that nests do get ported.
Every other program uses raw arithmetic (`--no-safe-math`) instead of csmith's safe_* wrappers, whose calls
c2gpu cannot see into; signed overflow there is made defined with -fwrapv in every build (original, host code,
kernels).  What -fwrapv leaves undefined (a division by zero the optimizer removed, a shift wider than its type)
makes the output depend on how the program is compiled: the original is built at -O0 too, and a program whose
two builds differ is skipped, so that a difference can only come from the port.  Nests that csmith.h itself contains are ported
too, but the port's host code includes the unmodified header, so only nests of the program file are counted.

    pytest tests/test_csmith_differential.py -s            # 10 programs (the default run, CI)
    pytest tests/test_csmith_differential.py -m slow -s    # 490 more

A mismatch is a wrong port (or a code generation bug): the message names the seed and the nests ported in it;
`csmith --seed SEED <options below>` regenerates the program.
"""
from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import requires_tool
from test_fuzz_csmith import csmith_include, requires_csmith

SEED0 = 20251124                # program k is csmith --seed SEED0 + k
DEFAULT_PROGRAMS = 10           # about 2 s each on 2 cores: the default suite's time budget is 10 minutes
SLOW_PROGRAMS = 490             # programs DEFAULT_PROGRAMS .. 499, behind the slow marker
BASE_OPTIONS = ["--no-pointers", "--no-structs", "--no-unions", "--no-bitfields", "--no-volatiles", "--no-jumps",
                "--no-packed-struct", "--no-float", "--max-funcs", "3", "--max-block-depth", "4",
                "--max-expr-complexity", "5", "--concise"]
RUN_TIMEOUT = 5.0               # seconds for the original; the emulated port gets PORT_SLOWDOWN times that
PORT_SLOWDOWN = 6
WORKERS = 2                     # the CI machine has 2 cores


# why a program is no oracle (its own behaviour is undefined), as opposed to a harness that could not run it
UNDEFINED = "the original's output depends on the optimization level (undefined behaviour)"
UNDEFINED_EXIT = "the original exits with status"


def csmith_options(k: int) -> list[str]:
    return BASE_OPTIONS + (["--no-safe-math"] if k % 2 else [])


def cflags(k: int, inc: str) -> list[str]:
    return ["-O1", "-w", f"-I{inc}"] + (["-fwrapv"] if k % 2 else [])


@dataclass
class ProgramResult:
    seed: int
    nests: int = 0                                  # loop nests of the program file
    ported: list[str] = field(default_factory=list)  # names of its ported nests
    skipped: str = ""                               # why the program was not compared
    mismatch: str = ""                              # the port prints something else: a wrong port
    problem: str = ""                               # the port does not build or crashes: a code generation bug


def _run(cmd: list[str], timeout: float, env: dict | None = None) -> subprocess.CompletedProcess | None:
    """The completed process, or None when it did not finish within timeout seconds."""
    try:
        return subprocess.run(cmd, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None


def _tail(b: bytes, n: int = 600) -> str:
    return b.decode(errors="replace").strip()[-n:]


def check_program(k: int, work: str, inc: str) -> ProgramResult:
    """Generate program k, run it, port it, run the port, compare (in a worker process)."""
    from c2gpu.drivers.driver import make_manager
    from c2gpu.pipeline import PORT
    from c2gpu.emulate.build import compile_for_cpu
    from c2gpu.frontend import PreprocessOptions
    from c2gpu.drivers.port import host_name_for, port_file

    seed = SEED0 + k
    res = ProgramResult(seed)
    d = Path(work) / f"s{seed}"
    d.mkdir(parents=True)
    src = d / "program.c"
    # cwd: csmith writes platform.info into the current directory
    gen = subprocess.run(["csmith", "--seed", str(seed), *csmith_options(k), "-o", str(src)], cwd=d,
                         capture_output=True, timeout=120)
    if gen.returncode != 0 or not src.is_file():
        res.skipped = "csmith failed"
        return res
    flags = cflags(k, inc)
    cc = shutil.which("cc") or "cc"
    built = _run([cc, *flags, str(src), "-o", str(d / "original")], 120)
    if built is None or built.returncode != 0:
        res.skipped = "the original does not compile"
        return res
    expected = _run([str(d / "original")], RUN_TIMEOUT)
    if expected is None:
        res.skipped = f"the original does not finish within {RUN_TIMEOUT:g} s"
        return res
    if expected.returncode != 0:      # e.g. SIGFPE (-8): raw arithmetic divided by zero
        res.skipped = f"{UNDEFINED_EXIT} {expected.returncode}"
        return res
    # Raw arithmetic can still be undefined with -fwrapv (a division by zero the optimizer removed, a shift
    # by more than the width): the output then depends on how the program is compiled, and the port, which
    # compiles each nest apart, may legitimately differ.  Such a program is no oracle: built at -O0 as well,
    # it must print the same.
    unoptimized = _run([cc, *flags, "-O0", str(src), "-o", str(d / "original_O0")], 120)
    if unoptimized is None or unoptimized.returncode != 0:
        res.skipped = "the original does not compile at -O0"
        return res
    again = _run([str(d / "original_O0")], RUN_TIMEOUT * PORT_SLOWDOWN)
    if again is None:
        res.skipped = f"the original built at -O0 does not finish within {RUN_TIMEOUT * PORT_SLOWDOWN:g} s"
        return res
    if again.returncode != 0 or again.stdout != expected.stdout:
        res.skipped = UNDEFINED
        return res

    cu = d / "port.cu"
    port = port_file(str(src), PreprocessOptions(include_dirs=(inc,)), make_manager(PORT.passes, {}), str(cu),
                     split=True)
    mine = [o for o in port.outcomes if o.nest.loc.file == str(src)]
    res.nests = len(mine)
    res.ported = [o.nest.name for o in mine if o.ported]
    if not res.ported:
        shutil.rmtree(d, ignore_errors=True)
        return res
    cu.write_text(port.text, errors="surrogateescape")
    host = Path(host_name_for(str(cu)))
    host.write_text(port.host_text, errors="surrogateescape")
    hosted = _run([cc, *flags, "-c", str(host), "-o", str(d / "host.o")], 120)
    if hosted is None or hosted.returncode != 0:
        res.problem = f"the port's host code does not compile: {_tail(hosted.stderr) if hosted else 'timeout'}"
        return res
    kernels = compile_for_cpu(cu, d / "kernels.o", extra_flags=["-c", *flags])
    if not kernels.ok:
        res.problem = f"the kernels do not compile for the CPU execution layer: {kernels.stderr.strip()[-600:]}"
        return res
    linked = _run([shutil.which("g++") or "g++", str(d / "host.o"), str(d / "kernels.o"), "-o", str(d / "port"),
                   "-pthread", "-lm"], 120)
    if linked is None or linked.returncode != 0:
        res.problem = f"the port does not link: {_tail(linked.stderr) if linked else 'timeout'}"
        return res
    for order in ("forward", "reverse"):
        got = _run([str(d / "port")], RUN_TIMEOUT * PORT_SLOWDOWN, env=dict(os.environ, C2GPU_EMU_ORDER=order))
        if got is None:
            res.problem = f"the port ({order} thread order) does not finish within {RUN_TIMEOUT * PORT_SLOWDOWN:g} s"
        elif got.returncode != 0:
            res.problem = f"the port ({order} thread order) exits with status {got.returncode}: {_tail(got.stderr)}"
        elif got.stdout != expected.stdout:
            res.mismatch = (f"{order} thread order prints {_tail(got.stdout, 80)!r}, the original "
                            f"{_tail(expected.stdout, 80)!r}")
        if res.problem or res.mismatch:
            return res
    shutil.rmtree(d, ignore_errors=True)        # keep only the programs that failed
    return res


def run_campaign(tmp: Path, first: int, count: int) -> None:
    inc = csmith_include()
    assert inc is not None, "csmith is installed but csmith.h was not found (Debian: apt-get install libcsmith-dev)"
    # spawn: fresh workers (isl and forked threads do not mix); each imports c2gpu once for all its programs
    with ProcessPoolExecutor(max_workers=WORKERS, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = list(pool.map(check_program, range(first, first + count), [str(tmp)] * count, [str(inc)] * count))
    skipped = Counter(r.skipped for r in results if r.skipped)
    compared = [r for r in results if not r.skipped]
    nests = sum(r.nests for r in compared)
    ported = sum(len(r.ported) for r in compared)
    with_ports = sum(1 for r in compared if r.ported)
    print(f"\ncsmith differential (seeds {SEED0 + first}..{SEED0 + first + count - 1}, options {' '.join(BASE_OPTIONS)}, "
          f"--no-safe-math and -fwrapv on odd seeds):")
    print(f"  {count} programs: {len(compared)} run, {sum(skipped.values())} skipped; {nests} loop nests, "
          f"{ported} ported in {with_ports} programs, all compared in forward and reverse thread order")
    for why, n in skipped.most_common():
        print(f"    skipped {n:4d}: {why}")
    bad = [r for r in results if r.mismatch or r.problem]
    for r in bad:
        print(f"  seed {r.seed} (nests ported: {', '.join(r.ported)}): {r.mismatch or r.problem}")
    print(f"  {sum(1 for r in bad if r.mismatch)} checksum mismatches, {sum(1 for r in bad if r.problem)} ports that "
          f"do not build or run (failing programs kept under {tmp})")
    assert not bad, "wrong ports or broken code generation on csmith programs:\n" + "\n".join(
        f"seed {r.seed}: {r.mismatch or r.problem}" for r in bad)
    # programs whose own behaviour is undefined are no oracle; of the others, the harness must run nearly all
    invalid = sum(n for why, n in skipped.items() if why == UNDEFINED or why.startswith(UNDEFINED_EXIT))
    assert len(compared) >= 0.9 * (count - invalid) and len(compared) >= count / 2, \
        f"too many programs skipped: {dict(skipped)}"
    assert ported > 0, "no nest was ported: the run proves nothing"


@requires_csmith
@requires_tool("g++")
def test_csmith_checksums_match(tmp_path):
    run_campaign(tmp_path, 0, DEFAULT_PROGRAMS)


@pytest.mark.slow
@requires_csmith
@requires_tool("g++")
def test_csmith_checksums_match_more(tmp_path):
    run_campaign(tmp_path, DEFAULT_PROGRAMS, SLOW_PROGRAMS)
