/* Regression: `{ int i = 3; a[i] = 1; }` inside a loop over i: the subscript names the inner i (always
 * element 3), but c2gpu read it as the loop variable, found the loop parallel and ported it with
 * "a: written in full, not read: no copy-in", so the copy-out overwrote a[0..n) with garbage.
 * Now: flagged shadows-loop-variable, not ported.
 * expect-exit: 0
 * expect: 'i' declared inside the nest hides the loop variable
 */
float a[100];

void shadow(int n)
{
    int i;
    for (i = 0; i < n; i++) {
        int i = 3;
        a[i] = 1.0f;
    }
}
