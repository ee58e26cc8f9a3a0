"""verify cannot be fooled: live-out scalars, missing copy-ins, races and nests that never ran all fail it.

The broken ports are made by editing the rendered port (verify's edit_port hook) in the way a bug in the
port would: drop the restore of a loop variable, skip a copy-in, let threads race, clobber the state the
regions are computed from.  Each edit is checked to have happened, so a change in the generated code cannot
turn a test into one that checks nothing.
"""
from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from c2gpu.drivers.cli import main
from c2gpu.drivers.driver import make_manager
from c2gpu.emulate import compile_for_cpu
from c2gpu.frontend import PreprocessOptions
from c2gpu.drivers.port import PIPELINE
from c2gpu.drivers.verify import compare, read_dump, verify
from conftest import TESTDATA, requires_tool, write_c


def needs_compilers(test):
    return requires_tool("g++")(requires_tool("cc")(test))


def run_verify(path, orders=None, edit=None, defines=(), keep=None):
    kwargs = {"orders": orders} if orders else {}
    return verify(str(path), PreprocessOptions(defines=tuple(defines)), make_manager(PIPELINE, {}), edit_port=edit,
                  keep=keep, **kwargs)


def edit_once(pattern: str, repl: str):
    """An edit_port hook that applies `pattern` -> `repl` to the .cu file and checks it matched exactly once."""
    done = []

    def edit(name: str, text: str) -> str:
        if not name.endswith(".cu"):
            return text
        new, n = re.subn(pattern, repl, text)
        assert n == 1, f"the edit {pattern!r} matched {n} times in the port:\n{text}"
        done.append(name)
        return new

    edit.done = done
    return edit


# --------------------------------------------------------------------------- the execution layer

ORDER_PROBE = r"""
#include <cstdio>
#include <cuda_runtime.h>
__global__ void stamp(int *seq, int *counter) { seq[blockIdx.x * blockDim.x + threadIdx.x] = atomicAdd(counter, 1); }
int main() {
  int *seq, *cnt, *managed;
  cudaMalloc(&seq, 64 * sizeof(int));
  cudaMallocManaged(&managed, sizeof(int));
  int fresh[2];
  cudaMemcpy(&fresh[0], seq, sizeof(int), cudaMemcpyDeviceToHost);
  fresh[1] = *managed;
  printf("%08x %08x\n", (unsigned)fresh[0], (unsigned)fresh[1]);
  cudaMalloc(&cnt, sizeof(int));
  cudaMemset(cnt, 0, sizeof(int));
  stamp<<<4, 16>>>(seq, cnt);
  int h[64];
  cudaMemcpy(h, seq, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 64; i++) printf("%d ", h[i]);
  printf("\n");
  return 0;
}
"""


@pytest.fixture(scope="module")
def order_probe(tmp_path_factory):
    d = tmp_path_factory.mktemp("order")
    (d / "order.cu").write_text(ORDER_PROBE)
    res = compile_for_cpu(d / "order.cu", d / "order")
    assert res.ok, res.stderr

    def run(**env):
        return subprocess.run([str(res.exe_path)], capture_output=True, text=True, timeout=60,
                              env={"C2GPU_EMU_THREADS": "1", **env})

    return run


def _sequence(proc) -> list[int]:
    assert proc.returncode == 0, proc.stderr
    return [int(x) for x in proc.stdout.splitlines()[1].split()]


@needs_compilers
def test_emulator_runs_blocks_and_threads_in_the_chosen_order(order_probe):
    forward = _sequence(order_probe(C2GPU_EMU_ORDER="forward"))
    assert forward == list(range(64))
    assert _sequence(order_probe(C2GPU_EMU_ORDER="reverse")) == list(range(63, -1, -1))
    shuffled = _sequence(order_probe(C2GPU_EMU_ORDER="shuffle", C2GPU_EMU_SEED="1"))
    assert sorted(shuffled) == forward and shuffled not in (forward, forward[::-1])
    # one worker runs a block to its end: each block's 16 threads take 16 consecutive stamps, in a shuffled order
    blocks = [shuffled[b * 16:(b + 1) * 16] for b in range(4)]
    assert sorted(min(b) for b in blocks) == [0, 16, 32, 48] and all(max(b) - min(b) == 15 for b in blocks)
    assert [min(b) for b in blocks] != [0, 16, 32, 48]                     # the blocks are shuffled too
    assert any(b != sorted(b) for b in blocks)                              # and the threads of a block
    assert _sequence(order_probe(C2GPU_EMU_ORDER="shuffle", C2GPU_EMU_SEED="1")) == shuffled   # reproducible
    assert _sequence(order_probe(C2GPU_EMU_ORDER="shuffle", C2GPU_EMU_SEED="2")) != shuffled


@needs_compilers
def test_emulator_poisons_fresh_device_memory(order_probe):
    assert order_probe().stdout.split()[:2] == ["ffffffff", "ffffffff"]            # cudaMalloc, cudaMallocManaged
    assert order_probe(C2GPU_EMU_POISON="0x7F").stdout.split()[:2] == ["7f7f7f7f", "7f7f7f7f"]
    bad = order_probe(C2GPU_EMU_POISON="300")
    assert bad.returncode == 2 and "C2GPU_EMU_POISON=300: expected a byte value" in bad.stderr
    bad = order_probe(C2GPU_EMU_ORDER="backwards")
    assert bad.returncode == 2 and "C2GPU_EMU_ORDER=backwards: expected forward, reverse or shuffle" in bad.stderr


# --------------------------------------------------------------------------- the dump and its comparison

def test_dump_of_a_type_without_known_layout_stays_in_step(tmp_path):
    # two 12-byte elements of an unknown type, then an int: read as bytes, not as two 1-byte elements
    raw = b"n@1|s struct S 2 12\n" + bytes(range(24)) + b"n@1|k int 1 4\n" + np.int32(7).tobytes()
    (tmp_path / "d").write_bytes(raw)
    records = read_dump(tmp_path / "d")
    assert [(label, values.size) for label, _, values in records] == [("n@1|s", 24), ("n@1|k", 1)]
    assert records[1][2][0] == 7


def test_integers_compare_bit_for_bit():
    big = np.array([2**60], dtype=np.int64)
    res = compare([("n@1|a", "long", big)], [("n@1|a", "long", big + 1)], rtol=1.0, atol=1.0)
    assert not res.ok and "a (nest n@1, occurrence 1) differs" in res.message
    f = np.array([1.0, 2.0], dtype=np.float32)
    assert compare([("n@1|x", "float", f)], [("n@1|x", "float", f * (1 + 1e-7))], rtol=1e-5, atol=0).ok


# --------------------------------------------------------------------------- broken ports fail

LIVE_OUT = """\
int fill(int *a, int n)
{
  int i = -1;
  for (i = 0; i < n; i++)
    a[i] = 2 * i;
  return i;
}
int main(void)
{
  static int a[1000];
  return fill(a, 1000) % 256;     /* 232: verify compares the exit status too */
}
"""


@needs_compilers
def test_port_that_drops_a_loop_variable_fails(tmp_path):
    """Whatever the wrapper does to restore i, putting back the value i had before the call is the bug."""
    path = write_c(tmp_path, LIVE_OUT)
    edit = edit_once(r"(?<!void )\b(c2gpu_fill_\d+\([^;]*\);)", r"{ int c2gpu_before = i; \1 i = c2gpu_before; }")
    res = run_verify(path, edit=edit)
    assert edit.done and not res.ok
    assert res.message.startswith("i (nest fill@4, occurrence 1) differs: element 0 is -1, expected 1000 (1 of 1 "
                                  "elements differ); the ported program then exited with status 255 (the original "
                                  "exited with status 232)")
    res = run_verify(path)           # the port as generated restores i
    assert res.ok, res.message


COPY_IN = """\
void plus_one(const int *restrict a, int *restrict b, int n)
{
#pragma c2gpu port
  for (int i = 0; i < n; i++)
    b[i] = a[i] + 1;
}
int main(void)
{
  static int a[600], b[600];
  for (int i = 0; i < 600; i++)
    a[i] = -1;            /* what device memory holds when it is filled with 0xFF bytes */
  plus_one(a, b, 600);
  return 0;
}
"""


@needs_compilers
def test_port_that_skips_a_copy_in_fails(tmp_path):
    """With 0xFF poison the missing copy of `a` gives the right answer by chance; the next run's poison does not."""
    edit = edit_once(r"\n[^\n]*cudaMemcpy\(d_a\b[^\n]*cudaMemcpyHostToDevice\)\);", "")
    res = run_verify(write_c(tmp_path, COPY_IN), edit=edit)
    assert edit.done and not res.ok
    assert res.message.startswith("b (nest plus_one@4, occurrence 1) differs: element 0 is 2139062144, expected 0")
    assert "reverse order; fresh device memory filled with 0x7F bytes" in res.message


RACE = """\
void shift(int *restrict a, const int *restrict b, int n)
{
#pragma c2gpu port
  for (int i = 0; i < n; i++)
    a[i] = b[i] + 1;
}
int main(void)
{
  static int a[1000], b[1000];
  for (int i = 0; i < 1000; i++)
    b[i] = i;
  shift(a, b, 1000);
  return 0;
}
"""


@needs_compilers
def test_threads_that_race_fail_in_reverse_and_shuffled_order(tmp_path):
    """Thread i also clears a[i + 1]: right only when thread i + 1 runs after thread i, as in forward order."""
    path = write_c(tmp_path, RACE)
    race = edit_once(r"(a\[i\] = b\[i\] \+ 1;)", r"\1 if (i + 1 < n) a[i + 1] = 0;")
    assert run_verify(path, orders=("forward",), edit=race).ok
    res = run_verify(path, orders=("shuffle",), edit=race)
    assert not res.ok and res.message.startswith("a (nest shift@4, occurrence 1) differs: element ")
    assert "threads in a shuffled order" in res.message
    res = run_verify(path, edit=race)          # the default runs all three orders
    assert not res.ok and "threads in reverse order" in res.message


@needs_compilers
def test_regions_are_computed_at_nest_entry(tmp_path):
    """A port that leaves n smaller after the call must not shrink the region compared (and hide a[700])."""
    edit = edit_once(r"(?<!void )\b(c2gpu_shift_\d+\([^;]*\);)", r"\1 n = 1; a[700] = 42;")
    res = run_verify(write_c(tmp_path, RACE), edit=edit)
    assert edit.done and not res.ok
    assert res.message.startswith("a (nest shift@4, occurrence 1) differs: element 700 is 42, expected 701")


NEVER_RUNS = """\
void twice(float *x, int n)
{
  for (int i = 0; i < n; i++)
    x[i] *= 2.0f;
}
int main(int argc, char **argv)
{
  static float x[64];
  (void)argv;
  if (argc > 5)
    twice(x, 64);
  twice(x, SIZE);
  return 0;
}
"""


@needs_compilers
def test_nothing_was_checked_fails(tmp_path, capsys):
    path = write_c(tmp_path, NEVER_RUNS)
    # never reached, then reached with an empty loop: nothing was compared either way
    assert main(["verify", str(path), "-D", "SIZE=0"]) == 3
    out = capsys.readouterr().out
    assert "PASS" not in out
    assert f"verify: FAIL: nothing was checked: nest twice@3 ({path}:3) never ran with these inputs" in out
    res = run_verify(path, defines=[("SIZE", "0")])
    assert not res.ok and res.never_ran == ["twice@3"]
    res = run_verify(path, defines=[("SIZE", "8")])
    assert res.ok and res.message.startswith("1 nest checked: ")


@needs_compilers
@pytest.mark.parametrize("source", [
    TESTDATA / "vecadd.c",
    # a reduction whose result lives on after the nest, a triangular nest with its loop variables in the
    # headers, an inner loop variable that nothing reads after the nest (under a condition the host cannot
    # evaluate, so the port does not restore it), and a host time loop around two parallel 2-D nests
    """\
void some_rows(int *restrict a, const int *restrict c, int n)
{
  int i, j;
  for (i = 0; i < n; i++)
    if (c[i] > 0)
      for (j = 0; j < 4; j++)
        a[i * 4 + j] = i;
}
float dot(const float *x, const float *y, int n)
{
  float s = 0.0f;
  for (int i = 0; i < n; i++)
    s += x[i] * y[i];
  return s;
}
#define L 50
void lower(double *m)
{
  for (int i = 0; i < L; i++)
    for (int j = 0; j <= i; j++)
      m[i * L + j] = m[i * L + j] * 0.5 + i - j;
}
#define N 40
static double u[N][N], v[N][N];
int main(void)
{
  float x[300], y[300];
  static double m[50 * 50];
  for (int i = 0; i < 300; i++) { x[i] = i % 7; y[i] = 1.0f / (i + 1); }
  for (int i = 0; i < 50 * 50; i++) m[i] = i % 13;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) u[i][j] = (i * j) % 5;
  for (int t = 0; t < 5; t++) {
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        v[i][j] = 0.25 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]);
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        u[i][j] = v[i][j];
  }
  lower(m);
  static int a[400], c[100];
  for (int i = 0; i < 100; i++) c[i] = i % 3 - 1;
  some_rows(a, c, 100);
  return dot(x, y, 300) > 0.0f ? 0 : 1;
}
"""], ids=["vecadd", "five-nests"])
def test_correct_ports_pass(tmp_path, monkeypatch, source):
    path = source if not isinstance(source, str) else write_c(tmp_path, source)
    monkeypatch.chdir(tmp_path)
    res = run_verify(path, keep="kept")      # relative: the compilers run inside it
    assert res.ok, res.message
    assert (tmp_path / "kept" / "original.c").is_file() and (tmp_path / "kept" / "ported").is_file()
    ported = [o for o in res.outcomes if o.ported]
    assert ported and res.message.startswith(f"{len(ported)} nest{'s' if len(ported) > 1 else ''} checked: ")
    assert "in 3 runs of the port (forward, reverse, shuffle orders)" in res.message
