/*
 * FP64 arithmetic peak of 128-bit SIMD (two doubles per instruction, what WebAssembly's f64x2
 * gives), per thread and for OpenMP threads as set by OMP_NUM_THREADS, in two forms:
 * - "muladd": separate SSE2 multiplies and adds (_mm_mul_pd, _mm_add_pd), half of each, as the
 *   exact QAOA passes issue them (x + t·y is one multiply and one add, 2 flops per lane);
 * - "fma": fused multiply-adds (_mm_fmadd_pd, compiled for FMA through a target attribute and run
 *   only where the CPU has it), 2 flops per lane each.
 * Twelve independent accumulator vectors per thread hide the instructions' latency (4 cycles on
 * current cores, two issue ports: eight in flight keep both busy). Registers only, no memory
 * traffic. Prints the best of `runs` as JSON, GFLOP/s counting 2 flops per lane per mul+add pair
 * or per FMA: by the wall clock for all threads together (muladd, fma), and per CPU second of one
 * thread (muladdPerCpu, fmaPerCpu: what a core gives while the thread runs on it, which other work
 * on a shared machine lowers much less than the wall-clock rate). Usage: fp64-peak ITERATIONS_MILLIONS RUNS
 */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ACC 12

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }

/* Multiplies (by a factor just under 1) and adds (of a tiny step) on independent chains: the
 * values stay normal for the iteration counts used here, so no denormal slow path. */
static double muladd(long iters, double seed) {
  __m128d m[ACC / 2], a[ACC / 2];
  const __m128d f = _mm_set1_pd(0.99999999999), d = _mm_set1_pd(1e-12);
  for (int k = 0; k < ACC / 2; k++) {
    m[k] = _mm_set1_pd(seed + k);
    a[k] = _mm_set1_pd(seed - k);
  }
  for (long i = 0; i < iters; i++) {
#pragma GCC unroll 12
    for (int k = 0; k < ACC / 2; k++) {
      m[k] = _mm_mul_pd(m[k], f);
      a[k] = _mm_add_pd(a[k], d);
    }
  }
  __m128d s = _mm_setzero_pd();
  for (int k = 0; k < ACC / 2; k++) s = _mm_add_pd(s, _mm_add_pd(m[k], a[k]));
  return _mm_cvtsd_f64(s);
}

__attribute__((target("fma"))) static double fma_loop(long iters, double seed) {
  __m128d x[ACC];
  const __m128d f = _mm_set1_pd(0.99999999999), d = _mm_set1_pd(1e-12);
  for (int k = 0; k < ACC; k++) x[k] = _mm_set1_pd(seed + k);
  for (long i = 0; i < iters; i++) {
#pragma GCC unroll 12
    for (int k = 0; k < ACC; k++) x[k] = _mm_fmadd_pd(x[k], f, d);
  }
  __m128d s = _mm_setzero_pd();
  for (int k = 0; k < ACC; k++) s = _mm_add_pd(s, x[k]);
  return _mm_cvtsd_f64(s);
}

struct rate {
  double wall; /* GFLOP/s of all threads together, by the wall clock */
  double cpu;  /* GFLOP per CPU second of one thread (the slowest): the rate while it ran */
};

/* Best of `runs` for one form on every thread at once. */
static struct rate measure(int fused, long iters, int runs, double *check) {
  double best = 1e30, best_cpu = 1e30;
  for (int r = 0; r < runs; r++) {
    double sum = 0, t = 0, cpu = 0;
#pragma omp parallel reduction(+ : sum) reduction(max : cpu)
    {
#pragma omp barrier
#pragma omp single
      t = now();
      double c = clock_s(CLOCK_THREAD_CPUTIME_ID);
      sum += fused ? fma_loop(iters, 1.0 + omp_get_thread_num()) : muladd(iters, 1.0 + omp_get_thread_num());
      cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - c;
    }
    t = now() - t;
    *check += sum;
    if (t < best) best = t;
    if (cpu < best_cpu) best_cpu = cpu;
  }
  /* per iteration: ACC vector instructions of 2 lanes; a mul+add pair or an FMA is 2 flops per lane */
  double flops = (double)iters * ACC * 2 * (fused ? 2 : 1);
  return (struct rate){flops * omp_get_max_threads() / best / 1e9, flops / best_cpu / 1e9};
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  long iters = atol(argv[1]) * 1000000L;
  int runs = atoi(argv[2]);
  if (iters < 1 || runs < 1) return 2;
  __builtin_cpu_init();
  int has_fma = __builtin_cpu_supports("fma");
  double check = 0;
  struct rate mul_add = measure(0, iters, runs, &check);
  struct rate fused = has_fma ? measure(1, iters, runs, &check) : (struct rate){0, 0};
  printf("{\"threads\":%d,\"muladd\":%.2f,\"fma\":%.2f,\"muladdPerCpu\":%.2f,\"fmaPerCpu\":%.2f,\"hasFma\":%s,\"check\":%.3e}\n",
         omp_get_max_threads(), mul_add.wall, fused.wall, mul_add.cpu, fused.cpu, has_fma ? "true" : "false", check);
  return 0;
}
