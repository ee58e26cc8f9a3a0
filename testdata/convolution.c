/* convolution.c - 2-D convolution of an interleaved RGB image with a small
 * FILTER_SIZE x FILTER_SIZE filter (modeled on Resios thesis Listing 7.2,
 * where the filter and an input tile go to shared memory).
 * Exercises: a 5-deep nest (y, x, c parallel; fy, fx reduction), a 3-D
 * array with a small innermost dimension, stencil-like overlapping reads
 * img[y+fy-R][x+fx-R][c] (data reuse between neighbouring threads), a
 * small read-only filter array, and an interior-only iteration range. */
#include <stdio.h>

#ifndef H
#define H 512
#endif
#ifndef W
#define W 512
#endif
#ifndef FILTER_SIZE
#define FILTER_SIZE 5
#endif
#define R (FILTER_SIZE / 2)

static float img[H][W][3];
static float out[H][W][3];
static float filter[FILTER_SIZE][FILTER_SIZE];

void convolve(void)
{
    int y, x, c, fy, fx;
    for (y = R; y < H - R; y++)
        for (x = R; x < W - R; x++)
            for (c = 0; c < 3; c++) {
                float acc = 0.0f;
                for (fy = 0; fy < FILTER_SIZE; fy++)
                    for (fx = 0; fx < FILTER_SIZE; fx++)
                        acc += filter[fy][fx] * img[y + fy - R][x + fx - R][c];
                out[y][x][c] = acc;
            }
}

int main(void)
{
    double sum[3] = {0.0, 0.0, 0.0};
    float fsum = 0.0f;
    int y, x, c, i, j;

    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++)
            for (c = 0; c < 3; c++)
                img[y][x][c] = (float)((y * 7 + x * 3 + c * 5) % 17) / 17.0f;
    for (i = 0; i < FILTER_SIZE; i++)
        for (j = 0; j < FILTER_SIZE; j++) {
            filter[i][j] = (float)(1 + (i + j) % 3);
            fsum += filter[i][j];
        }
    for (i = 0; i < FILTER_SIZE; i++)
        for (j = 0; j < FILTER_SIZE; j++)
            filter[i][j] /= fsum;

    convolve();

    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++)
            for (c = 0; c < 3; c++)
                sum[c] += out[y][x][c];
    printf("convolution: out checksum R=%.6f G=%.6f B=%.6f\n",
           sum[0], sum[1], sum[2]);
    return 0;
}
