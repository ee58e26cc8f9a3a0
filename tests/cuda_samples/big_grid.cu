// (j) timing sanity check: 4096 blocks x 256 threads, trivial kernel.
#include <vector>
#include "check.cuh"

__global__ void iota(unsigned* out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = i * 3u + 1u;
}

int main() {
  const unsigned blocks = 4096, threads = 256, n = blocks * threads;
  unsigned* d;
  CHECK(cudaMalloc(&d, n * sizeof(unsigned)));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  iota<<<blocks, threads>>>(d);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0.0f;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::vector<unsigned> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (unsigned i = 0; i < n; ++i) EXPECT(h[i] == i * 3u + 1u);
  std::printf("OK %.1f ms\n", ms);
  return 0;
}
