/* validation/atax.c - PolyBench/GPU 1.0 atax (CUDA/ATAX/atax.cu): NX = NY =
 * 4096, block 32 x 8 on a 1-D grid of ceil(NX / 32) blocks (the 8 rows of
 * a block compute the same element), each launch followed by a
 * synchronize.  Kernel 1, thread x -> i: tmp[i] = sum over j of A[i][j] *
 * x[j] (a row walk); kernel 2, thread x -> j: y[j] = sum over i of A[i][j] *
 * tmp[i] (a column walk).  Both accumulate into a global element.
 * Exercises: a column-walk reduction on a global element (coalesced across
 * threads); two nests in sequence. Flat float pointers, no restrict. Held
 * back: no measurement in the validation data handed over. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NX
#define NX 4096
#endif
#ifndef NY
#define NY 4096
#endif

void atax(const float *A, const float *x, float *y, float *tmp)
{
    int i, j;
    for (i = 0; i < NX; i++) {
        tmp[i] = 0.0f;
        for (j = 0; j < NY; j++)
            tmp[i] += A[i * NY + j] * x[j];
    }
    for (j = 0; j < NY; j++) {
        y[j] = 0.0f;
        for (i = 0; i < NX; i++)
            y[j] += A[i * NY + j] * tmp[i];
    }
}

int main(void)
{
    float *A = malloc((size_t)NX * NY * sizeof(float));
    float *x = malloc((size_t)NY * sizeof(float));
    float *y = malloc((size_t)NY * sizeof(float));
    float *tmp = malloc((size_t)NX * sizeof(float));
    double sy = 0.0;
    int i, j;

    if (!A || !x || !y || !tmp)
        return 1;
    for (i = 0; i < NX; i++)
        for (j = 0; j < NY; j++)
            A[i * NY + j] = ((float)i * j) / NX;
    for (j = 0; j < NY; j++)
        x[j] = j * 3.14159f;

    atax(A, x, y, tmp);

    for (j = 0; j < NY; j++)
        sy += y[j];
    printf("validation/atax: y checksum = %.6f\n", sy);

    free(A); free(x); free(y); free(tmp);
    return 0;
}
