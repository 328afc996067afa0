/*
 * STREAM-style copy (b[i] = a[i]) over two arrays of 2^k doubles, OpenMP threads as set by
 * OMP_NUM_THREADS; prints the best of `runs` as JSON. Bytes counted as STREAM does: 16 per
 * element (one read, one write). The bench compares the QAOA kernels' achieved bandwidth to it.
 * Usage: stream-copy LOG2_ELEMENTS RUNS
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int k = atoi(argv[1]), runs = atoi(argv[2]);
  if (k < 10 || k > 31 || runs < 1) return 2;
  size_t n = (size_t)1 << k;
  double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
  if (!a || !b) return 3;
#pragma omp parallel for
  for (size_t i = 0; i < n; i++) {
    a[i] = (double)i;
    b[i] = 0;
  }
  double best = 1e30;
  for (int r = 0; r < runs; r++) {
    double t = now();
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) b[i] = a[i];
    t = now() - t;
    if (t < best) best = t;
  }
  /* read b so the copies cannot be dropped */
  double check = 0;
  for (size_t i = 0; i < n; i += 4096) check += b[i];
  printf("{\"seconds\":%.6f,\"bytes\":%zu,\"gbps\":%.3f,\"threads\":%d,\"check\":%.1f}\n", best, 16 * n, 16.0 * n / best / 1e9, omp_get_max_threads(), check);
  return 0;
}
