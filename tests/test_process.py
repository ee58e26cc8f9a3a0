"""c2gpu.drivers.process.run: output and status of a normal command, and nothing left running after a time limit."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from c2gpu.drivers.process import run


def _dead(pid: int) -> bool:
    """No such pid, or a zombie waiting for its new parent to reap it."""
    try:
        os.kill(pid, 0)
        # the state follows the parenthesised command name: "Z" is a zombie (killed, not yet reaped)
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (ProcessLookupError, FileNotFoundError):
        return True


def _gone(pid: int) -> bool:
    """The process dies: SIGKILL is delivered asynchronously, so it may take a moment after run returns
    (a sleeper that was not killed would still be there after these 10 s)."""
    for _ in range(200):
        if _dead(pid):
            return True
        time.sleep(0.05)
    return False


def _grandchild(tmp_path: Path) -> int:
    return int((tmp_path / "grandchild.pid").read_text())


def test_normal_command_returns_its_output_and_status():
    r = run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=60)
    assert (r.returncode, r.stdout, r.stderr, r.timed_out, r.output_exceeded) == (3, b"out\n", b"err\n", False, False)
    assert r.stdout_text == "out\n" and r.argv[0] == "sh"


def test_input_cwd_and_env_reach_the_child(tmp_path):
    r = run(["sh", "-c", 'cat; pwd; echo "$C2GPU_TEST_VAR"'], timeout=60, input=b"in\n", cwd=tmp_path,
            env=dict(os.environ, C2GPU_TEST_VAR="x1"))
    assert r.returncode == 0 and r.stdout_text.splitlines() == ["in", str(tmp_path.resolve()), "x1"]


def test_stdin_is_empty_without_input():
    r = run(["sh", "-c", "cat; echo done"], timeout=60)
    assert r.returncode == 0 and r.stdout == b"done\n"


def test_time_limit_kills_the_child_and_what_it_started(tmp_path):
    # the child starts a grandchild that sleeps for ever, then waits for it: only the group kill ends both
    r = run(["sh", "-c", "sleep 1000 & echo $! > grandchild.pid; wait"], timeout=1, cwd=tmp_path)
    assert r.timed_out and r.returncode is None
    assert _gone(_grandchild(tmp_path))


def test_what_a_finished_child_left_running_is_killed(tmp_path):
    # the grandchild keeps stdout open: with pipes the call would wait for it until the time limit
    r = run(["sh", "-c", "sleep 1000 & echo $! > grandchild.pid; echo started"], timeout=60, cwd=tmp_path)
    assert (r.returncode, r.stdout, r.timed_out) == (0, b"started\n", False)
    assert _gone(_grandchild(tmp_path))


def test_output_bound_stops_a_runaway_writer():
    r = run([sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('x' * 65536)"], timeout=60,
            max_output=1 << 20)
    assert r.output_exceeded and not r.timed_out and r.returncode is None and len(r.stdout) == 1 << 20


def test_discarded_stdout_and_a_signal_exit():
    r = run([sys.executable, "-c", "import os, signal\nprint('x' * 1000)\nos.kill(os.getpid(), signal.SIGABRT)"],
            timeout=60, keep_stdout=False)
    assert r.stdout == b"" and r.returncode == -6


def test_memory_limit_applies_to_the_child():
    r = run([sys.executable, "-c", "b = bytearray(1 << 31)"], timeout=60, memory_limit=1 << 30)
    assert r.returncode != 0 and b"MemoryError" in r.stderr


def test_a_missing_program_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        run([str(tmp_path / "no-such-program")], timeout=60)


def test_what_c2gpu_sets_for_itself_is_not_passed_to_the_user_s_program(monkeypatch):
    from c2gpu.drivers import process
    monkeypatch.setattr(process, "_OWN", {})
    monkeypatch.delenv("C2GPU_TEST_OWN", raising=False)
    monkeypatch.setenv("C2GPU_TEST_USER", "7")
    process.set_for_c2gpu("C2GPU_TEST_OWN", "1")           # unset: c2gpu's value, for c2gpu only
    process.set_for_c2gpu("C2GPU_TEST_USER", "1")          # the user's value wins
    assert os.environ["C2GPU_TEST_OWN"] == "1" and os.environ["C2GPU_TEST_USER"] == "7"
    env = process.user_environment(EXTRA="x")
    assert "C2GPU_TEST_OWN" not in env and env["C2GPU_TEST_USER"] == "7" and env["EXTRA"] == "x"
    out = run([sys.executable, "-c", "import os; print(os.environ.get('C2GPU_TEST_OWN'))"], timeout=60,
              env=env)
    assert out.stdout_text.strip() == "None"
    monkeypatch.delenv("C2GPU_TEST_OWN")
