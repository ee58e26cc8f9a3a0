/* Regression: a '}' that closes nothing at file scope made pycparser fail an internal
 * assertion (AssertionError in _pop_scope): `c2gpu analyze` crashed with exit 4.
 * Found by tests/test_robustness.py (a syntax error between valid nests).
 * Now: the error is reported where it is and the other function's nest is still analysed.
 * expect-exit: 1
 * expect: stray_brace.c:15:1: error: '}' without a matching '{'
 * expect: good@19
 */
float a[8];

void bad(void)
{
    a[0] = 1.0f;
}
}

void good(void)
{
    for (int i = 0; i < 8; i++)
        a[i] = 2.0f;
}
