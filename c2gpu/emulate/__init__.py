"""CPU execution layer for emitted CUDA.

``compile_for_cpu(cu, exe)`` rewrites a CUDA program (kernel launches,
``extern __shared__``) and compiles it with g++ against ``cuda_emu.h``; the
resulting executable runs the kernels on the CPU with CUDA semantics:

* blocks are distributed over a pool of OS threads (``C2GPU_EMU_THREADS``,
  default: number of CPUs); one block runs on one OS thread at a time;
* the threads of a block are cooperative fibers on that OS thread, switched
  only at ``__syncthreads()`` / warp collectives, so ``__shared__`` (mapped to
  ``static thread_local``) is shared by exactly the threads of one block;
* threads that return early drop out of all later barriers;
* barriers that can never be released abort the program with a message;
* ``C2GPU_EMU_ORDER=forward|reverse|shuffle`` chooses the order in which the
  blocks are taken and a block's threads run (``shuffle``: a permutation per
  launch and block drawn from ``C2GPU_EMU_SEED``, the same on every run);
  reverse and shuffle change the outcome of most races (missing
  ``__syncthreads()``, loops wrongly run in parallel); with
  ``C2GPU_EMU_THREADS=1`` the block order is exactly the chosen one;
* fresh device memory is filled with a poison byte (``C2GPU_EMU_POISON``,
  default 0xFF: NaN / -1), so a missing copy-in shows up; cudaMemcpy checks
  device ranges against the allocations, and with
  ``extra_flags=["-fsanitize=address"]`` overruns of device buffers and of the
  launch's dynamic shared memory are reported at the kernel's source line.

See the comment at the top of ``cuda_emu.h`` for the limitations.
"""

from .build import (
    CompileResult,
    CompilerNotFoundError,
    compile_for_cpu,
    header_path,
    mask_comments_and_strings,
    rewrite_launches,
    rewrite_source,
)

__all__ = [
    "CompileResult",
    "CompilerNotFoundError",
    "compile_for_cpu",
    "header_path",
    "mask_comments_and_strings",
    "rewrite_launches",
    "rewrite_source",
]
