"""deep_call: run a function in a thread with a large stack and a high recursion limit.

Here rather than in c2gpu/frontend/parse.py (which re-exports it) so that the command line can use it for every
command without importing pycparser (`c2gpu gpus` needs none of the frontend).
"""
from __future__ import annotations

import sys
import threading

# In a thread with a large stack far deeper inputs are safe: very long
# expressions (`a + b + ... ` with thousands of terms) recurse ~4 frames per term.
_DEEP_RECURSION_LIMIT = 200_000
_DEEP_STACK_BYTES = 512 << 20


def deep_call(fn, *args, **kwargs):
    """Run fn in a thread with a large stack and a high recursion limit (deeply nested input stays safe).

    Exceptions (KeyboardInterrupt included) are re-raised in the caller.
    """
    result: dict = {}

    def target():
        try:
            result["value"] = fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            result["error"] = e

    old_limit = sys.getrecursionlimit()
    try:
        old_size = threading.stack_size(_DEEP_STACK_BYTES)
    except (ValueError, RuntimeError):  # platform without a settable stack size: run here
        return fn(*args, **kwargs)
    try:
        sys.setrecursionlimit(max(old_limit, _DEEP_RECURSION_LIMIT))
        t = threading.Thread(target=target, name="c2gpu-deep", daemon=True)
        t.start()
    finally:
        threading.stack_size(old_size)
    try:
        while t.is_alive():
            t.join(0.2)
    finally:
        if not t.is_alive():
            sys.setrecursionlimit(old_limit)
    if "error" in result:
        raise result["error"]
    return result.get("value")
