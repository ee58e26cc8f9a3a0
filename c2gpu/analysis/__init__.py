"""Analyses the passes share: the IR as isl sets, instance counts, subscripts that leave their array."""
