"""CUDA code generation from a finalized plan (c2gpu/planning/plan.py).

arrays   array plans: each array's device allocation and what is copied in and out (and why)
kernel   one kernel per plan Kernel: thread indices, guards, the body printed from the C AST
tiled    the same kernel with shared-memory tiles staged by the whole block (seed 004, section 6.1)
wrapper  the host wrapper around a nest's kernels and the call that replaces the nest; a candidate plan's
         layout (what the code would be, refusals included, without printing it) for the search
splice   the user's file with the calls spliced in (whole file, split .cu + .c, or kernels only)
"""
from .arrays import ArrayPlan
from .kernel import CodegenError, KernelCode
from .precompiled import templates
from .splice import emit_header, emit_kernels, escape_c_string, host_not_cxx, render_port, render_split, splice
from .wrapper import (NestCode, build_nest_code, declared_in_nest, loop_finals, nest_layout, nonempty_condition,
                      rename_cxx_keywords)

__all__ = ["ArrayPlan", "CodegenError", "KernelCode", "NestCode", "build_nest_code",
           "declared_in_nest", "emit_header", "emit_kernels", "escape_c_string", "host_not_cxx", "loop_finals",
           "nest_layout", "nonempty_condition", "rename_cxx_keywords", "render_port", "render_split", "splice",
           "templates"]
