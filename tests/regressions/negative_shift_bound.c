/* Regression: `n << -1` (undefined in C) was folded as n * 2^-1 = n/2, a fractional coefficient that
 * reached the emitted code as floord(n, 2).  A shift by a negative or too wide amount is now not affine.
 * expect-exit: 0
 * expect: shift 'n << (-1)'
 */
float a[100];

void half(int n)
{
    int i;
    for (i = 0; i < (n << -1); i++)
        a[i] = 1.0f;
}
