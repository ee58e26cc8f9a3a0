"""The GPU catalog: one description file per GPU (*.toml), read by c2gpu.model.gpu.

Package data only; the format is documented in SCHEMA.md next to this file.
"""
