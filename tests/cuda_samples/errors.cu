// (g) memcpy round trips and the error API: invalid launch configurations
// must set cudaErrorInvalidConfiguration (and not run the kernel),
// cudaGetLastError resets it, cudaPeekAtLastError does not.
#include <cstring>
#include <vector>
#include "check.cuh"

__constant__ float coeff[4];

__global__ void fill(int* p, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

__global__ void scale_by_coeff(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= coeff[i % 4];
}

int main() {
  const int n = 3000;
  std::vector<int> h(n), back(n);
  for (int i = 0; i < n; ++i) h[i] = i * i - 7;
  int *d1, *d2;
  CHECK(cudaMalloc(&d1, n * sizeof(int)));
  CHECK(cudaMalloc(&d2, n * sizeof(int)));
  CHECK(cudaMemcpy(d1, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d2, d1, n * sizeof(int), cudaMemcpyDeviceToDevice));
  CHECK(cudaMemcpy(back.data(), d2, n * sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT(std::memcmp(back.data(), h.data(), n * sizeof(int)) == 0);
  CHECK(cudaMemset(d2, 0, n * sizeof(int)));
  CHECK(cudaMemcpy(back.data(), d2, n * sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT(back[0] == 0 && back[n - 1] == 0);

  EXPECT(cudaGetLastError() == cudaSuccess);
  fill<<<1, 2048>>>(d1, 42, n);  // more than 1024 threads per block
  EXPECT(cudaPeekAtLastError() == cudaErrorInvalidConfiguration);
  EXPECT(cudaPeekAtLastError() == cudaErrorInvalidConfiguration);  // peek keeps it
  EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration);
  EXPECT(cudaGetLastError() == cudaSuccess);  // get resets it
  fill<<<dim3(2, 2), dim3(32, 32, 2)>>>(d1, 42, n);  // 2048 threads as a 3-D block
  EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration);
  fill<<<0, 128>>>(d1, 42, n);  // empty grid
  EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration);
  EXPECT(std::strcmp(cudaGetErrorString(cudaErrorInvalidConfiguration),
                     "invalid configuration argument") == 0);
  CHECK(cudaMemcpy(back.data(), d1, n * sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT(std::memcmp(back.data(), h.data(), n * sizeof(int)) == 0);  // nothing ran

  fill<<<(n + 1023) / 1024, 1024>>>(d1, 42, n);  // 1024 is fine
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(back.data(), d1, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) EXPECT(back[i] == 42);

  // __constant__ memory via cudaMemcpyToSymbol / FromSymbol
  const float c[4] = {1.0f, -2.0f, 0.5f, 4.0f};
  float c_back[4];
  CHECK(cudaMemcpyToSymbol(coeff, c, sizeof(c)));
  CHECK(cudaMemcpyFromSymbol(c_back, coeff, sizeof(c)));
  EXPECT(std::memcmp(c, c_back, sizeof(c)) == 0);
  std::vector<float> xf(n, 3.0f);
  float* dx;
  CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CHECK(cudaMemcpy(dx, xf.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  scale_by_coeff<<<(n + 127) / 128, 128>>>(dx, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(xf.data(), dx, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) EXPECT(xf[i] == 3.0f * c[i % 4]);

  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  EXPECT(count >= 1);
  EXPECT(cudaSetDevice(1000) == cudaErrorInvalidDevice);
  EXPECT(cudaGetLastError() == cudaErrorInvalidDevice);
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr));
  CHECK(cudaFree(d1));
  CHECK(cudaFree(d2));
  CHECK(cudaFree(dx));
  CHECK(cudaDeviceReset());
  std::printf("OK\n");
  return 0;
}
