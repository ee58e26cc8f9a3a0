/* while_loop.c - loops that are not canonical for loops.
 * Exercises: (1) a counted while loop (i = 0; while (i < n) { ...; i++; })
 * that normalization could turn into a for loop; (2) a convergence loop
 * whose trip count depends on the data (while (err > tol)) around a
 * Jacobi-style 1-D relaxation; (3) a do..while with a data-dependent exit.
 * Only the inner counted loops are candidates. */
#include <stdio.h>
#include <math.h>

#ifndef N
#define N 1000
#endif

static double a[N], b[N];

void fill(int n)
{
    int i = 0;
    while (i < n) {
        a[i] = (double)((i * 7) % 17) / 17.0;
        i++;
    }
}

int relax(int n, double tol)
{
    double err = tol + 1.0;
    int iters = 0;
    int i;
    while (err > tol) {
        err = 0.0;
        for (i = 1; i < n - 1; i++)
            b[i] = 0.5 * (a[i - 1] + a[i + 1]);
        for (i = 1; i < n - 1; i++) {
            double d = fabs(b[i] - a[i]);
            if (d > err)
                err = d;
            a[i] = b[i];
        }
        iters++;
    }
    return iters;
}

int halvings(double x)
{
    int steps = 0;
    do {
        x = x * 0.5;
        steps++;
    } while (x > 1e-6);
    return steps;
}

int main(void)
{
    double sum = 0.0;
    int iters, steps, i;

    fill(N);
    iters = relax(N, 1e-4);
    steps = halvings(1000.0);

    for (i = 0; i < N; i++)
        sum += a[i];
    printf("while_loop: a checksum = %.6f, relax iterations = %d, halvings = %d\n",
           sum, iters, steps);
    return 0;
}
