"""The normalize pass: every affine loop rewritten to run from 0 with step 1 (c2gpu/transform/normalize.py)."""
from __future__ import annotations

from c2gpu.ir import Nest
from c2gpu.transform.normalize import normalize_nest
from c2gpu.pipeline import Pass


class NormalizeLoops(Pass):
    name = "normalize"
    description = "rewrite every affine loop to start at 0 with unit step (seed 004, 5.2.1)"
    transforms = True
    preserves = ()

    def run(self, nest: Nest, ctx) -> Nest:
        return normalize_nest(nest)
