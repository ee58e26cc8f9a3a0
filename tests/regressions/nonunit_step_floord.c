/* Regression: a loop with a non-unit step and a symbolic bound (i += 3, i < n) has the trip count
 * floor((n - 1) / 3) + 1, which isl prints as `floord(n - 1, 3) + 1`; the emitted launch used `floord`,
 * which no C or CUDA header defines, so the ported file did not compile.
 * Found by adversarial inputs for tests/test_robustness.py.  Now the division is plain C.
 * expect-exit: 0
 */
void every_third(float *restrict a, int n)
{
    int i;
    for (i = 0; i < n; i += 3)
        a[i] = 2.0f * a[i];
}

void down_by_seven(float *restrict a, int n)
{
    int i;
    for (i = n; i > 5; i -= 7)
        a[i] = a[i] + 1.0f;
}
