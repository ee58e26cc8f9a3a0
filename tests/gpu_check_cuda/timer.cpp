// Preloaded into a port built with `nvcc -cudart shared` (tests/gpu_check.py): times every kernel launch with
// CUDA events recorded on the launch's stream just before and just after it (read at the next
// cudaDeviceSynchronize, which every wrapper of a port calls, or at exit), and at exit writes one line per
// kernel to $C2GPU_KERNEL_TIMES: "name launches milliseconds".  Without that variable launches are not timed.
// Either way the CUDA context is created when the library loads, so that the program's own timers (verify's
// probes around each ported nest) do not count it: c2gpu reports the context apart from the nests.
//
// nvcc 13 lowers `kernel<<<...>>>(...)` to __cudaLaunchKernel (cudaLaunchKernel with __NV_LEGACY_LAUNCH,
// __cudaLaunchKernel_ptsz with a per-thread default stream): all three are wrapped.
#include <cuda_runtime_api.h>
#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

struct Pending {
  const std::string *name;   // resolved at launch: at exit the program's kernels may be unregistered
  cudaEvent_t start, stop;
};
struct Total {
  long long launches = 0;
  double ms = 0;
};

// Made on first use and never destroyed: the constructor below may run before this file's static initialisers,
// and the exit handler after their destructors.
std::vector<Pending> &pending_launches() { static auto *v = new std::vector<Pending>; return *v; }
std::map<std::string, Total> &kernel_totals() { static auto *m = new std::map<std::string, Total>; return *m; }
std::map<const void *, std::string> &kernel_names() { static auto *m = new std::map<const void *, std::string>; return *m; }
bool timing;
int depth;   // a launch API calling another one is timed once

const std::string *name_of(const void *func) {
  auto &names = kernel_names();
  auto it = names.find(func);
  if (it != names.end()) return &it->second;
  const char *raw = nullptr;
  std::string name = "?";
  if (cudaFuncGetName(&raw, func) == cudaSuccess && raw) {
    int status = 0;
    char *plain = abi::__cxa_demangle(raw, nullptr, nullptr, &status);
    name = plain && status == 0 ? plain : raw;
    std::free(plain);
    auto paren = name.find('(');
    if (paren != std::string::npos) name.resize(paren);
  }
  return &(names[func] = name);
}

void drain() {
  auto &pending = pending_launches();
  for (auto &p : pending) {
    float ms = 0;
    if (cudaEventSynchronize(p.stop) == cudaSuccess && cudaEventElapsedTime(&ms, p.start, p.stop) == cudaSuccess) {
      Total &t = kernel_totals()[*p.name];
      t.launches++;
      t.ms += ms;
    }
    cudaEventDestroy(p.start);
    cudaEventDestroy(p.stop);
  }
  pending.clear();
}

void report() {
  drain();
  const char *path = std::getenv("C2GPU_KERNEL_TIMES");
  FILE *f = path ? std::fopen(path, "w") : nullptr;
  if (!f) return;
  for (auto &entry : kernel_totals()) std::fprintf(f, "%s %lld %.6f\n", entry.first.c_str(), entry.second.launches, entry.second.ms);
  std::fclose(f);
}

__attribute__((constructor)) void start() {
  cudaFree(0);                          // the context, now
  timing = std::getenv("C2GPU_KERNEL_TIMES") != nullptr;
  if (timing) std::atexit(report);      // registered after the runtime's own handlers: runs before them
}

template <class Handle, class Launch>
cudaError_t timed(Launch real, Handle func, dim3 grid, dim3 block, void **args, size_t shared, cudaStream_t stream) {
  if (!timing || depth > 0) return real(func, grid, block, args, shared, stream);
  Pending p{name_of((const void *)func), nullptr, nullptr};
  cudaEventCreate(&p.start);
  cudaEventCreate(&p.stop);
  cudaEventRecord(p.start, stream);
  depth++;
  cudaError_t r = real(func, grid, block, args, shared, stream);
  depth--;
  cudaEventRecord(p.stop, stream);
  pending_launches().push_back(p);
  if (pending_launches().size() >= 4096) drain();  // bounded: events are a driver resource
  return r;
}

}  // namespace

using Legacy = cudaError_t (*)(const void *, dim3, dim3, void **, size_t, cudaStream_t);
using ByHandle = cudaError_t (*)(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);

extern "C" cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shared,
                                        cudaStream_t stream) {
  static auto real = (Legacy)dlsym(RTLD_NEXT, "cudaLaunchKernel");
  return timed(real, func, grid, block, args, shared, stream);
}

extern "C" cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shared,
                                          cudaStream_t stream) {
  static auto real = (ByHandle)dlsym(RTLD_NEXT, "__cudaLaunchKernel");
  return timed(real, kernel, grid, block, args, shared, stream);
}

extern "C" cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shared,
                                               cudaStream_t stream) {
  static auto real = (ByHandle)dlsym(RTLD_NEXT, "__cudaLaunchKernel_ptsz");
  return timed(real, kernel, grid, block, args, shared, stream);
}

extern "C" cudaError_t cudaDeviceSynchronize(void) {
  static auto real = (cudaError_t(*)(void))dlsym(RTLD_NEXT, "cudaDeviceSynchronize");
  cudaError_t r = real();
  if (timing && r == cudaSuccess) drain();
  return r;
}
