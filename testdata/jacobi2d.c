/* jacobi2d.c - Jacobi 2-D 5-point stencil with a time loop.
 * Exercises: a sequential outer time loop t around two parallel 2-D nests
 * (compute B from A, then copy B back to A); the dependence between the
 * two nests and across time steps; interior bounds 1 .. N-2. */
#include <stdio.h>

#ifndef N
#define N 512
#endif
#ifndef TSTEPS
#define TSTEPS 20
#endif

static float A[N][N], B[N][N];

void jacobi2d(void)
{
    int t, i, j;
    for (t = 0; t < TSTEPS; t++) {
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                B[i][j] = 0.2f * (A[i][j] + A[i][j - 1] + A[i][j + 1]
                                  + A[i + 1][j] + A[i - 1][j]);
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                A[i][j] = B[i][j];
    }
}

int main(void)
{
    double sa = 0.0, sb = 0.0;
    int i, j;

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            A[i][j] = (float)((i * 7 + j * 3) % 17) / 17.0f;
            B[i][j] = 0.0f;
        }

    jacobi2d();

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            sa += A[i][j];
            sb += B[i][j];
        }
    printf("jacobi2d: A checksum = %.6f, B checksum = %.6f\n", sa, sb);
    return 0;
}
