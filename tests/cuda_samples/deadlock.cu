// Barrier misuse that can never complete: half of each warp waits in
// __syncwarp() for the other half, which waits in __syncthreads().  The
// emulator must report it and exit non-zero instead of hanging.
#include "check.cuh"

__global__ void bad(int* out) {
  if (threadIdx.x % 32 < 16) __syncwarp();
  else __syncthreads();
  out[threadIdx.x] = 1;
}

int main() {
  int* d;
  CHECK(cudaMalloc(&d, 64 * sizeof(int)));
  bad<<<1, 64>>>(d);
  CHECK(cudaDeviceSynchronize());
  std::printf("returned\n");
  return 0;
}
