// cuda_emu.h -- c2gpu's CPU execution layer for CUDA source.
//
// Force-included (g++ -std=c++20 -pthread -include cuda_emu.h) into CUDA
// source that c2gpu.emulate.build.rewrite_launches() has pre-processed
// (`k<<<g, b, shmem, stream>>>(args)` -> `c2gpu_launch(k, g, b, shmem, args)`,
// `extern __shared__ T name[];` -> a pointer into the per-block buffer).
//
// Execution model
//   * A launch is synchronous: c2gpu_launch() returns when every block ran.
//   * Blocks are spread over a small pool of OS threads ("workers": the
//     launching thread plus hardware_concurrency()-1 helpers, override with
//     the environment variable C2GPU_EMU_THREADS).  Each worker runs ONE block
//     at a time, to completion.
//   * The threads of a block are user-level fibers (own stacks), all on the
//     worker's OS thread.  They run cooperatively: a fiber runs until it
//     finishes or reaches a barrier (__syncthreads, a warp collective).  A
//     pass resumes every runnable fiber in threadIdx order; when all live
//     fibers wait, the barrier is released.  Fibers that returned are simply
//     no longer waited for, so early-returning threads never deadlock.
//   * Hence `__shared__` == `static thread_local`: one copy per worker OS
//     thread == one copy per concurrently running block, shared by all fibers
//     of that block.  Dynamic shared memory is a per-worker buffer of the
//     largest size CUDA allows (227 KiB).
//   * Built-ins (threadIdx, blockIdx, blockDim, gridDim) are thread_local;
//     the scheduler sets threadIdx before resuming each fiber.
//   * Warp collectives (__syncwarp, __shfl*_sync, __ballot_sync, __any_sync,
//     __all_sync, __reduce_*_sync) wait for all live lanes of the mask, so
//     they are exact for converged code.  Threads waiting at barriers that can
//     never be released (divergent __syncthreads vs. __syncwarp) abort the
//     process with a diagnostic instead of hanging.
//
// Knobs: C2GPU_EMU_THREADS=n (workers), C2GPU_EMU_ORDER=forward|reverse|
// shuffle (the order in which blocks are taken and a block's threads run;
// shuffle is a permutation drawn from C2GPU_EMU_SEED, default 1, different
// for every launch and block but the same on every run: reverse and shuffle
// expose most missing __syncthreads() and loops wrongly run in parallel; with
// C2GPU_EMU_THREADS=1 the block order is exactly the one chosen),
// C2GPU_EMU_POISON=byte (content of fresh device memory, default 0xFF),
// -DC2GPU_EMU_STACK_SIZE=bytes (per GPU thread, default 256 KiB),
// -DC2GPU_EMU_FAST_SWITCH=0 (use glibc ucontext instead of the x86-64 switch).
// Checking aids: fresh cudaMalloc/cudaMallocManaged/cudaMallocAsync memory is
// filled with the poison byte (0xFF: NaN / -1) so reads of device memory that
// was never copied in or written show up in results; cudaMemcpy and
// cudaMemset check device ranges against the allocations; a launch whose
// pointer arguments are host memory does not run and sets
// cudaErrorIllegalAddress (-DC2GPU_EMU_CHECK_POINTER_ARGS=0 disables); with
// -fsanitize=address, overruns of device allocations and of the launch's
// dynamic shared memory are reported at the kernel's source line.
//
// Limitations
//   * No preemption: a thread spinning on a flag that another thread of the
//     same block (or a block not yet scheduled) must set hangs forever.
//   * Implicit warp-synchronous code (volatile shared memory without
//     __syncwarp) gives wrong answers -- it is a race on Volta+ GPUs too.
//   * __activemask(), cooperative groups, dynamic parallelism, textures,
//     half precision are not provided (compilation fails loudly).
//   * Function-template kernels need explicit template arguments at launch.
//   * Only the .cu file itself is rewritten: launches or extern __shared__
//     in included headers are not supported.
//   * Floating-point results follow the host libm (e.g. __expf is expf, not
//     the GPU's approximation); atomics on float are exact but unordered.
//   * -fsanitize=thread is not supported (fibers); ASan works (it warns once
//     that swapcontext support is partial).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cfloat>
#include <chrono>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
// The C++ wrappers of the C headers put the float/long double overloads
// (sqrt(float), abs(double), ...) into the global namespace, as CUDA has them.
#include <math.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

// ---------------------------------------------------------------------------
// Qualifiers
// ---------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __shared__ static thread_local
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
// __restrict__ is understood by g++ natively.

// ---------------------------------------------------------------------------
// Vector types
// ---------------------------------------------------------------------------
#define C2GPU_VEC_TYPES(T, N)                                                  \
  struct N##1 { T x; };                                                        \
  struct alignas(2 * sizeof(T) < 16 ? 2 * sizeof(T) : 16) N##2 { T x, y; };   \
  struct N##3 { T x, y, z; };                                                  \
  struct alignas(4 * sizeof(T) < 16 ? 4 * sizeof(T) : 16) N##4 { T x, y, z, w; }; \
  inline constexpr N##1 make_##N##1(T x) { return {x}; }                       \
  inline constexpr N##2 make_##N##2(T x, T y) { return {x, y}; }               \
  inline constexpr N##3 make_##N##3(T x, T y, T z) { return {x, y, z}; }       \
  inline constexpr N##4 make_##N##4(T x, T y, T z, T w) { return {x, y, z, w}; }
C2GPU_VEC_TYPES(signed char, char)
C2GPU_VEC_TYPES(unsigned char, uchar)
C2GPU_VEC_TYPES(short, short)
C2GPU_VEC_TYPES(unsigned short, ushort)
C2GPU_VEC_TYPES(int, int)
C2GPU_VEC_TYPES(unsigned int, uint)
C2GPU_VEC_TYPES(long, long)
C2GPU_VEC_TYPES(unsigned long, ulong)
C2GPU_VEC_TYPES(long long, longlong)
C2GPU_VEC_TYPES(unsigned long long, ulonglong)
C2GPU_VEC_TYPES(float, float)
C2GPU_VEC_TYPES(double, double)
#undef C2GPU_VEC_TYPES

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return {x, y, z}; }
};

// Built-in variables.  Per OS thread; the fiber scheduler keeps threadIdx
// current for the running fiber.
inline thread_local uint3 threadIdx{0, 0, 0};
inline thread_local uint3 blockIdx{0, 0, 0};
inline thread_local dim3 blockDim{1, 1, 1};
inline thread_local dim3 gridDim{1, 1, 1};
constexpr int warpSize = 32;

// ---------------------------------------------------------------------------
// Runtime API types
// ---------------------------------------------------------------------------
enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchFailure = 719,
  cudaErrorNotSupported = 801,
  cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9
};

#define cudaMemAttachGlobal 0x01
#define cudaHostAllocDefault 0x00
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00

struct CUstream_st { int unused; };
typedef CUstream_st* cudaStream_t;
struct CUevent_st {
  std::chrono::steady_clock::time_point t;
  bool recorded = false;
};
typedef CUevent_st* cudaEvent_t;

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  size_t totalConstMem;
  int major;
  int minor;
  int multiProcessorCount;
  int maxThreadsPerMultiProcessor;
  size_t sharedMemPerMultiprocessor;
  size_t sharedMemPerBlockOptin;
  int memoryClockRate;
  int memoryBusWidth;
  int l2CacheSize;
};

// ---------------------------------------------------------------------------
// Implementation details
// ---------------------------------------------------------------------------
#ifndef C2GPU_EMU_STACK_SIZE
#define C2GPU_EMU_STACK_SIZE (256 * 1024)  // per GPU thread (fiber), virtual
#endif
#ifndef C2GPU_EMU_FILL_BYTE
#define C2GPU_EMU_FILL_BYTE 0xFF  // content of fresh cudaMalloc memory, unless C2GPU_EMU_POISON says
#endif

namespace c2gpu {
constexpr size_t kMaxDynamicShared = 227 * 1024;  // CUDA's opt-in maximum
constexpr unsigned kMaxThreadsPerBlock = 1024;

namespace detail {

// ---- last error (per host thread, like CUDA) ----
inline thread_local cudaError_t last_error = cudaSuccess;
inline cudaError_t record(cudaError_t e) {
  if (e != cudaSuccess) last_error = e;
  return e;
}

// ---- device allocation registry (used to validate memcpy/memset/free) ----
enum class Kind : unsigned char {
  Device,  // cudaMalloc / cudaMallocManaged / cudaMallocAsync
  Pinned,  // cudaMallocHost / cudaHostAlloc (device-accessible under UVA)
  Symbol   // a __device__ / __constant__ variable (cudaGetSymbolAddress)
};
struct Region {
  size_t size;
  Kind kind;
};
struct Registry {
  std::mutex m;
  std::map<uintptr_t, Region> allocs;  // base address -> region
};
inline Registry& registry() {
  static Registry* r = new Registry();  // leaked: usable during exit
  return *r;
}
// The registered region that [p, p+n) lies in, if any.
inline const Region* find_region(const void* p, size_t n) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.m);
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = r.allocs.upper_bound(a);
  if (it == r.allocs.begin()) return nullptr;
  --it;
  return a - it->first + n <= it->second.size ? &it->second : nullptr;
}
// Is [p, p+n) device memory (for cudaMemcpy/cudaMemset directions)?
inline bool is_device_range(const void* p, size_t n) {
  const Region* r = find_region(p, n);
  return r && r->kind != Kind::Pinned;
}
[[noreturn]] inline void bad_knob(const char* name, const char* value, const char* expected) {
  std::fprintf(stderr, "c2gpu emu: %s=%s: expected %s\n", name, value, expected);
  std::exit(2);
}
// The byte fresh device memory is filled with (C2GPU_EMU_POISON): a port that
// forgets a copy-in reads it, and two runs with different bytes tell such a
// read from a value that happens to be right.
inline unsigned char poison_byte() {
  static const unsigned char b = [] {
    const char* s = std::getenv("C2GPU_EMU_POISON");
    if (!s || !*s) return static_cast<unsigned char>(C2GPU_EMU_FILL_BYTE);
    char* end = nullptr;
    unsigned long v = std::strtoul(s, &end, 0);
    if (*end || v > 255) bad_knob("C2GPU_EMU_POISON", s, "a byte value such as 0xFF");
    return static_cast<unsigned char>(v);
  }();
  return b;
}
inline cudaError_t host_alloc(void** p, size_t n, Kind kind) {
  if (!p) return record(cudaErrorInvalidValue);
  // 256-byte aligned like CUDA, but exactly n bytes long so that
  // -fsanitize=address catches kernels that index past the end.
  void* mem = nullptr;
  if (posix_memalign(&mem, 256, n ? n : 1) != 0) return record(cudaErrorMemoryAllocation);
  if (kind == Kind::Device) std::memset(mem, poison_byte(), n);
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lk(r.m);
    r.allocs[reinterpret_cast<uintptr_t>(mem)] = Region{n, kind};
  }
  *p = mem;
  return cudaSuccess;
}
inline cudaError_t device_alloc(void** p, size_t n) { return host_alloc(p, n, Kind::Device); }
inline cudaError_t region_free(void* p, Kind kind) {
  if (!p) return cudaSuccess;
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lk(r.m);
    auto it = r.allocs.find(reinterpret_cast<uintptr_t>(p));
    if (it == r.allocs.end() || it->second.kind != kind) return record(cudaErrorInvalidValue);
    r.allocs.erase(it);
  }
  std::free(p);
  return cudaSuccess;
}

// ---- execution contexts ----
// On x86-64 Linux a tiny hand-written switch is used (callee-saved registers
// + FP control words; ~15x faster than swapcontext, which makes a signal-mask
// system call on every switch).  Elsewhere, and under AddressSanitizer or
// CET shadow stacks (which must see the stack switches), glibc's ucontext.
#ifndef C2GPU_EMU_FAST_SWITCH
#if defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_ADDRESS__) && \
    !(defined(__CET__) && (__CET__ & 2))
#define C2GPU_EMU_FAST_SWITCH 1
#else
#define C2GPU_EMU_FAST_SWITCH 0
#endif
#endif

#if C2GPU_EMU_FAST_SWITCH
}  // namespace detail
}  // namespace c2gpu
// void c2gpu_emu_switch(void** save_sp, void* new_sp): push the callee-saved
// state, store rsp in *save_sp, continue on new_sp by popping the same layout.
// Weak, so the header may be included by several translation units.
asm(R"(
  .pushsection .text
  .weak c2gpu_emu_switch
  .type c2gpu_emu_switch, @function
c2gpu_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  stmxcsr 8(%rsp)
  fnstcw (%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  fldcw (%rsp)
  ldmxcsr 8(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size c2gpu_emu_switch, .-c2gpu_emu_switch
  .popsection
)");
extern "C" void c2gpu_emu_switch(void** save_sp, void* new_sp);
namespace c2gpu {
namespace detail {
struct Context {
  void* sp = nullptr;
};
inline void switch_context(Context* from, Context* to) { c2gpu_emu_switch(&from->sp, to->sp); }
// Build a frame on a fresh stack that c2gpu_emu_switch "returns" into:
// FP control words, six zeroed registers, entry address, fake return address.
inline void make_context(Context* c, void* stack, size_t size, void (*entry)()) {
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t(15);
  uint64_t* slot = reinterpret_cast<uint64_t*>(top);
  slot[-1] = 0;  // fake return address; entry sees rsp % 16 == 8 as after a call
  slot[-2] = reinterpret_cast<uint64_t>(entry);
  for (int i = 3; i <= 8; ++i) slot[-i] = 0;  // rbp rbx r12 r13 r14 r15
  uint32_t* fp = reinterpret_cast<uint32_t*>(top - 80);
  fp[0] = 0x037F;  // x87 control word (default)
  fp[1] = 0;
  fp[2] = 0x1F80;  // MXCSR (default)
  fp[3] = 0;
  c->sp = reinterpret_cast<void*>(top - 80);
}
#else
struct Context {
  ucontext_t uc;
};
inline void switch_context(Context* from, Context* to) { swapcontext(&from->uc, &to->uc); }
inline void make_context(Context* c, void* stack, size_t size, void (*entry)()) {
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = stack;
  c->uc.uc_stack.ss_size = size;
  c->uc.uc_link = nullptr;  // entry never returns
  makecontext(&c->uc, entry, 0);
}
#endif

// ---- fibers ----
enum class FState : unsigned char { Ready, AtBlockBarrier, AtWarpBarrier, Done };

struct Fiber {
  Context ctx;
  FState state = FState::Done;
  uint3 tid{0, 0, 0};
  unsigned linear = 0;          // linear thread index in the block
  unsigned warp_mask = 0;       // mask of the warp barrier being waited at
};

struct Job {
  void (*run)(void*);           // runs the kernel for the current thread
  void* ctx;
  dim3 grid, block;
  size_t shmem;                 // dynamic shared memory bytes
  unsigned long long nblocks;
  std::atomic<unsigned long long> next{0};
  unsigned long long launch = 0;  // how many launches came before: keys the shuffled orders
};

// One per OS thread that executes blocks.
struct Worker {
  Context sched;                             // the scheduler's own context
  std::vector<Fiber*> fibers;                // grown on demand, reused
  std::vector<unsigned> order;               // fibers[order[k]] runs k-th in each pass
  const Job* job = nullptr;
  Fiber* cur = nullptr;
  unsigned nthreads = 0;                     // threads in the current block
  int sync_acc = 0, sync_result = 0;         // __syncthreads_count & co
  unsigned sync_live = 0;                    // threads released by last barrier
  unsigned long long xchg[kMaxThreadsPerBlock];  // warp collective slots
};
inline thread_local Worker* tl_worker = nullptr;

// Fiber body: run one GPU thread per resumption, forever.  A finished fiber
// swaps back to the scheduler and is re-armed for the next thread/block.
inline void fiber_main() {
  for (;;) {
    Worker* w = tl_worker;
    w->job->run(w->job->ctx);
    w->cur->state = FState::Done;
    switch_context(&w->cur->ctx, &w->sched);
  }
}

inline Fiber* new_fiber() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t size = (C2GPU_EMU_STACK_SIZE + page - 1) / page * page + page;
  void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (mem == MAP_FAILED) {
    std::fprintf(stderr, "c2gpu emu: cannot allocate a fiber stack\n");
    std::abort();
  }
  mprotect(mem, page, PROT_NONE);  // guard page: stack overflow -> SIGSEGV
  Fiber* f = new Fiber();
  make_context(&f->ctx, mem, size, fiber_main);
  return f;
}

// Called from inside a fiber: park it and return to the scheduler.
inline void suspend(FState s) {
  Worker* w = tl_worker;
  Fiber* f = w->cur;
  f->state = s;
  switch_context(&f->ctx, &w->sched);
}
inline bool in_kernel() { return tl_worker && tl_worker->cur; }

[[noreturn]] inline void barrier_deadlock(const Worker& w) {
  std::fprintf(stderr,
               "c2gpu emu: deadlock in block (%u,%u,%u): threads wait at barriers "
               "that can never be released (divergent __syncthreads/__syncwarp, "
               "or warp collectives with different masks?)\n",
               blockIdx.x, blockIdx.y, blockIdx.z);
  unsigned shown = 0;
  for (unsigned t = 0; t < w.nthreads; ++t) {
    const Fiber* f = w.fibers[t];
    if (f->state == FState::Done) continue;
    if (shown++ == 8) {
      std::fprintf(stderr, "  ...\n");
      break;
    }
    if (f->state == FState::AtBlockBarrier)
      std::fprintf(stderr, "  thread (%u,%u,%u): __syncthreads\n", f->tid.x, f->tid.y, f->tid.z);
    else
      std::fprintf(stderr, "  thread (%u,%u,%u): warp barrier, mask 0x%08x\n", f->tid.x, f->tid.y,
                   f->tid.z, f->warp_mask);
  }
  std::abort();
}

// ---- execution order (C2GPU_EMU_ORDER, C2GPU_EMU_SEED) ----
enum class Order : unsigned char { Forward, Reverse, Shuffle };
struct OrderConfig {
  Order order = Order::Forward;
  unsigned long long seed = 1;
};
inline const OrderConfig& order_config() {
  static const OrderConfig c = [] {
    OrderConfig o;
    const char* s = std::getenv("C2GPU_EMU_ORDER");
    if (!s || !*s || std::strcmp(s, "forward") == 0) o.order = Order::Forward;
    else if (std::strcmp(s, "reverse") == 0) o.order = Order::Reverse;
    else if (std::strcmp(s, "shuffle") == 0) o.order = Order::Shuffle;
    else bad_knob("C2GPU_EMU_ORDER", s, "forward, reverse or shuffle");
    if (const char* t = std::getenv("C2GPU_EMU_SEED"); t && *t) {
      char* end = nullptr;
      o.seed = std::strtoull(t, &end, 0);
      if (*end) bad_knob("C2GPU_EMU_SEED", t, "an integer");
    }
    return o;
  }();
  return c;
}
inline unsigned long long splitmix64(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
// Position k of a pseudo-random permutation of [0, n) chosen by `key`, in O(1)
// memory (grids may have billions of blocks): a few rounds of odd multiply,
// add and xorshift are a bijection on [0, 2^bits); cycle-walking until the
// value falls below n keeps it a bijection on [0, n).
inline unsigned long long permuted(unsigned long long k, unsigned long long n, unsigned long long key) {
  unsigned bits = 1;
  while (bits < 64 && (1ull << bits) < n) ++bits;
  const unsigned long long mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  unsigned long long x = k;
  do {
    unsigned long long r = key;
    for (int round = 0; round < 4; ++round) {
      r = splitmix64(r);
      x = (x * (r | 1) + (r >> 32)) & mask;
      x ^= x >> (bits / 2 + 1);
    }
  } while (x >= n);
  return x;
}
// The k-th of n items (blocks of a launch, threads of a block) to run.
inline unsigned long long nth_in_order(unsigned long long k, unsigned long long n, unsigned long long key) {
  switch (order_config().order) {
    case Order::Forward: return k;
    case Order::Reverse: return n - 1 - k;
    default: return permuted(k, n, splitmix64(order_config().seed ^ key));
  }
}

// Run all threads of block `lin` of job `j` on this worker.
inline void run_block(Worker& w, const Job& j, unsigned long long lin) {
  const dim3 g = j.grid, b = j.block;
  blockIdx = {static_cast<unsigned>(lin % g.x),
              static_cast<unsigned>((lin / g.x) % g.y),
              static_cast<unsigned>(lin / (1ull * g.x * g.y))};
  blockDim = b;
  gridDim = g;
  const unsigned n = b.x * b.y * b.z;
  w.nthreads = n;
  w.job = &j;
  w.sync_acc = w.sync_result = 0;
  while (w.fibers.size() < n) w.fibers.push_back(new_fiber());
  for (unsigned t = 0; t < n; ++t) {
    Fiber* f = w.fibers[t];
    f->state = FState::Ready;
    f->linear = t;
    f->tid = {t % b.x, (t / b.x) % b.y, t / (b.x * b.y)};
  }
  // The order of the threads in every pass of this block (one permutation per launch and block).
  w.order.resize(n);
  for (unsigned k = 0; k < n; ++k)
    w.order[k] = static_cast<unsigned>(nth_in_order(k, n, splitmix64(j.launch) ^ (lin + 1)));
  for (;;) {
    // One pass: every runnable fiber runs until it finishes or waits.
    for (unsigned k = 0; k < n; ++k) {
      Fiber* f = w.fibers[w.order[k]];
      if (f->state != FState::Ready) continue;
      w.cur = f;
      threadIdx = f->tid;
      switch_context(&w.sched, &f->ctx);
    }
    w.cur = nullptr;
    // Everybody is done or waiting.  Decide which barriers to release.
    unsigned live = 0, at_block = 0;
    for (unsigned t = 0; t < n; ++t) {
      const Fiber* f = w.fibers[t];
      if (f->state == FState::Done) continue;
      ++live;
      if (f->state == FState::AtBlockBarrier) ++at_block;
    }
    if (live == 0) break;
    if (at_block == live) {  // __syncthreads reached by every live thread
      w.sync_result = w.sync_acc;
      w.sync_live = live;
      w.sync_acc = 0;
      for (unsigned t = 0; t < n; ++t)
        if (w.fibers[t]->state == FState::AtBlockBarrier) w.fibers[t]->state = FState::Ready;
      continue;
    }
    // Warp barriers (PTX bar.warp.sync semantics): a waiter with mask M is
    // released when every live lane of M waits at a warp barrier with the
    // same mask M.  Lanes that exited are not waited for.  Decide for all
    // waiters first, then release (a released lane no longer "waits").
    bool release[kMaxThreadsPerBlock] = {};
    bool progress = false;
    for (unsigned t = 0; t < n; ++t) {
      const Fiber* f = w.fibers[t];
      if (f->state != FState::AtWarpBarrier) continue;
      const unsigned base = t / 32 * 32, m = f->warp_mask;
      bool ok = true;
      for (unsigned l = 0; l < 32 && ok; ++l) {
        if (!(m >> l & 1u) || base + l >= n) continue;
        const Fiber* g = w.fibers[base + l];
        ok = g->state == FState::Done ||
             (g->state == FState::AtWarpBarrier && g->warp_mask == m);
      }
      release[t] = ok;
      progress |= ok;
    }
    for (unsigned t = 0; t < n; ++t)
      if (release[t]) w.fibers[t]->state = FState::Ready;
    if (!progress) barrier_deadlock(w);
  }
  threadIdx = {0, 0, 0};
}

}  // namespace detail
inline void* dynamic_shared_memory();
namespace detail {

inline void work_on(Job& j) {
  if (!tl_worker) tl_worker = new Worker();  // leaked with its thread
  Worker& w = *tl_worker;
#if defined(__SANITIZE_ADDRESS__)
  // Under -fsanitize=address, bytes past the launch's dynamic shared memory
  // size are poisoned, so kernels overrunning their extern __shared__ trip.
  unsigned char* dyn = static_cast<unsigned char*>(dynamic_shared_memory());
  ASAN_UNPOISON_MEMORY_REGION(dyn, kMaxDynamicShared);
  ASAN_POISON_MEMORY_REGION(dyn + j.shmem, kMaxDynamicShared - j.shmem);
#endif
  for (;;) {
    unsigned long long b = j.next.fetch_add(1, std::memory_order_relaxed);
    if (b >= j.nblocks) break;
    run_block(w, j, nth_in_order(b, j.nblocks, splitmix64(~j.launch)));
  }
  w.job = nullptr;
}

// ---- worker pool ----
struct Pool {
  std::mutex m;
  std::condition_variable start_cv, done_cv;
  Job* job = nullptr;
  unsigned long long gen = 0;  // bumped once per launch
  unsigned busy = 0;           // helpers still working on the current launch
  unsigned helpers = 0;
  std::mutex launch_m;         // one launch at a time
};

inline void helper_main(Pool* p) {
  unsigned long long seen = 0;
  std::unique_lock<std::mutex> lk(p->m);
  for (;;) {
    p->start_cv.wait(lk, [&] { return p->gen != seen; });
    seen = p->gen;
    Job* j = p->job;
    lk.unlock();
    work_on(*j);
    lk.lock();
    if (--p->busy == 0) p->done_cv.notify_all();
  }
}

inline Pool& pool() {
  // Leaked on purpose: detached helpers may still wait on it at exit.
  static Pool* p = [] {
    Pool* q = new Pool();
    // Default capped at 16: each worker maps up to 2 x 1024 fiber-stack
    // regions, and vm.max_map_count is typically 65530.
    unsigned n = std::min(std::thread::hardware_concurrency(), 16u);
    if (const char* s = std::getenv("C2GPU_EMU_THREADS")) n = static_cast<unsigned>(std::atoi(s));
    if (n < 1) n = 1;
    q->helpers = n - 1;
    for (unsigned i = 0; i < q->helpers; ++i) std::thread(helper_main, q).detach();
    return q;
  }();
  return *p;
}

inline void run_grid(dim3 grid, dim3 block, size_t shmem, void (*run)(void*), void* ctx) {
  if (in_kernel()) {
    std::fprintf(stderr, "c2gpu emu: kernel launch from device code is not supported\n");
    std::abort();
  }
  Job j;
  j.run = run;
  j.ctx = ctx;
  j.grid = grid;
  j.block = block;
  j.shmem = shmem;
  j.nblocks = 1ull * grid.x * grid.y * grid.z;
  Pool& p = pool();
  std::lock_guard<std::mutex> launch_lock(p.launch_m);
  static unsigned long long launches = 0;  // guarded by launch_m
  j.launch = launches++;
  if (p.helpers == 0 || j.nblocks == 1) {
    work_on(j);
    return;
  }
  {
    std::lock_guard<std::mutex> lk(p.m);
    p.job = &j;
    p.busy = p.helpers;
    ++p.gen;
  }
  p.start_cv.notify_all();
  work_on(j);
  std::unique_lock<std::mutex> lk(p.m);
  p.done_cv.wait(lk, [&] { return p.busy == 0; });
  p.job = nullptr;
}

inline cudaError_t check_config(dim3 g, dim3 b, size_t shmem) {
  if (b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 ||
      1ull * b.x * b.y * b.z > kMaxThreadsPerBlock)
    return cudaErrorInvalidConfiguration;
  if (g.x == 0 || g.y == 0 || g.z == 0 || g.x > 2147483647u || g.y > 65535 || g.z > 65535)
    return cudaErrorInvalidConfiguration;
  if (shmem > kMaxDynamicShared) return cudaErrorInvalidValue;
  return cudaSuccess;
}

// Convert a launch argument to the kernel's parameter type the way a call
// would.  0 / NULL for a pointer parameter lose their null-pointer-constant
// status when forwarded through a template, so map integers to pointers.
template <class P, class A>
P convert_arg(A&& a) {
  if constexpr (std::is_pointer_v<P> && std::is_integral_v<std::remove_cvref_t<A>>)
    return reinterpret_cast<P>(static_cast<std::intptr_t>(a));
  else
    return std::forward<A>(a);
}

#ifndef C2GPU_EMU_CHECK_POINTER_ARGS
#define C2GPU_EMU_CHECK_POINTER_ARGS 1
#endif
// Index of the first kernel argument that is a non-null data pointer outside
// every registered region (device, managed, pinned, symbol), or -1.  A GPU
// would fault on such a (host) pointer; the end pointer of a region is fine.
template <class Tuple>
int first_host_pointer_arg(const Tuple& params) {
  int bad = -1, idx = 0;
  std::apply([&](const auto&... a) {
    auto check = [&](const auto& v) {
      using T = std::remove_cvref_t<decltype(v)>;
      if constexpr (std::is_pointer_v<T> && !std::is_function_v<std::remove_pointer_t<T>>)
        if (bad < 0 && v && !find_region(v, 0)) bad = idx;
      ++idx;
    };
    (check(a), ...);
    (void)check;  // kernels without parameters
  }, params);
  return bad;
}

// ---- warp collectives ----
inline unsigned lane_id() { return tl_worker->cur->linear % 32; }

inline void warp_barrier(unsigned mask) {
  Fiber* f = tl_worker->cur;
  f->warp_mask = mask | (1u << (f->linear % 32));
  suspend(FState::AtWarpBarrier);
}

// Publish `v` in this lane's slot, wait for the lanes of `mask`, then call
// read(slots of this warp, lanes that exist and are live).  A second barrier
// keeps the slots stable until every participant has read them.
template <class R, class Read>
R warp_exchange(unsigned mask, unsigned long long v, Read read) {
  Worker* w = tl_worker;
  Fiber* f = w->cur;
  unsigned base = f->linear / 32 * 32;
  w->xchg[f->linear] = v;
  warp_barrier(mask);
  unsigned present = 0;
  for (unsigned l = 0; l < 32 && base + l < w->nthreads; ++l)
    if (w->fibers[base + l]->state != FState::Done) present |= 1u << l;
  R r = read(&w->xchg[base], present);
  warp_barrier(mask);
  return r;
}

template <class T>
unsigned long long to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>,
                "c2gpu emu: shuffle of types larger than 8 bytes is not supported");
  unsigned long long b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
T from_bits(unsigned long long b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

// Value of lane `src` (or own value when src < 0 or the lane does not exist).
template <class T>
T shuffle(unsigned mask, T var, int src) {
  if (!in_kernel()) return var;
  return warp_exchange<T>(mask, to_bits(var), [&](const unsigned long long* slots, unsigned present) {
    if (src < 0 || src > 31 || !(present >> src & 1u)) return var;
    return from_bits<T>(slots[src]);
  });
}

}  // namespace detail

inline void* dynamic_shared_memory() {
  thread_local unsigned char* buf = nullptr;  // one per worker = per running block
  if (!buf)
    buf = static_cast<unsigned char*>(::operator new(kMaxDynamicShared, std::align_val_t{256}));
  return buf;
}
}  // namespace c2gpu

// ---------------------------------------------------------------------------
// Launch (target of the <<<...>>> rewrite)
// ---------------------------------------------------------------------------
template <class... P, class... A>
void c2gpu_launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shmem, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "c2gpu_launch: wrong number of kernel arguments");
  if (cudaError_t e = c2gpu::detail::check_config(grid, block, shmem); e != cudaSuccess) {
    c2gpu::detail::record(e);
    return;
  }
  // Arguments are evaluated and converted once, at launch, like CUDA does;
  // every GPU thread then receives its own by-value copy.
  auto params = std::tuple<std::decay_t<P>...>(
      c2gpu::detail::convert_arg<std::decay_t<P>>(std::forward<A>(args))...);
  if (C2GPU_EMU_CHECK_POINTER_ARGS) {
    if (int bad = c2gpu::detail::first_host_pointer_arg(params); bad >= 0) {
      // Like a GPU: the kernel cannot run on host memory.  (CUDA reports the
      // fault later, as cudaErrorIllegalAddress.)
      std::fprintf(stderr,
                   "c2gpu emu: kernel argument %d is not device memory (not from cudaMalloc*, "
                   "cudaMallocHost or cudaGetSymbolAddress); kernel not run\n", bad + 1);
      c2gpu::detail::record(cudaErrorIllegalAddress);
      return;
    }
  }
  struct Ctx {
    void (*k)(P...);
    decltype(params)* p;
  } ctx{kernel, &params};
  c2gpu::detail::run_grid(grid, block, shmem, [](void* c) {
    Ctx* x = static_cast<Ctx*>(c);
    std::apply(x->k, *x->p);
  }, &ctx);
}

// ---------------------------------------------------------------------------
// Synchronisation, fences
// ---------------------------------------------------------------------------
inline void __syncthreads() {
  if (c2gpu::detail::in_kernel()) c2gpu::detail::suspend(c2gpu::detail::FState::AtBlockBarrier);
}
inline int __syncthreads_count(int pred) {
  if (!c2gpu::detail::in_kernel()) return pred != 0;
  c2gpu::detail::tl_worker->sync_acc += (pred != 0);
  __syncthreads();
  return c2gpu::detail::tl_worker->sync_result;
}
inline int __syncthreads_and(int pred) {
  int c = __syncthreads_count(pred);
  return c2gpu::detail::in_kernel() ? c == static_cast<int>(c2gpu::detail::tl_worker->sync_live) : c;
}
inline int __syncthreads_or(int pred) { return __syncthreads_count(pred) != 0; }

// Within a block, fibers interleave only at barriers on one OS thread, so
// block-level ordering is already sequentially consistent; the fences
// matter for communication between blocks running on different workers.
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// ---------------------------------------------------------------------------
// Warp-level primitives (exact for converged code, see the header comment)
// ---------------------------------------------------------------------------
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  if (c2gpu::detail::in_kernel()) c2gpu::detail::warp_barrier(mask);
}
template <class T>
T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize) {
  if (!c2gpu::detail::in_kernel()) return var;
  int lane = static_cast<int>(c2gpu::detail::lane_id());
  int src = lane / width * width + ((srcLane % width) + width) % width;
  return c2gpu::detail::shuffle(mask, var, src);
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  if (!c2gpu::detail::in_kernel()) return var;
  int lane = static_cast<int>(c2gpu::detail::lane_id());
  int src = lane % width < static_cast<int>(delta) ? -1 : lane - static_cast<int>(delta);
  return c2gpu::detail::shuffle(mask, var, src);
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  if (!c2gpu::detail::in_kernel()) return var;
  int lane = static_cast<int>(c2gpu::detail::lane_id());
  int src = lane % width + static_cast<int>(delta) >= width ? -1 : lane + static_cast<int>(delta);
  return c2gpu::detail::shuffle(mask, var, src);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize) {
  if (!c2gpu::detail::in_kernel()) return var;
  int lane = static_cast<int>(c2gpu::detail::lane_id());
  int src = lane ^ laneMask;
  if (src >= (lane / width + 1) * width) src = -1;  // later groups: own value
  return c2gpu::detail::shuffle(mask, var, src);
}
inline unsigned __ballot_sync(unsigned mask, int pred) {
  if (!c2gpu::detail::in_kernel()) return pred ? 1u : 0u;
  return c2gpu::detail::warp_exchange<unsigned>(
      mask, pred != 0, [&](const unsigned long long* s, unsigned present) {
        unsigned r = 0;
        for (unsigned l = 0; l < 32; ++l)
          if ((mask & present) >> l & 1u && s[l]) r |= 1u << l;
        return r;
      });
}
inline int __all_sync(unsigned mask, int pred) {
  if (!c2gpu::detail::in_kernel()) return pred != 0;
  return c2gpu::detail::warp_exchange<int>(
      mask, pred != 0, [&](const unsigned long long* s, unsigned present) {
        for (unsigned l = 0; l < 32; ++l)
          if ((mask & present) >> l & 1u && !s[l]) return 0;
        return 1;
      });
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }

namespace c2gpu::detail {
template <class T, class Op>
T warp_reduce(unsigned mask, T v, Op op) {
  if (!in_kernel()) return v;
  return warp_exchange<T>(mask, to_bits(v), [&](const unsigned long long* s, unsigned present) {
    bool first = true;
    T r{};
    for (unsigned l = 0; l < 32; ++l)
      if ((mask & present) >> l & 1u) {
        T x = from_bits<T>(s[l]);
        r = first ? x : op(r, x);
        first = false;
      }
    return r;
  });
}
}  // namespace c2gpu::detail
inline unsigned __reduce_add_sync(unsigned m, unsigned v) { return c2gpu::detail::warp_reduce(m, v, [](unsigned a, unsigned b) { return a + b; }); }
inline int __reduce_add_sync(unsigned m, int v) { return c2gpu::detail::warp_reduce(m, v, [](int a, int b) { return a + b; }); }
inline unsigned __reduce_min_sync(unsigned m, unsigned v) { return c2gpu::detail::warp_reduce(m, v, [](unsigned a, unsigned b) { return a < b ? a : b; }); }
inline int __reduce_min_sync(unsigned m, int v) { return c2gpu::detail::warp_reduce(m, v, [](int a, int b) { return a < b ? a : b; }); }
inline unsigned __reduce_max_sync(unsigned m, unsigned v) { return c2gpu::detail::warp_reduce(m, v, [](unsigned a, unsigned b) { return a > b ? a : b; }); }
inline int __reduce_max_sync(unsigned m, int v) { return c2gpu::detail::warp_reduce(m, v, [](int a, int b) { return a > b ? a : b; }); }

// ---------------------------------------------------------------------------
// Atomics (std::atomic_ref; the value parameter is not used for deduction so
// that atomicAdd(&float_var, 1.0) converts like CUDA's overloads do)
// ---------------------------------------------------------------------------
namespace c2gpu::detail {
template <class T, class F>
T atomic_update(T* addr, F f) {
  std::atomic_ref<T> r(*addr);
  T old = r.load();
  while (!r.compare_exchange_weak(old, f(old))) {
  }
  return old;
}
}  // namespace c2gpu::detail
template <class T> T atomicAdd(T* a, std::type_identity_t<T> v) { return std::atomic_ref<T>(*a).fetch_add(v); }
template <class T> T atomicSub(T* a, std::type_identity_t<T> v) { return std::atomic_ref<T>(*a).fetch_sub(v); }
template <class T> T atomicExch(T* a, std::type_identity_t<T> v) { return std::atomic_ref<T>(*a).exchange(v); }
template <class T> T atomicAnd(T* a, std::type_identity_t<T> v) { return std::atomic_ref<T>(*a).fetch_and(v); }
template <class T> T atomicOr(T* a, std::type_identity_t<T> v) { return std::atomic_ref<T>(*a).fetch_or(v); }
template <class T> T atomicXor(T* a, std::type_identity_t<T> v) { return std::atomic_ref<T>(*a).fetch_xor(v); }
template <class T> T atomicMax(T* a, std::type_identity_t<T> v) {
  return c2gpu::detail::atomic_update(a, [v](T old) { return old < v ? v : old; });
}
template <class T> T atomicMin(T* a, std::type_identity_t<T> v) {
  return c2gpu::detail::atomic_update(a, [v](T old) { return v < old ? v : old; });
}
template <class T> T atomicCAS(T* a, std::type_identity_t<T> compare, std::type_identity_t<T> v) {
  std::atomic_ref<T>(*a).compare_exchange_strong(compare, v);
  return compare;  // the old value, whether or not the swap happened
}
inline unsigned atomicInc(unsigned* a, unsigned v) {
  return c2gpu::detail::atomic_update(a, [v](unsigned old) { return old >= v ? 0u : old + 1; });
}
inline unsigned atomicDec(unsigned* a, unsigned v) {
  return c2gpu::detail::atomic_update(a, [v](unsigned old) { return (old == 0 || old > v) ? v : old - 1; });
}
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicExch_block atomicExch
#define atomicMax_block atomicMax
#define atomicMin_block atomicMin
#define atomicCAS_block atomicCAS

// ---------------------------------------------------------------------------
// Device math / intrinsics that <cmath> lacks
// ---------------------------------------------------------------------------
#if !(defined(__GLIBC__) && __GLIBC_PREREQ(2, 42))  // C23 rsqrt arrives in glibc
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
#endif
inline float fdividef(float a, float b) { return a / b; }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline void __sincosf(float x, float* s, float* c) { *s = std::sin(x); *c = std::cos(x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }  // NaN -> 0
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline float __frsqrt_rn(float a) { return 1.0f / std::sqrt(a); }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __drcp_rn(double a) { return 1.0 / a; }
inline double __dsqrt_rn(double a) { return std::sqrt(a); }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline int __float2int_rn(float x) { return static_cast<int>(std::nearbyint(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }
inline int __float2int_rd(float x) { return static_cast<int>(std::floor(x)); }
inline int __float2int_ru(float x) { return static_cast<int>(std::ceil(x)); }
inline unsigned __float2uint_rn(float x) { return static_cast<unsigned>(std::nearbyint(x)); }
inline unsigned __float2uint_rz(float x) { return static_cast<unsigned>(x); }
inline long long __float2ll_rn(float x) { return static_cast<long long>(std::nearbyint(x)); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned x) { return static_cast<float>(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline int __double2int_rn(double x) { return static_cast<int>(std::nearbyint(x)); }
inline int __double2int_rz(double x) { return static_cast<int>(x); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }
inline double __int2double_rn(int x) { return x; }
inline int __float_as_int(float x) { int r; std::memcpy(&r, &x, 4); return r; }
inline unsigned __float_as_uint(float x) { unsigned r; std::memcpy(&r, &x, 4); return r; }
inline float __int_as_float(int x) { float r; std::memcpy(&r, &x, 4); return r; }
inline float __uint_as_float(unsigned x) { float r; std::memcpy(&r, &x, 4); return r; }
inline long long __double_as_longlong(double x) { long long r; std::memcpy(&r, &x, 8); return r; }
inline double __longlong_as_double(long long x) { double r; std::memcpy(&r, &x, 8); return r; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i, x >>= 1) r = (r << 1) | (x & 1u);
  return r;
}
inline int __mulhi(int a, int b) { return static_cast<int>((1ll * a * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return static_cast<unsigned>((1ull * a * b) >> 32); }
inline int __mul24(int a, int b) { return a * b; }
inline unsigned __umul24(unsigned a, unsigned b) { return a * b; }

// CUDA's global min/max: the same overload set as CUDA's math_functions.hpp,
// so calls that are ambiguous with nvcc (e.g. max(1.5f, 3)) fail here too.
// Mixed signedness converts to unsigned; floating point follows fminf/fmaxf.
#define C2GPU_MINMAX(A, B, R)                                                     \
  inline R min(A a, B b) {                                                        \
    using T = R;                                                                  \
    if constexpr (std::is_floating_point_v<T>) return std::fmin(T(a), T(b));      \
    else return T(b) < T(a) ? T(b) : T(a);                                        \
  }                                                                               \
  inline R max(A a, B b) {                                                        \
    using T = R;                                                                  \
    if constexpr (std::is_floating_point_v<T>) return std::fmax(T(a), T(b));      \
    else return T(a) < T(b) ? T(b) : T(a);                                        \
  }
C2GPU_MINMAX(int, int, int)
C2GPU_MINMAX(unsigned int, unsigned int, unsigned int)
C2GPU_MINMAX(int, unsigned int, unsigned int)
C2GPU_MINMAX(unsigned int, int, unsigned int)
C2GPU_MINMAX(long, long, long)
C2GPU_MINMAX(unsigned long, unsigned long, unsigned long)
C2GPU_MINMAX(long, unsigned long, unsigned long)
C2GPU_MINMAX(unsigned long, long, unsigned long)
C2GPU_MINMAX(long long, long long, long long)
C2GPU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
C2GPU_MINMAX(long long, unsigned long long, unsigned long long)
C2GPU_MINMAX(unsigned long long, long long, unsigned long long)
C2GPU_MINMAX(float, float, float)
C2GPU_MINMAX(double, double, double)
C2GPU_MINMAX(float, double, double)
C2GPU_MINMAX(double, float, double)
#undef C2GPU_MINMAX
inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umax(unsigned a, unsigned b) { return a < b ? b : a; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a < b ? b : a; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a < b ? b : a; }

// Cache-hinted loads/stores: plain memory accesses here.
template <class T> T __ldg(const T* p) { return *p; }
template <class T> T __ldca(const T* p) { return *p; }
template <class T> T __ldcg(const T* p) { return *p; }
template <class T> T __ldcs(const T* p) { return *p; }
template <class T> T __ldlu(const T* p) { return *p; }
template <class T> T __ldcv(const T* p) { return *p; }
template <class T> void __stwb(T* p, T v) { *p = v; }
template <class T> void __stcg(T* p, T v) { *p = v; }
template <class T> void __stcs(T* p, T v) { *p = v; }
template <class T> void __stwt(T* p, T v) { *p = v; }

inline long long clock64() {
  return std::chrono::steady_clock::now().time_since_epoch().count();
}
[[noreturn]] inline void __trap() { std::abort(); }

// ---------------------------------------------------------------------------
// Runtime API (host side).  Memory is host memory; launches are synchronous.
// ---------------------------------------------------------------------------
inline const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidSymbol: return "cudaErrorInvalidSymbol";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    default: return "cudaErrorUnknown";
  }
}
inline const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNotSupported: return "operation not supported";
    default: return "unknown error";
  }
}
inline cudaError_t cudaGetLastError() {
  cudaError_t e = c2gpu::detail::last_error;
  c2gpu::detail::last_error = cudaSuccess;
  return e;
}
inline cudaError_t cudaPeekAtLastError() { return c2gpu::detail::last_error; }

inline cudaError_t cudaMalloc(void** p, size_t n) { return c2gpu::detail::device_alloc(p, n); }
template <class T> cudaError_t cudaMalloc(T** p, size_t n) { return cudaMalloc(reinterpret_cast<void**>(p), n); }
inline cudaError_t cudaMallocManaged(void** p, size_t n, unsigned = cudaMemAttachGlobal) { return c2gpu::detail::device_alloc(p, n); }
template <class T> cudaError_t cudaMallocManaged(T** p, size_t n, unsigned f = cudaMemAttachGlobal) { return cudaMallocManaged(reinterpret_cast<void**>(p), n, f); }
inline cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t) { return c2gpu::detail::device_alloc(p, n); }
template <class T> cudaError_t cudaMallocAsync(T** p, size_t n, cudaStream_t s) { return cudaMallocAsync(reinterpret_cast<void**>(p), n, s); }
inline cudaError_t cudaFree(void* p) { return c2gpu::detail::region_free(p, c2gpu::detail::Kind::Device); }
inline cudaError_t cudaFreeAsync(void* p, cudaStream_t) { return cudaFree(p); }
// Pinned host memory: registered so that kernels may be passed it (UVA).
inline cudaError_t cudaMallocHost(void** p, size_t n) {
  return c2gpu::detail::host_alloc(p, n, c2gpu::detail::Kind::Pinned);
}
template <class T> cudaError_t cudaMallocHost(T** p, size_t n) { return cudaMallocHost(reinterpret_cast<void**>(p), n); }
inline cudaError_t cudaHostAlloc(void** p, size_t n, unsigned) { return cudaMallocHost(p, n); }
template <class T> cudaError_t cudaHostAlloc(T** p, size_t n, unsigned f) { return cudaHostAlloc(reinterpret_cast<void**>(p), n, f); }
inline cudaError_t cudaFreeHost(void* p) { return c2gpu::detail::region_free(p, c2gpu::detail::Kind::Pinned); }

// Device-side ranges are validated against cudaMalloc'ed blocks, so copies
// with swapped directions or sizes beyond an allocation are reported.
inline cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  using c2gpu::detail::is_device_range;
  using c2gpu::detail::record;
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return record(cudaErrorInvalidMemcpyDirection);
  if (n == 0) return cudaSuccess;
  if (!dst || !src) return record(cudaErrorInvalidValue);
  bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if ((dst_dev && !is_device_range(dst, n)) || (src_dev && !is_device_range(src, n)))
    return record(cudaErrorInvalidValue);
  std::memmove(dst, src, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t = nullptr) {
  return cudaMemcpy(dst, src, n, kind);
}
inline cudaError_t cudaMemset(void* p, int value, size_t n) {
  if (n == 0) return cudaSuccess;
  if (!c2gpu::detail::is_device_range(p, n)) return c2gpu::detail::record(cudaErrorInvalidValue);
  std::memset(p, value, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* p, int value, size_t n, cudaStream_t = nullptr) { return cudaMemset(p, value, n); }
inline cudaError_t cudaMemGetInfo(size_t* free_b, size_t* total) {
  if (free_b) *free_b = size_t(16) << 30;
  if (total) *total = size_t(16) << 30;
  return cudaSuccess;
}

// __device__ / __constant__ globals are ordinary globals.
template <class T>
cudaError_t cudaMemcpyToSymbol(T& symbol, const void* src, size_t n, size_t offset = 0,
                               cudaMemcpyKind = cudaMemcpyHostToDevice) {
  if (offset + n > sizeof(T)) return c2gpu::detail::record(cudaErrorInvalidValue);
  std::memcpy(reinterpret_cast<unsigned char*>(&symbol) + offset, src, n);
  return cudaSuccess;
}
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t n, size_t offset = 0,
                                 cudaMemcpyKind = cudaMemcpyDeviceToHost) {
  if (offset + n > sizeof(T)) return c2gpu::detail::record(cudaErrorInvalidValue);
  std::memcpy(dst, reinterpret_cast<const unsigned char*>(&symbol) + offset, n);
  return cudaSuccess;
}
template <class T>
cudaError_t cudaGetSymbolAddress(void** p, T& symbol) {
  // Register the symbol so cudaMemcpy accepts it as device memory.
  c2gpu::detail::Registry& r = c2gpu::detail::registry();
  std::lock_guard<std::mutex> lk(r.m);
  r.allocs[reinterpret_cast<uintptr_t>(&symbol)] =
      c2gpu::detail::Region{sizeof(T), c2gpu::detail::Kind::Symbol};
  *p = &symbol;
  return cudaSuccess;
}

inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaThreadSynchronize() { return cudaSuccess; }
inline cudaError_t cudaGetDeviceCount(int* n) {
  if (n) *n = 1;
  return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : c2gpu::detail::record(cudaErrorInvalidDevice); }
inline cudaError_t cudaGetDevice(int* d) {
  if (d) *d = 0;
  return cudaSuccess;
}
// Like CUDA: destroys every allocation of the process.
inline cudaError_t cudaDeviceReset() {
  c2gpu::detail::Registry& r = c2gpu::detail::registry();
  std::lock_guard<std::mutex> lk(r.m);
  for (auto& [addr, region] : r.allocs)
    if (region.kind != c2gpu::detail::Kind::Symbol) std::free(reinterpret_cast<void*>(addr));
  r.allocs.clear();
  c2gpu::detail::last_error = cudaSuccess;
  return cudaSuccess;
}
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int d) {
  if (!p) return c2gpu::detail::record(cudaErrorInvalidValue);
  if (d != 0) return c2gpu::detail::record(cudaErrorInvalidDevice);
  *p = cudaDeviceProp{};
  std::snprintf(p->name, sizeof p->name, "c2gpu CPU emulation");
  p->totalGlobalMem = size_t(16) << 30;
  p->sharedMemPerBlock = 48 * 1024;
  p->sharedMemPerBlockOptin = c2gpu::kMaxDynamicShared;
  p->sharedMemPerMultiprocessor = 228 * 1024;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024; p->maxThreadsDim[1] = 1024; p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647; p->maxGridSize[1] = 65535; p->maxGridSize[2] = 65535;
  p->clockRate = 1000000;
  p->totalConstMem = 65536;
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  p->maxThreadsPerMultiProcessor = 2048;
  p->memoryClockRate = 1000000;
  p->memoryBusWidth = 256;
  p->l2CacheSize = 1 << 20;
  return cudaSuccess;
}
enum cudaFuncCache { cudaFuncCachePreferNone = 0, cudaFuncCachePreferShared = 1, cudaFuncCachePreferL1 = 2, cudaFuncCachePreferEqual = 3 };
template <class F> cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int) { return cudaSuccess; }
template <class F> cudaError_t cudaFuncSetCacheConfig(F, cudaFuncCache) { return cudaSuccess; }
inline cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) { return cudaSuccess; }

inline cudaError_t cudaStreamCreate(cudaStream_t* s) {
  if (!s) return c2gpu::detail::record(cudaErrorInvalidValue);
  *s = new CUstream_st{};
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) { return cudaStreamCreate(s); }
inline cudaError_t cudaStreamDestroy(cudaStream_t s) { delete s; return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

inline cudaError_t cudaEventCreate(cudaEvent_t* e) {
  if (!e) return c2gpu::detail::record(cudaErrorInvalidValue);
  *e = new CUevent_st{};
  return cudaSuccess;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) { return cudaEventCreate(e); }
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t = nullptr) {
  if (!e) return c2gpu::detail::record(cudaErrorInvalidResourceHandle);
  e->t = std::chrono::steady_clock::now();
  e->recorded = true;
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  return e ? cudaSuccess : c2gpu::detail::record(cudaErrorInvalidResourceHandle);
}
inline cudaError_t cudaEventQuery(cudaEvent_t e) { return cudaEventSynchronize(e); }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop) {
  if (!ms || !start || !stop || !start->recorded || !stop->recorded)
    return c2gpu::detail::record(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(stop->t - start->t).count();
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) { delete e; return cudaSuccess; }
