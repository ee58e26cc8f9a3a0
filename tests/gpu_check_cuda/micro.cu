// The GPU constants c2gpu's catalog takes from measurements (tests/gpu_check.py prints them beside the
// catalog's values): launches back to back, a launch with its synchronize, host-device copies of pageable
// memory (what a port's wrappers copy), and a device-to-device copy kernel's bandwidth.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t e = (call);                                                          \
    if (e != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

__global__ void empty_kernel() {}

__global__ void copy_kernel(const double *__restrict__ in, double *__restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    out[i] = in[i];
}

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  CHECK(cudaFree(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s\n", prop.name);
  std::printf("sms %d\n", prop.multiProcessorCount);
  const int launches = 10000;
  std::vector<double> b2b, sync;
  for (int rep = 0; rep < 5; rep++) {
    double t = now();
    for (int i = 0; i < launches; i++) empty_kernel<<<1, 32>>>();
    CHECK(cudaDeviceSynchronize());
    b2b.push_back((now() - t) / launches * 1e6);
    t = now();
    for (int i = 0; i < 1000; i++) {
      empty_kernel<<<1, 32>>>();
      CHECK(cudaDeviceSynchronize());
    }
    sync.push_back((now() - t) / 1000 * 1e6);
  }
  std::printf("launch_back_to_back_us %.3f\n", median(b2b));
  std::printf("launch_sync_us %.3f\n", median(sync));

  const size_t bytes = (size_t)256 << 20;
  char *host = (char *)std::malloc(bytes);
  std::memset(host, 1, bytes);
  double *a, *b;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  std::vector<double> h2d, d2h, small, alloc, dram;
  for (int rep = 0; rep < 5; rep++) {
    double t = now();
    CHECK(cudaMemcpy(a, host, bytes, cudaMemcpyHostToDevice));
    h2d.push_back(bytes / (now() - t) / 1e9);
    t = now();
    CHECK(cudaMemcpy(host, a, bytes, cudaMemcpyDeviceToHost));
    d2h.push_back(bytes / (now() - t) / 1e9);
    t = now();
    for (int i = 0; i < 100; i++) CHECK(cudaMemcpy(a, host, 8, cudaMemcpyHostToDevice));
    small.push_back((now() - t) / 100 * 1e6);
    t = now();
    for (int i = 0; i < 100; i++) {
      double *p;
      CHECK(cudaMalloc(&p, 1 << 20));
      CHECK(cudaFree(p));
    }
    alloc.push_back((now() - t) / 100 * 1e6);
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    size_t n = bytes / sizeof(double);
    copy_kernel<<<prop.multiProcessorCount * 8, 256>>>(a, b, n);
    CHECK(cudaEventRecord(e0));
    copy_kernel<<<prop.multiProcessorCount * 8, 256>>>(a, b, n);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    dram.push_back(2.0 * bytes / (ms * 1e-3) / 1e9);
  }
  std::printf("h2d_pageable_gbs %.2f\n", median(h2d));
  std::printf("d2h_pageable_gbs %.2f\n", median(d2h));
  std::printf("small_copy_us %.3f\n", median(small));
  std::printf("malloc_free_1mb_us %.3f\n", median(alloc));
  std::printf("dram_copy_gbs %.1f\n", median(dram));
  return 0;
}
