"""`Options`: everything one analysis needs, checked once, frozen.

The command line builds it from its arguments (c2gpu/drivers/cli.py), the Python API from keyword arguments
(c2gpu/drivers/api.py); the driver (c2gpu/drivers/driver.py) runs it.  A bad value raises `OptionsError` with a message for
the user, naming the option as it is written on the command line: the command line prints it as
`c2gpu: error: ...` (exit 2), the API raises it (a ValueError).
"""
from __future__ import annotations

from typing import Iterable, Mapping

from ..diagnostics import CODES, C2GPUError
from ..frontend import PreprocessOptions
from ..frontend.preprocess import parse_define
from ..records import dataclass


class OptionsError(ValueError):
    """A bad option; the message is for the user."""


@dataclass(frozen=True)
class Options:
    """Everything one analysis needs, from the command line or the Python API: preprocessing, the pipeline,
    the prediction, the mapping and shared memory, the CPU baseline and the reports."""
    # preprocessing, as for cc
    defines: tuple[tuple[str, str | None], ...] = ()
    include_dirs: tuple[str, ...] = ()
    cpp: str | None = None
    # the pipeline: a name of c2gpu.pipeline.PIPELINES, or an explicit pass list (--passes) that overrides it;
    # with a GPU the performance pass is added (pipeline.with_performance)
    pipeline: str = "port"
    passes: tuple[str, ...] | None = None
    # the prediction: the GPU description (loaded once), models, sizes
    gpu: object = None
    models: tuple[str, ...] | None = None          # None: every model, the validated default marked
    params: tuple[tuple[str, int], ...] = ()
    include_context: bool = False
    registers: str = "auto"                        # "auto", "ptxas" or "estimate"
    # the mapping and shared memory
    assume_no_alias: bool = False
    exact_fp: bool = False                         # floating-point sums keep C's order (no reduction across threads)
    map: tuple[str, ...] | None = None             # the loops to map to the grid (--map)
    map_host: tuple[str, ...] = ()                 # the parallel loops to keep on the host (--map host:NAME)
    block: tuple | None = None                     # parse_block: one shape for all kernels, or (kernel, shape) pairs
    shared_memory: str = "auto"                    # "auto" or "off"
    shared_budget: int | None = None
    shared_force: tuple[str, ...] = ()
    shared_exclude: tuple[str, ...] = ()
    # the CPU baseline and the verdict
    run_cpu: bool = True
    cc: str = "cc"
    cflags: tuple[str, ...] = ("-O2",)
    runs: int = 3
    timeout: float = 60.0                          # seconds for each compile and run of the CPU baseline
    extra_sources: tuple[str, ...] = ()            # the program's other C files, linked into the timed build
    break_even: bool = True
    break_even_param: str | None = None
    targets: tuple[float, ...] = ()                # speedups to find sizes for, besides 1x
    # diagnostics of the pass manager (stderr)
    print_after: tuple[str, ...] = ()
    timings: bool = False
    # diagnostic codes the reports leave out (c2gpu.diagnostics.CODES)
    silenced: tuple[str, ...] = ()

    def __post_init__(self):
        if self.runs < 1:
            raise OptionsError(f"--runs {self.runs}: the CPU baseline needs at least one run")
        if not self.timeout > 0:
            raise OptionsError(f"--timeout {self.timeout:g}: expected a number of seconds > 0")
        if self.shared_budget is not None and self.shared_budget < 0:
            raise OptionsError("--shared-budget must be a number of bytes >= 0")
        unknown = sorted(set(self.silenced) - CODES.keys())
        if unknown:
            raise OptionsError(f"--silence {unknown[0]}: not a diagnostic code (`c2gpu codes` lists them)")

    @property
    def preprocess(self) -> PreprocessOptions:
        return PreprocessOptions(defines=self.defines, include_dirs=self.include_dirs, cpp=self.cpp,
                                 program_files=self.extra_sources)

    def pass_options(self) -> dict:
        """The options the passes read (PassManager options)."""
        opts: dict = {"assume_no_alias": self.assume_no_alias, "shared_memory": self.shared_memory}
        if self.exact_fp:
            opts["exact_fp"] = True
        if self.shared_budget is not None:
            opts["shared_budget"] = self.shared_budget
        if self.shared_force:
            opts["shared_force"] = self.shared_force
        if self.shared_exclude:
            opts["shared_exclude"] = self.shared_exclude
        if self.map is not None:
            opts["map"] = list(self.map)
        if self.map_host:
            opts["map_host"] = list(self.map_host)
        if self.block is not None:
            opts["block"] = self.block
        if self.gpu is not None:
            opts.update({"gpu": self.gpu, "params": dict(self.params), "include_context": self.include_context,
                         "registers": self.registers, "models": None if self.models is None else list(self.models)})
        return opts


def parse_defines(defines: Mapping[str, object] | Iterable[str] | None) -> tuple[tuple[str, str | None], ...]:
    """Macros as for -D: {"N": 512} or ["N=512", "DEBUG"]."""
    if isinstance(defines, Mapping):
        items = [f"{k}={v}" if v is not None else str(k) for k, v in defines.items()]
    else:
        items = [str(d) for d in (defines or [])]
    try:
        return tuple(parse_define(d) for d in items)
    except C2GPUError as e:
        raise OptionsError(e.message) from None


def parse_params(items: Iterable[str]) -> tuple[tuple[str, int], ...]:
    """Values of symbolic sizes, each "NAME=INTEGER"."""
    out = {}
    for item in items or []:
        name, eq, value = item.partition("=")
        try:
            if not eq or not name.strip().isidentifier():
                raise ValueError
            out[name.strip()] = int(value.strip(), 0)
        except ValueError:
            raise OptionsError(f"--param '{item}': expected NAME=INTEGER, e.g. --param n=2048") from None
    return tuple(out.items())


MAP_HELP = ("the kernel structure, loops as named in the C code: I,J maps those loops to the thread grid (a "
            "parallel loop outside them stays on the host with a launch per iteration, loops inside them run in each "
            "thread); host:R,grid:Q,P says both (a prefix applies to the names after it). Default: with --gpu, the "
            "structure predicted fastest of the legal ones (analyze --details shows the table); else the rules")
BLOCK_HELP = ("thread block shape: 32x8 for every kernel, or per kernel k0=32x8,k1=256 (kN: the nest's kernel N, "
              "or a kernel's full name); default with --gpu: the block-size search's choice")


def parse_map(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """--map: (the loops to map to the grid, the loops to keep on the host), each as named in the C code.
    "i,j" maps i and j; "host:r,grid:q,p" keeps r on the host and maps q and p (a prefix applies to the names
    after it, until the next prefix)."""
    grid: list[str] = []
    host: list[str] = []
    where = grid
    for item in (v.strip() for v in text.split(",")):
        kind, colon, name = item.rpartition(":")
        if colon:
            if kind not in ("grid", "host"):
                raise OptionsError(f"--map '{text}': '{kind}:' is not a place (grid: or host:)")
            where = grid if kind == "grid" else host
        if name.strip():
            if not name.strip().isidentifier():
                raise OptionsError(f"--map '{text}': '{name}' is not a loop variable")
            where.append(name.strip())
    if set(grid) & set(host):
        raise OptionsError(f"--map '{text}': a loop cannot be both on the grid and on the host")
    return tuple(grid), tuple(host)


def parse_block(text: str):
    """--block: one thread block shape "BX[xBY[xBZ]]" (at most 1024 threads) for every kernel, or shapes per
    kernel, "KERNEL=SHAPE,..." where KERNEL is a kernel's name or its number in the nest ("k0" names the
    nest's first kernel, c2gpu_<nest>_k0): ((kernel, shape), ...)."""
    if "=" in text:
        out = []
        for item in text.split(","):
            key, _, shape = item.partition("=")
            if not key.strip() or not shape.strip():
                raise OptionsError(f"--block '{text}': expected e.g. 32x8, or k0=32x8,k1=256 for each kernel")
            out.append((key.strip(), _parse_shape(shape.strip())))
        return tuple(out)
    return _parse_shape(text)


def block_for(block, kernel: str) -> tuple[int, ...] | None:
    """The block --block forces on kernel `kernel` (None: the search or the mapping decides)."""
    if not block:
        return None
    if isinstance(block[0], int):
        return tuple(block)
    for key, shape in block:
        if _names(key, kernel):
            return tuple(shape)
    return None


def _names(key: str, kernel: str) -> bool:
    """Whether a --block key names `kernel`: its full name, or its number in the nest (k0)."""
    return key == kernel or kernel.endswith(f"_{key}")


def unmatched_block_keys(block, kernels) -> list[str]:
    """What to say of each per-kernel --block key that names none of `kernels`, the kernels planned for a file
    (a typo would otherwise be ignored)."""
    if not block or isinstance(block[0], int):
        return []
    return [f"--block {key}=...: no kernel of this file is named '{key}' (its kernels: {', '.join(kernels) or 'none'})"
            for key, _ in block if not any(_names(key, k) for k in kernels)]


def check_map_loops(names, program, path: str) -> None:
    """--map (and --map host:) must name loops of the file: a name no nest has is an error (C2GPUError), not a
    refusal of every nest."""
    loops = sorted({lp.source_var for n in program.nests for lp in n.loops()})
    unknown = [x for x in dict.fromkeys(names or ()) if x not in loops]
    if unknown:
        raise C2GPUError(f"--map names {', '.join(repr(x) for x in unknown)}, which no loop nest of {path} has "
                         f"(its loops: {', '.join(loops) or 'none'})")


def planned_kernels(program, manager) -> list[str]:
    """The names of the kernels the plans of `program`'s nests launch."""
    plans = [manager.result("plan", nest) for nest in program.nests]
    return [k.name for plan in plans if plan is not None for k in plan.mapping.kernels()]


def _parse_shape(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(x) for x in text.lower().split("x"))
    except ValueError:
        raise OptionsError(f"--block '{text}': expected e.g. 256 or 32x8") from None
    threads = dims[0] * (dims[1:2] or (1,))[0] * (dims[2:3] or (1,))[0] if dims else 0
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims) or threads > 1024:
        raise OptionsError(f"--block '{text}': 1 to 3 positive sizes with at most 1024 threads in all")
    return dims


def load_gpu_option(key: str):
    """The GPU of --gpu: a catalog key, or a description file.  An unknown key is a bad option; a description
    file that cannot be used is a bad input (its GPUDescriptionError, a C2GPUError, goes on)."""
    # start-up: the GPU catalog costs ~8 ms for commands that never use it (this module is imported by the CLI)
    from ..model.gpu import GPUDescriptionError, load_gpu
    try:
        return load_gpu(key)
    except GPUDescriptionError as e:
        if key.lower().endswith((".toml", ".json")) or "/" in key:
            raise
        raise OptionsError(f"--gpu: {e.message}") from None
