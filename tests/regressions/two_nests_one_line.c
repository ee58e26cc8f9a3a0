/* Regression: two nests on one line had the same name (function@line), and names key the pass
 * manager's cache: the second nest silently got the first one's dependence verdicts and mapping (here:
 * the carried prefix sum would have been "parallel"), and the port declared the wrapper twice.
 * Now the second is `scan@14_42` and its own analysis refuses it.
 * expect-exit: 0
 * expect: scan@14_42
 */
float a[100], b[100], c[100];

void scan(int n)
{
    int i;
    /* the two nests below must stay on one line */
    for (i = 0; i < n; i++) a[i] = b[i]; for (i = 1; i < n; i++) c[i] = c[i - 1] + a[i];
}
