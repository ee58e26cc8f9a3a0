"""Every number with a unit that c2gpu prints to a user: one rule for each kind of quantity.

The rule shared by all of them: three significant digits, written out in plain decimals (never an
exponent, trailing zeros dropped: `94x`, `4.64x`, `0.854 ns`), and from 1,000 up whole numbers with
thousands separators (`1,646x`, `2,048 s`).  A value scaled by a unit prefix takes the prefix at which it
reads at least 1 *after rounding*, so 999.6 µs is `1 ms`, never `1,000 µs` or `1e+03 µs`.

- `seconds`: s, ms, µs, ns (`µs`, not `us`); a nonzero time under a picosecond is `~0 s` (no GPU resolves
  it: the models produce it only as rounding noise).
- `speedup`: a ratio with `x`: `0.95x`, `257x`, `1,646x`.
- `byte_size`: decimal prefixes, as bandwidths in GB/s use them: B, kB, MB, GB, TB, PB (`262 kB` for 256 KiB).
- `flop_count` and `flop_rate`: FLOP and FLOP/s with k, M, G, T, P.

A missing value (None, NaN) is `–` in every one of them; an infinite one is `∞` with its unit.
"""
from __future__ import annotations

import math

MISSING = "–"

# (prefix, factor), largest first; a value takes the first prefix at which it rounds to at least 1
_TIME = (("", 1.0), ("m", 1e-3), ("µ", 1e-6), ("n", 1e-9))
_LARGE = (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0))
_ROUNDS_TO_ONE = 0.9995          # the smallest value that three significant digits write as 1
_NOISE_S = 1e-12                 # below a picosecond: rounding noise of the models


def significant(v: float) -> str:
    """`v` with three significant digits in plain decimals; from 1,000 up, whole with separators."""
    if v == 0:
        return "0"
    if abs(v) >= 999.5:
        return f"{v:,.0f}"
    decimals = max(0, 2 - math.floor(math.log10(abs(v))))
    text = f"{v:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _scaled(v: float | None, unit: str, prefixes) -> str:
    if v is None or math.isnan(v):
        return MISSING
    if math.isinf(v):
        return f"{'-' if v < 0 else ''}∞ {unit}"
    if v == 0:
        return f"0 {unit}"
    prefix, factor = next(((p, f) for p, f in prefixes if abs(v) >= f * _ROUNDS_TO_ONE), prefixes[-1])
    return f"{significant(v / factor)} {prefix}{unit}"


def seconds(s: float | None) -> str:
    """A time: `1.74 s`, `2.3 ms`, `671 µs`, `22.5 ns`, `~0 s`."""
    if s is not None and s != 0 and abs(s) < _NOISE_S:
        return "~0 s"
    return _scaled(s, "s", _TIME)


def speedup(x: float | None) -> str:
    """A speedup or slowdown ratio: `0.271x`, `12.3x`, `257x`, `1,646x`."""
    if x is None or math.isnan(x):
        return MISSING
    return "∞x" if math.isinf(x) else f"{significant(x)}x"


def byte_size(n: float | None) -> str:
    """An amount of memory or data: `512 B`, `262 kB`, `1.05 MB`."""
    return _scaled(n, "B", _LARGE)


def flop_count(n: float | None) -> str:
    """Floating-point operations: `65.5 kFLOP`, `33.6 MFLOP`."""
    return _scaled(n, "FLOP", _LARGE)


def flop_rate(per_s: float | None) -> str:
    """Floating-point operations per second: `19.5 TFLOP/s`."""
    return _scaled(per_s, "FLOP/s", _LARGE)
