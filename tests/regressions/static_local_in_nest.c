/* Regression: a `static` variable declared inside the loop body was taken for a per-iteration
 * temporary, so the loop was "proven parallel" and ported, although every iteration updates the
 * same variable (the emitted kernel did not even compile: `? cnt;`).
 * Now: flagged static-local, the loop is not proven parallel and stays on the CPU.
 * expect-exit: 0
 * expect: 'cnt' is declared static inside the nest
 */
float a[100];

void count_calls(int n)
{
    int i;
    for (i = 0; i < n; i++) {
        static int cnt;
        cnt++;
        a[i] = cnt;
    }
}
