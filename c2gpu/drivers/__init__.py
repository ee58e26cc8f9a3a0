"""The front doors: one driver under the command line, the Python API, `port` and `verify`, with their options,
configuration, cache and subprocess runner."""
