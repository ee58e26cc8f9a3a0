/* Regression (found by csmith programs analysed with a GPU): an array declared with an initializer inside a
 * nest (one too large to read as assignments: frontend/initializers.py) is left out of the nest's arrays (the
 * nest is refused for it), and the CPU time estimate looked its dimensions up among them for t[1][2]:
 * "internal error: KeyError: 't'" for the whole file.
 * Now: the nest is refused with its reason, and the other nest is mapped to the grid.
 * args: --gpu h100-sxm --no-run
 * expect-exit: 0
 * expect: its initializer is not analysed
 * expect: parallel -> grid x
 */
float a[100], b[100];

void f(void)
{
    for (int i = 0; i < 100; i++) {
        int t[9][9] = {{0, 0, 0}, {1, 1, 1}};
        a[i] = t[1][2];
    }
    for (int i = 0; i < 100; i++)
        b[i] = 2.0f * i;
}
