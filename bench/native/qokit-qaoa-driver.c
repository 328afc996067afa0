/*
 * Times QOKit's C simulator (csim) on the same QAOA MaxCut evaluation as bench/quantum-simulator.ts:
 * state init (|+>^n) + p layers (apply_qaoa_furx) + ⟨C⟩. Our own driver, compiled by the bench
 * together with QOKit's unmodified csim sources (gcc -O2 -fopenmp); it is not part of svc.
 *
 * stdin:  n m p runs, then m lines "i j" (edges), then p gammas, then p betas (svc's convention:
 *         phase e^{-iγ·C(z)}, mixer RX(2β) on every qubit).
 * stdout: one JSON line {"seconds":[...],"expectation":x,"threads":t}.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <qaoa_fur.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void) {
  unsigned n, m, p, runs;
  if (scanf("%u %u %u %u", &n, &m, &p, &runs) != 4 || n < 1 || n > 30 || p < 1 || p > 64 || runs < 1) return 2;
  unsigned *ei = malloc(sizeof(unsigned) * m), *ej = malloc(sizeof(unsigned) * m);
  double *gammas = malloc(sizeof(double) * p), *betas = malloc(sizeof(double) * p);
  for (unsigned k = 0; k < m; k++)
    if (scanf("%u %u", &ei[k], &ej[k]) != 2) return 2;
  for (unsigned k = 0; k < p; k++)
    if (scanf("%lf", &gammas[k]) != 1) return 2;
  for (unsigned k = 0; k < p; k++)
    if (scanf("%lf", &betas[k]) != 1) return 2;
  /* QOKit's apply_diagonal multiplies by e^{i·θ·diag} with θ = -γ/2: pass 2γ for e^{-iγ·C}. */
  for (unsigned k = 0; k < p; k++) gammas[k] *= 2;

  size_t N = (size_t)1 << n;
  double *diag = malloc(sizeof(double) * N);
  double *re = malloc(sizeof(double) * N), *im = malloc(sizeof(double) * N);
  if (!diag || !re || !im) return 3;
#pragma omp parallel for
  for (size_t z = 0; z < N; z++) {
    double c = 0;
    for (unsigned k = 0; k < m; k++) c += (double)(((z >> ei[k]) ^ (z >> ej[k])) & 1);
    diag[z] = c;
  }
  /* first touch of the state by the team, as a real run would */
#pragma omp parallel for
  for (size_t z = 0; z < N; z++) re[z] = im[z] = 0;

  printf("{\"seconds\":[");
  double expectation = 0;
  for (unsigned r = 0; r <= runs; r++) { /* run 0 is a warm-up */
    double t0 = now();
    double amp = 1 / sqrt((double)N);
#pragma omp parallel for
    for (size_t z = 0; z < N; z++) {
      re[z] = amp;
      im[z] = 0;
    }
    apply_qaoa_furx(re, im, gammas, betas, diag, n, N, p);
    double sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (size_t z = 0; z < N; z++) sum += (re[z] * re[z] + im[z] * im[z]) * diag[z];
    double t = now() - t0;
    expectation = sum;
    if (r > 0) printf("%s%.6f", r > 1 ? "," : "", t);
  }
  printf("],\"expectation\":%.12f,\"threads\":%d}\n", expectation, omp_get_max_threads());
  return 0;
}
