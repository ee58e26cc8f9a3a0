"""One way to run another program (compilers, the preprocessor, the user's program and its port).

No shell: an argument list.  The child starts in a session, and so a process group, of its own; at its
time limit (or when its output passes `max_output`) the whole group gets SIGKILL, so what it started goes
too (cc -> cc1, as, ld; nvcc -> its host compiler; a ported nest that forks and spins).  When it ends by
itself, whatever it left running in its group is killed as well: nothing outlives the call.

Output goes to temporary files, not pipes: a grandchild holding a pipe open cannot keep the call waiting,
and a runaway output fills a file whose size is checked, not our memory.  Standard input is empty unless
`input` is given (a program waiting for a terminal would only run into its time limit).
"""
from __future__ import annotations

import os
import resource
import select
import signal
import subprocess
import tempfile
import time
from typing import Mapping, Sequence
from ..records import dataclass

POLL_S = 0.05      # how often the output bound is checked while the child runs

_OWN: dict[str, str] = {}      # what c2gpu set in its own environment for itself: name -> value


def set_for_c2gpu(name: str, value: str) -> None:
    """Set the environment variable `name` for c2gpu's own process (and the libraries it loads after this)
    unless the user set it; the programs c2gpu runs for the user get user_environment(), without it."""
    if name not in os.environ:
        os.environ[name] = value
        _OWN[name] = value


def user_environment(**extra: str) -> dict[str, str]:
    """The environment c2gpu was started with (without what set_for_c2gpu added), plus `extra`: the user's
    program, timed or verified, runs as the user would run it."""
    env = {k: v for k, v in os.environ.items() if _OWN.get(k) != v}
    env.update(extra)
    return env


@dataclass(frozen=True)
class Completed:
    """How a program run ended: its exit status, its captured output, and whether it was stopped."""
    argv: tuple[str, ...]
    returncode: int | None        # None when it was stopped (time limit or output bound); -N: killed by signal N
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    output_exceeded: bool = False   # standard output passed max_output (stdout is cut there)

    @property
    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")


def run(argv: Sequence[str], *, timeout: float, cwd: str | os.PathLike | None = None,
        env: Mapping[str, str] | None = None, input: bytes | None = None, keep_stdout: bool = True,
        max_output: int | None = None, memory_limit: int | None = None) -> Completed:
    """Run `argv` to completion or to `timeout` seconds, whichever comes first.

    keep_stdout=False discards standard output (a timed program's).  max_output bounds standard output: past
    it the run is stopped, and `stdout` holds its first max_output bytes.  memory_limit bounds the address
    space of the child and of what it starts (RLIMIT_AS).  Raises OSError when the program cannot be started.
    """
    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout, tempfile.TemporaryFile() as ferr:
        if input is not None:
            fin.write(input)
            fin.seek(0)
        proc = subprocess.Popen(list(argv), cwd=cwd, env=None if env is None else dict(env),
                                stdin=fin if input is not None else subprocess.DEVNULL,
                                stdout=fout if keep_stdout else subprocess.DEVNULL, stderr=ferr,
                                start_new_session=True, preexec_fn=_address_space_limit(memory_limit))
        timed_out = exceeded = False
        deadline = time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if _exited(proc, max(0.0, min(left, POLL_S) if max_output is not None else left)):
                    break
                if max_output is not None and os.fstat(fout.fileno()).st_size > max_output:
                    exceeded = True
                    break
                if time.monotonic() >= deadline:
                    timed_out = True
                    break
        finally:
            kill_group(proc)
        stopped = timed_out or exceeded
        # it may also have passed the bound between the last check and its exit
        exceeded = exceeded or (max_output is not None and os.fstat(fout.fileno()).st_size > max_output)
        fout.seek(0)
        ferr.seek(0)
        return Completed(tuple(argv), None if stopped else proc.returncode, fout.read(max_output), ferr.read(),
                         timed_out, exceeded)


def _exited(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait up to `timeout` seconds for `proc` to end; whether it did.  Through a pidfd where the system has
    them, woken when the child exits: Popen.wait(timeout) polls with sleeps of up to 50 ms, and every
    compiler call waited half of that on average after the compiler was done."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):      # not Linux 5.3+: Popen's own polling
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        ready = select.select([fd], [], [], timeout)[0]
    finally:
        os.close(fd)
    if ready:
        proc.wait()
    return bool(ready)


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the process group `proc` leads (it was started with start_new_session), then reap `proc`."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass                        # the group is gone already
    proc.wait()


def _address_space_limit(limit: int | None):
    """A preexec_fn setting RLIMIT_AS (inherited by what the child starts), or None."""
    if limit is None:
        return None

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply
