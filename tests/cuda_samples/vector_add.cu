// (a) grid-stride vector add + a bounds-checked kernel; n is not a multiple
// of the block size and the grid is smaller than n / blockDim.
#include <vector>
#include "check.cuh"

__global__ void vadd(const float* __restrict__ a, const float* __restrict__ b,
                     float* __restrict__ c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    c[i] = a[i] + b[i];
}

__global__ void vscale(float* x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

int main() {
  const int n = 100003;
  std::vector<float> a(n), b(n), c(n + 1);
  for (int i = 0; i < n; ++i) {
    a[i] = 0.5f * i;
    b[i] = 2.0f * i;
  }
  float *da, *db, *dc;
  CHECK(cudaMalloc(&da, n * sizeof(float)));
  CHECK(cudaMalloc(&db, n * sizeof(float)));
  CHECK(cudaMalloc(&dc, (n + 1) * sizeof(float)));  // one guard element
  CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const float sentinel = -12345.0f;
  CHECK(cudaMemcpy(dc + n, &sentinel, sizeof(float), cudaMemcpyHostToDevice));

  vadd<<<64, 256>>>(da, db, dc, n);  // 16384 threads stride over 100003 elements
  CHECK(cudaGetLastError());
  vscale<<<(n + 255) / 256, 256>>>(dc, 2.0f, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(c.data(), dc, (n + 1) * sizeof(float), cudaMemcpyDeviceToHost));

  for (int i = 0; i < n; ++i)
    if (c[i] != 5.0f * i) {
      std::printf("FAIL: c[%d] = %f, expected %f\n", i, c[i], 5.0f * i);
      return 1;
    }
  EXPECT(c[n] == sentinel);  // nobody wrote past the end
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  std::printf("OK\n");
  return 0;
}
