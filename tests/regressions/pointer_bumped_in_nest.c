/* Regression: `p += 1` (and p++) on a pointer declared outside the nest was invisible to the
 * dependence analysis (pointers are not scalars), so the loop was ported with `p += 1;` in the kernel
 * body and p undeclared there.  Then: flagged pointer-modified, not ported.  Now: p is dead after the
 * loop, so it is a counter (frontend/inductions.py): the kernel reads p[i] and never steps p.
 * expect-exit: 0
 * expect: pointer 'p' moves one element forward per iteration of loop 'i'
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
