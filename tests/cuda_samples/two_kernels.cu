// (h) data stays on the device across many launches: an init kernel, then a
// ping-pong stencil launched 50 times (on a stream, 4-argument launch
// syntax), timed with events; a single copy back at the end.
#include <vector>
#include "check.cuh"

__global__ void init(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = (i * 13) % 1000;
}

__global__ void stencil(const int* __restrict__ cur, int* __restrict__ next, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int l = i > 0 ? cur[i - 1] : 0, r = i + 1 < n ? cur[i + 1] : 0;
  next[i] = (l + 2 * cur[i] + r) % 1000003;
}

int main() {
  const int n = 5000, steps = 50;
  std::vector<int> a(n), b(n);
  for (int i = 0; i < n; ++i) a[i] = (i * 13) % 1000;
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < n; ++i) {
      int l = i > 0 ? a[i - 1] : 0, r = i + 1 < n ? a[i + 1] : 0;
      b[i] = (l + 2 * a[i] + r) % 1000003;
    }
    a.swap(b);
  }
  int *d0, *d1;
  CHECK(cudaMalloc(&d0, n * sizeof(int)));
  CHECK(cudaMalloc(&d1, n * sizeof(int)));
  cudaStream_t stream;
  cudaEvent_t start, stop;
  CHECK(cudaStreamCreate(&stream));
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, stream));
  init<<<(n + 127) / 128, 128, 0, stream>>>(d0, n);
  for (int s = 0; s < steps; ++s) {
    stencil<<<(n + 127) / 128, 128, 0, stream>>>(d0, d1, n);
    int* t = d0;
    d0 = d1;
    d1 = t;
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop, stream));
  CHECK(cudaEventSynchronize(stop));
  float ms = -1.0f;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  EXPECT(ms >= 0.0f);
  std::vector<int> out(n);
  CHECK(cudaMemcpyAsync(out.data(), d0, n * sizeof(int), cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  for (int i = 0; i < n; ++i)
    if (out[i] != a[i]) {
      std::printf("FAIL: out[%d] = %d, expected %d\n", i, out[i], a[i]);
      return 1;
    }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaStreamDestroy(stream));
  std::printf("OK\n");
  return 0;
}
