"""c2gpu's built-in passes (installed as the package `c2gpu.passes`)."""
