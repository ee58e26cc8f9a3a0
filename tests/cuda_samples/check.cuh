// Shared by the test programs: abort with a message on any CUDA error.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t err_ = (call);                                                   \
    if (err_ != cudaSuccess) {                                                   \
      std::printf("FAIL: %s -> %s (%s:%d)\n", #call, cudaGetErrorString(err_),  \
                  __FILE__, __LINE__);                                           \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)
#define EXPECT(cond)                                                             \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::printf("FAIL: %s (%s:%d)\n", #cond, __FILE__, __LINE__);             \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)
