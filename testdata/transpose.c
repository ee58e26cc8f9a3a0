/* transpose.c - naive out-of-place matrix transpose, out[j][i] = in[i][j]
 * (seed: the naive transpose kernel, Resios thesis Listing 7.1).
 * Exercises: a fully parallel 2-D nest on a non-square ROWS x COLS matrix
 * where the write is strided (column access) while the read is contiguous:
 * the classic uncoalesced-store case. */
#include <stdio.h>

#ifndef ROWS
#define ROWS 300
#endif
#ifndef COLS
#define COLS 200
#endif

static float in[ROWS][COLS];
static float out[COLS][ROWS];

void transpose(void)
{
    int i, j;
    for (i = 0; i < ROWS; i++)
        for (j = 0; j < COLS; j++)
            out[j][i] = in[i][j];
}

int main(void)
{
    double sum = 0.0;
    int i, j;

    for (i = 0; i < ROWS; i++)
        for (j = 0; j < COLS; j++)
            in[i][j] = (float)((i * 7 + j * 3) % 17) / 17.0f;

    transpose();

    /* weight by position so a wrong orientation changes the checksum */
    for (j = 0; j < COLS; j++)
        for (i = 0; i < ROWS; i++)
            sum += out[j][i] * (float)((j + 2 * i) % 5);
    printf("transpose: out checksum = %.6f\n", sum);
    return 0;
}
