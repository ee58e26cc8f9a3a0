/* matmul.c - dense matrix multiplication C = A * B on static global arrays.
 * The headline example (c2gpu analyze testdata/matmul.c).
 * Exercises: a perfect-ish i, j, k nest with 2-D global arrays; i and j are
 * parallel, k carries the C[i][j] += reduction; affine subscripts only. */
#include <stdio.h>

#ifndef N
#define N 256
#endif

static float A[N][N], B[N][N], C[N][N];

void matmul(void)
{
    int i, j, k;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            C[i][j] = 0;
            for (k = 0; k < N; k++)
                C[i][j] += A[i][k] * B[k][j];
        }
}

int main(void)
{
    double sum = 0.0;
    int i, j;

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            A[i][j] = (float)((i * 7 + j * 3) % 17) / 17.0f;
            B[i][j] = (float)((i * 5 + j * 11) % 13) / 13.0f;
        }

    matmul();

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            sum += C[i][j];
    printf("matmul: C checksum = %.6f\n", sum);
    return 0;
}
