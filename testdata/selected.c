/* selected.c - c2gpu nest-selection pragmas.
 * "#pragma c2gpu port" on the line right before a for nest marks it; when
 * any nest in the file is marked, only marked nests are candidates.
 * "#pragma c2gpu skip" right before a for nest excludes it.
 * Expected: only the nest in scale_rows is a candidate; the nest in
 * add_bias is skipped, and the unmarked nest in square is not selected
 * (because another nest is marked port), though it is parallel.
 * gcc -Wall warns about unknown pragmas: build with -Wno-unknown-pragmas. */
#include <stdio.h>

#ifndef N
#define N 512
#endif

static float A[N][N], B[N][N], C[N][N];

void scale_rows(void)
{
    int i, j;
#pragma c2gpu port
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            B[i][j] = A[i][j] * (float)(i + 1);
}

void add_bias(void)
{
    int i, j;
#pragma c2gpu skip
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            B[i][j] += 0.5f;
}

void square(void)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            C[i][j] = B[i][j] * B[i][j];
}

int main(void)
{
    double sb = 0.0, sc = 0.0;
    int i, j;

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            A[i][j] = (float)((i * 7 + j * 3) % 17) / 17.0f;

    scale_rows();
    add_bias();
    square();

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            sb += B[i][j];
            sc += C[i][j];
        }
    printf("selected: B checksum = %.6f, C checksum = %.6f\n", sb, sc);
    return 0;
}
