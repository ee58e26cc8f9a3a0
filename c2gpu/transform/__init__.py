"""Transformations of a nest: normalization, a kernel's view after distribution and interchange, isl's scheduler,
wavefronts."""
