/* decrementing.c - loop shapes for the normalization pass.
 * Exercises: a decrementing loop (i = N-1 .. 0, i--), an inclusive <= bound,
 * a non-unit step (i += 4 from 3), a step of i -= 2, a triangular nest whose
 * inner bound depends on the outer index (j = i+1 .. N-1), and guarded
 * statements (if (i % 2 == 0), if (j > i)) inside nests. All loops are
 * parallel; only their shapes differ. */
#include <stdio.h>

#ifndef N
#define N 1000
#endif

static float a[N], b[N], c[N], d[N], e[N];
static float U[N][N], G[N][N];

void shapes_1d(void)
{
    int i;
    for (i = N - 1; i >= 0; i--)
        a[i] = 2.0f * (float)i + 1.0f;
    for (i = 0; i <= N - 1; i++)
        b[i] = a[i] * 0.5f;
    for (i = 3; i < N; i += 4)
        c[i] = b[i] + a[i];
    for (i = N - 1; i > 0; i -= 2)
        d[i] = b[i] - 1.0f;
}

void upper_triangle(void)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = i + 1; j < N; j++)
            U[i][j] = a[i] * b[j];
}

void guarded(void)
{
    int i, j;
    for (i = 0; i < N; i++) {
        if (i % 2 == 0)
            e[i] = a[i];
        for (j = 0; j < N; j++)
            if (j > i)
                G[i][j] = (float)(i - j);
            else
                G[i][j] = b[j];
    }
}

int main(void)
{
    double s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int i, j;

    shapes_1d();
    upper_triangle();
    guarded();

    for (i = 0; i < N; i++)
        s1 += a[i] + b[i] + c[i] + d[i] + e[i];
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            s2 += U[i][j];
            s3 += G[i][j];
        }
    printf("decrementing: abcde checksum = %.6f, U checksum = %.6f, G checksum = %.6f\n",
           s1, s2, s3);
    return 0;
}
