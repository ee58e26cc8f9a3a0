"""c2gpu.units: one rule per kind of quantity, and no exponent or `1,000 µs` anywhere."""
from __future__ import annotations

import math

import pytest

from c2gpu import units


@pytest.mark.parametrize("s, text", [
    (None, "–"), (math.nan, "–"), (0, "0 s"), (0.0, "0 s"), (math.inf, "∞ s"),
    (1.74, "1.74 s"), (2.3e-3, "2.3 ms"), (671e-6, "671 µs"), (22.5e-9, "22.5 ns"), (8.54e-10, "0.854 ns"),
    (1e-10, "0.1 ns"), (1e-13, "~0 s"), (-3e-6, "-3 µs"),
    (999.4e-6, "999 µs"), (999.6e-6, "1 ms"), (0.9996, "1 s"), (94.04e-6, "94 µs"),
    (1646.0, "1,646 s"), (3.2e7, "32,000,000 s"),
])
def test_seconds(s, text):
    assert units.seconds(s) == text


@pytest.mark.parametrize("x, text", [
    (None, "–"), (math.nan, "–"), (0, "0x"), (math.inf, "∞x"),
    (0.95, "0.95x"), (0.271, "0.271x"), (4.6419, "4.64x"), (94.0, "94x"), (99.96, "100x"), (257.4, "257x"),
    (999.4, "999x"), (999.6, "1,000x"), (1646.0, "1,646x"), (36600.4, "36,600x"), (1e-5, "0.00001x"),
])
def test_speedup(x, text):
    assert units.speedup(x) == text


@pytest.mark.parametrize("n, text", [
    (None, "–"), (0, "0 B"), (8, "8 B"), (512, "512 B"), (999.6, "1 kB"), (262144, "262 kB"),
    (786432, "786 kB"), (1.05e6, "1.05 MB"), (20480, "20.5 kB"), (3e15, "3 PB"), (5e18, "5,000 PB"),
])
def test_byte_size(n, text):
    assert units.byte_size(n) == text


def test_flops():
    assert units.flop_count(6.55e4) == "65.5 kFLOP" and units.flop_count(3.36e7) == "33.6 MFLOP"
    assert units.flop_rate(19.5e12) == "19.5 TFLOP/s" and units.flop_rate(999.7e9) == "1 TFLOP/s"
    assert units.flop_rate(None) == "–"


def test_no_exponent_and_no_unit_overflow_across_magnitudes():
    # every value from 1e-11 to 1e13 s in small steps: three significant digits never become an
    # exponent, and a prefix is never followed by a number that rounds to 1,000 (`1,000 µs`)
    for k in range(-1100, 1300):
        v = 10 ** (k / 100)
        for text in (units.seconds(v), units.byte_size(v), units.speedup(v), units.flop_rate(v)):
            assert "e+" not in text and "e-" not in text, text
            number, _, unit = text.partition(" ")
            if unit not in ("s", "B", "FLOP/s", ""):
                assert float(number.replace(",", "")) < 1000, text


def test_significant_digits():
    assert [units.significant(v) for v in (0, 1, 9.996, 12.345, 0.0012345, -47.26, 999.5, 123456.7)] == \
        ["0", "1", "10", "12.3", "0.00123", "-47.3", "1,000", "123,457"]
