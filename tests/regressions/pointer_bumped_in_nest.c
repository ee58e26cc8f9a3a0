/* Regression: `p += 1` (and p++) on a pointer declared outside the nest was invisible to the
 * dependence analysis (pointers are not scalars), so the loop was ported with `p += 1;` in the kernel
 * body and p undeclared there.  Now: flagged pointer-modified, not ported.
 * expect-exit: 0
 * expect: pointer 'p' is assigned inside the nest
 */
float a[100];

void walk(int n)
{
    int i;
    float *p = a;
    for (i = 0; i < n; i++) {
        *p = 0.0f;
        p += 1;
    }
}
