"""One truth: what the commands print agree with each other and with what they write.

`port` without flags emits exactly the kernels whose times `analyze` printed (the same default GPU, the same
search): every kernel's name, block shape and shared-memory tiles, for every testdata program and every PolyBench
kernel, through the command line as a user runs it.
"""
import json
import re

import pytest

from c2gpu.cli import main
from conftest import TESTDATA, project_programs

POLYBENCH = TESTDATA / "corpora" / "polybench-c-4.2.1"
FILES = [(p.relative_to(TESTDATA).as_posix(), ()) for p in project_programs()] + [
    (f"corpora/polybench-c-4.2.1/{line}", ("-I", str(POLYBENCH / "utilities")))
    for line in (POLYBENCH / "utilities" / "benchmark_list").read_text().split() if line.endswith(".c")]


def _tiles(texts) -> list[str]:
    """'A [16][32]' of each 'A [16][32] (reuse, 2048 B, ...)'."""
    return sorted(t.split(" (")[0] for t in texts)


@pytest.mark.parametrize("path,flags", FILES, ids=[f for f, _ in FILES])
def test_port_emits_the_kernels_analyze_predicted(path, flags, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("C2GPU_GPU", "")           # the default GPU, as a new user gets it
    monkeypatch.chdir(tmp_path)                   # no c2gpu.toml above the working directory
    src = str(TESTDATA / path)
    main(["analyze", src, *flags, "--no-run", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    predicted = {}
    for nest in doc["files"][0]["nests"]:
        perf = nest.get("performance")
        if perf and perf.get("kernels"):
            predicted[nest["name"]] = [(k["name"], tuple(k["block"]), _tiles(k.get("shared_memory_tiles") or ()))
                                       for k in perf["kernels"]]
    main(["port", src, *flags, "-o", str(tmp_path / "out.cu")])
    log = capsys.readouterr().err
    emitted, current = {}, None
    for line in log.splitlines():
        if m := re.match(r"\S+: note: ported nest (\S+): ", line):
            current = emitted.setdefault(m[1], [])
        elif m := re.match(r"\S+: note: not portable: ", line):
            current = None
        elif current is not None and (m := re.match(r"    (c2gpu_\S+): block (\d+)x(\d+)x(\d+);", line)):
            current.append([m[1], tuple(map(int, m.groups()[1:])), []])
        elif current is not None and (m := re.match(r"    shared memory KEPT: (\S+ \S+) in (\S+) \(", line)):
            next(k for k in current if k[0] == m[2])[2].append(m[1])
    emitted = {n: [(k[0], k[1], sorted(k[2])) for k in ks] for n, ks in emitted.items()}
    predicted = {n: ks for n, ks in predicted.items() if n in emitted}
    assert set(predicted) == set(emitted), (set(predicted) ^ set(emitted), log)
    assert predicted == emitted



# --------------------------------------------------------------------------- no command writes over its input

@pytest.mark.parametrize("argv", [["analyze", "{src}", "-o", "{src}"], ["analyze", "{src}", "--html", "{src}"],
                                  ["check", "{src}", "-o", "{src}"], ["port", "{src}", "-o", "{src}"],
                                  ["emit", "{src}", "-o", "{src}"]])
def test_no_command_overwrites_its_input(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("C2GPU_GPU", "")
    src = tmp_path / "m.c"
    src.write_text((TESTDATA / "saxpy.c").read_text())
    before = src.read_bytes()
    status = main([a.format(src=src) for a in argv] + (["--no-run"] if argv[0] in ("analyze", "check") else []))
    assert status == 2 and src.read_bytes() == before
    assert f"the output '{src}' would overwrite the input file" in capsys.readouterr().err


# --------------------------------------------------------------------------- conditional expressions

FDTD = r"""
float ex[64][64], ey[64][64], hz[64][64], fict[10];
void step(void) {
  for (int t = 0; t < 10; t++) {
    for (int i = 0; i < 64; i++)
      for (int j = 0; j < 64; j++)
        ey[i][j] = (i == 0) ? fict[t] : ey[i][j] - 0.5f * (hz[i][j] - hz[i-1][j]);
    for (int i = 0; i < 63; i++)
      for (int j = 0; j < 63; j++)
        hz[i][j] = hz[i][j] - 0.7f * (ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j]);
  }
}
"""


def test_an_access_in_a_branch_of_a_conditional_expression_is_checked_where_it_is_read(tmp_path):
    # fdtd-2d as testdata/validation's measured CUDA program writes it: hz[i-1][j] is read only where i != 0
    import c2gpu
    nest = c2gpu.analyze(FDTD, name=str(tmp_path / "f.c")).nests[0]
    assert [(lp.var, lp.status) for lp in nest.loops] == [("t", "carried"), ("i", "parallel"), ("j", "parallel"),
                                                          ("i", "parallel"), ("j", "parallel")], nest.loops
    assert nest.ported, nest.refusal
    # and where the read is not guarded, it is still found
    worse = c2gpu.analyze(FDTD.replace("(i == 0) ?", "(j == 0) ?"), name=str(tmp_path / "g.c")).nests[0]
    assert "hz[i - 1][j] (line 7): subscript 1 can be -1, outside [0, 64)" in worse.loops[1].reason
