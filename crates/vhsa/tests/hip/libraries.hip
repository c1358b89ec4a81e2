// hipcc flags: -std=c++17 -lrocrand -lrocsparse
/* AMD's libraries on the virtual GPU, each result checked on the host: rocPRIM's device
 * algorithms (header templates compiled here by hipcc), and the precompiled kernels of
 * Debian's rocRAND and rocSPARSE. Every kernel runs on the emulator; a wrong result from an
 * instruction the emulator gets wrong fails here, not only an instruction it does not know. */
#include "hip_test.h"

#include <math.h>
#include <rocprim/rocprim.hpp>
#include <rocrand/rocrand.h>
#include <rocsparse/rocsparse.h>

#include <algorithm>
#include <vector>

#define CHECK_RAND(expr)                                                                   \
  do {                                                                                     \
    rocrand_status s_ = (expr);                                                            \
    CHECK(s_ == ROCRAND_STATUS_SUCCESS, "%s returned %d", #expr, (int)s_);                 \
  } while (0)

#define CHECK_SPARSE(expr)                                                                 \
  do {                                                                                     \
    rocsparse_status s_ = (expr);                                                          \
    CHECK(s_ == rocsparse_status_success, "%s returned %d", #expr, (int)s_);               \
  } while (0)

/* A small deterministic generator for the inputs (not under test). */
static uint32_t next_input(uint64_t* state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*state >> 33);
}

template <typename T>
static T* to_device(const std::vector<T>& v) {
  T* d = nullptr;
  CHECK_HIP(hipMalloc(&d, v.size() * sizeof(T) + 16));
  CHECK_HIP(hipMemcpy(d, v.data(), v.size() * sizeof(T), hipMemcpyHostToDevice));
  return d;
}

template <typename T>
static std::vector<T> to_host(const T* d, size_t n) {
  std::vector<T> v(n);
  CHECK_HIP(hipMemcpy(v.data(), d, n * sizeof(T), hipMemcpyDeviceToHost));
  return v;
}

/* ---- rocPRIM ---------------------------------------------------------------------------- */

static void prim_reduce_and_scans(size_t n) {
  uint64_t st = 1;
  std::vector<int> in(n);
  for (auto& x : in) x = (int)(next_input(&st) % 2001) - 1000;
  int* d_in = to_device(in);
  int *d_out, *d_sum;
  CHECK_HIP(hipMalloc(&d_out, n * sizeof(int)));
  CHECK_HIP(hipMalloc(&d_sum, sizeof(int)));
  void* temp = nullptr;
  size_t bytes = 0;

  CHECK_HIP(rocprim::reduce(temp, bytes, d_in, d_sum, n, rocprim::plus<int>()));
  CHECK_HIP(hipMalloc(&temp, bytes));
  CHECK_HIP(rocprim::reduce(temp, bytes, d_in, d_sum, n, rocprim::plus<int>()));
  long long want = 0;
  for (int x : in) want += x;
  int got = to_host(d_sum, 1)[0];
  CHECK(got == (int)want, "rocprim::reduce of %zu ints: %d, expected %lld", n, got, want);
  CHECK_HIP(hipFree(temp));

  temp = nullptr;
  bytes = 0;
  CHECK_HIP(rocprim::inclusive_scan(temp, bytes, d_in, d_out, n, rocprim::plus<int>()));
  CHECK_HIP(hipMalloc(&temp, bytes));
  CHECK_HIP(rocprim::inclusive_scan(temp, bytes, d_in, d_out, n, rocprim::plus<int>()));
  std::vector<int> scan = to_host(d_out, n);
  int run = 0;
  for (size_t i = 0; i < n; i++) {
    run += in[i];
    CHECK(scan[i] == run, "rocprim::inclusive_scan element %zu: %d, expected %d", i, scan[i], run);
  }
  CHECK_HIP(hipFree(temp));

  temp = nullptr;
  bytes = 0;
  CHECK_HIP(rocprim::exclusive_scan(temp, bytes, d_in, d_out, 7, n, rocprim::plus<int>()));
  CHECK_HIP(hipMalloc(&temp, bytes));
  CHECK_HIP(rocprim::exclusive_scan(temp, bytes, d_in, d_out, 7, n, rocprim::plus<int>()));
  scan = to_host(d_out, n);
  run = 7;
  for (size_t i = 0; i < n; i++) {
    CHECK(scan[i] == run, "rocprim::exclusive_scan element %zu: %d, expected %d", i, scan[i], run);
    run += in[i];
  }
  CHECK_HIP(hipFree(temp));
  CHECK_HIP(hipFree(d_in));
  CHECK_HIP(hipFree(d_out));
  CHECK_HIP(hipFree(d_sum));
  printf("rocprim reduce, inclusive and exclusive scan of %zu ints: ok\n", n);
}

static void prim_radix_sorts(size_t n) {
  uint64_t st = 2;
  std::vector<uint32_t> keys(n);
  std::vector<float> values(n);
  for (size_t i = 0; i < n; i++) {
    keys[i] = next_input(&st);
    values[i] = (float)i;
  }
  uint32_t* d_keys = to_device(keys);
  float* d_values = to_device(values);
  uint32_t* d_keys_out;
  float* d_values_out;
  CHECK_HIP(hipMalloc(&d_keys_out, n * sizeof(uint32_t)));
  CHECK_HIP(hipMalloc(&d_values_out, n * sizeof(float)));
  void* temp = nullptr;
  size_t bytes = 0;

  CHECK_HIP(rocprim::radix_sort_keys(temp, bytes, d_keys, d_keys_out, n));
  CHECK_HIP(hipMalloc(&temp, bytes));
  CHECK_HIP(rocprim::radix_sort_keys(temp, bytes, d_keys, d_keys_out, n));
  std::vector<uint32_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::vector<uint32_t> got = to_host(d_keys_out, n);
  for (size_t i = 0; i < n; i++)
    CHECK(got[i] == sorted[i], "rocprim::radix_sort_keys element %zu: %u, expected %u", i, got[i], sorted[i]);
  CHECK_HIP(hipFree(temp));

  /* Pairs: a stable sort, so equal keys keep their values' order. */
  temp = nullptr;
  bytes = 0;
  CHECK_HIP(rocprim::radix_sort_pairs(temp, bytes, d_keys, d_keys_out, d_values, d_values_out, n));
  CHECK_HIP(hipMalloc(&temp, bytes));
  CHECK_HIP(rocprim::radix_sort_pairs(temp, bytes, d_keys, d_keys_out, d_values, d_values_out, n));
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; i++) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  got = to_host(d_keys_out, n);
  std::vector<float> got_values = to_host(d_values_out, n);
  for (size_t i = 0; i < n; i++) {
    CHECK(got[i] == keys[order[i]], "rocprim::radix_sort_pairs key %zu", i);
    CHECK(got_values[i] == values[order[i]], "rocprim::radix_sort_pairs value %zu: %g, expected %g", i,
          got_values[i], values[order[i]]);
  }
  CHECK_HIP(hipFree(temp));
  CHECK_HIP(hipFree(d_keys));
  CHECK_HIP(hipFree(d_values));
  CHECK_HIP(hipFree(d_keys_out));
  CHECK_HIP(hipFree(d_values_out));
  printf("rocprim radix sort of %zu keys and of %zu pairs: ok\n", n, n);
}

/* ---- rocRAND ---------------------------------------------------------------------------- */

/* Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011):
 * ten rounds of two 32x32->64 multiplications over a 128-bit counter, the 64-bit key bumped
 * by two Weyl constants between rounds. */
static void philox4x32_10(const uint32_t counter[4], uint64_t seed, uint32_t out[4]) {
  uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int round = 0; round < 10; round++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0;
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c0 = n0;
    c1 = (uint32_t)p1;
    c2 = n2;
    c3 = (uint32_t)p0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

static void rand_philox_bits(size_t n, uint64_t seed) {
  rocrand_generator gen;
  CHECK_RAND(rocrand_create_generator(&gen, ROCRAND_RNG_PSEUDO_PHILOX4_32_10));
  CHECK_RAND(rocrand_set_seed(gen, seed));
  unsigned int* d;
  CHECK_HIP(hipMalloc(&d, n * sizeof(unsigned int)));
  CHECK_RAND(rocrand_generate(gen, d, n));
  std::vector<unsigned int> got = to_host(d, n);
  for (size_t i = 0; i < n; i += 4) {
    uint32_t counter[4] = {(uint32_t)(i / 4), (uint32_t)((uint64_t)(i / 4) >> 32), 0, 0};
    uint32_t want[4];
    philox4x32_10(counter, seed, want);
    for (size_t k = 0; k < 4 && i + k < n; k++)
      CHECK(got[i + k] == want[k], "rocRAND Philox output %zu: 0x%08x, expected 0x%08x", i + k, got[i + k],
            want[k]);
  }
  CHECK_HIP(hipFree(d));
  CHECK_RAND(rocrand_destroy_generator(gen));
  printf("rocrand philox4x32_10 %zu values bit-exact: ok\n", n);
}

/* Normal variates from a generator: the sample mean and standard deviation of the elements
 * `first`, `first + step`, ... within a few standard errors of the asked ones, every one finite. */
template <typename T>
static void check_normal(const char* what, const std::vector<T>& got, size_t first, size_t step, double mean,
                         double stddev) {
  double sum = 0, sum2 = 0;
  size_t n = 0;
  for (size_t i = first; i < got.size(); i += step, n++) {
    double x = (double)(float)got[i];
    CHECK(isfinite(x), "%s value %zu is not finite", what, i);
    sum += x;
    sum2 += x * x;
  }
  double m = sum / n, sd = sqrt(sum2 / n - m * m);
  double se = stddev / sqrt((double)n);
  CHECK(fabs(m - mean) < 6 * se, "%s: sample mean %g, expected %g", what, m, mean);
  CHECK(fabs(sd - stddev) < 0.03 * stddev, "%s: sample deviation %g, expected %g", what, sd, stddev);
  printf("%s: %zu values, mean %.4f, deviation %.4f: ok\n", what, n, m, sd);
}

static void rand_distributions(size_t n) {
  const rocrand_rng_type kinds[] = {ROCRAND_RNG_PSEUDO_XORWOW, ROCRAND_RNG_PSEUDO_MRG32K3A,
                                    ROCRAND_RNG_PSEUDO_PHILOX4_32_10};
  const char* names[] = {"xorwow", "mrg32k3a", "philox4x32_10"};
  for (int k = 0; k < 3; k++) {
    rocrand_generator gen;
    CHECK_RAND(rocrand_create_generator(&gen, kinds[k]));
    CHECK_RAND(rocrand_set_seed(gen, 1234));
    char what[96];
    float* df;
    CHECK_HIP(hipMalloc(&df, n * sizeof(float)));
    CHECK_RAND(rocrand_generate_normal(gen, df, n, 3.0f, 2.0f));
    snprintf(what, sizeof what, "rocrand %s normal float", names[k]);
    check_normal(what, to_host(df, n), 0, 1, 3.0, 2.0);
    CHECK_HIP(hipFree(df));
    /* Half precision: each Box-Muller pair is (sine, cosine) of one angle, rounded to f16 by
     * the device library's f16 sine and cosine. In the build of these libraries the f16 sine
     * returns NaN for every finite argument (its select of the NaN for non-finite arguments is
     * inverted in the compiled code: `v_cmp_class_f16` with the finite classes 0x1f8, then
     * `v_cndmask` taking the NaN where the class matches), as it does on hardware; the cosine
     * halves are normal variates. */
    half* dh;
    CHECK_HIP(hipMalloc(&dh, n * sizeof(half)));
    CHECK_RAND(rocrand_generate_normal_half(gen, dh, n, (half)1.0f, (half)0.5f));
    std::vector<half> hv = to_host(dh, n);
    for (size_t i = 0; i < n; i += 2)
      CHECK(isnan((float)hv[i]), "rocrand %s normal half value %zu (a sine half) is %g, not the NaN of the "
            "library's f16 sine", names[k], i, (float)hv[i]);
    snprintf(what, sizeof what, "rocrand %s normal half (cosine halves)", names[k]);
    check_normal(what, hv, 1, 2, 1.0, 0.5);
    CHECK_HIP(hipFree(dh));
    /* Uniform floats lie in (0, 1] with mean 1/2. */
    float* d;
    CHECK_HIP(hipMalloc(&d, n * sizeof(float)));
    CHECK_RAND(rocrand_generate_uniform(gen, d, n));
    std::vector<float> u = to_host(d, n);
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
      CHECK(u[i] > 0.0f && u[i] <= 1.0f, "rocrand %s uniform value %zu is %g", names[k], i, u[i]);
      sum += u[i];
    }
    CHECK(fabs(sum / n - 0.5) < 6 * sqrt(1.0 / 12 / n), "rocrand %s uniform mean %g", names[k], sum / n);
    CHECK_HIP(hipFree(d));
    CHECK_RAND(rocrand_destroy_generator(gen));
  }
}

/* ---- rocSPARSE -------------------------------------------------------------------------- */

/* A square CSR matrix with a strong diagonal (so triangular solves and ILU(0) are stable),
 * about `per_row` entries per row at random columns, sorted within each row. */
struct Csr {
  int m;
  std::vector<int> row_ptr, col;
  std::vector<double> val;
};

static Csr random_csr(int m, int per_row, uint64_t seed) {
  Csr a;
  a.m = m;
  a.row_ptr.push_back(0);
  for (int r = 0; r < m; r++) {
    std::vector<int> cols = {r};
    for (int k = 0; k < per_row; k++) cols.push_back((int)(next_input(&seed) % (uint32_t)m));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (int c : cols) {
      a.col.push_back(c);
      a.val.push_back(c == r ? 4.0 * per_row : (double)(next_input(&seed) % 1000) / 500.0 - 1.0);
    }
    a.row_ptr.push_back((int)a.col.size());
  }
  return a;
}

static void check_close(const char* what, const std::vector<double>& got, const std::vector<double>& want,
                        double tol) {
  CHECK(got.size() == want.size(), "%s: %zu values, expected %zu", what, got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++)
    CHECK(fabs(got[i] - want[i]) <= tol * (1.0 + fabs(want[i])), "%s element %zu: %.17g, expected %.17g", what,
          i, got[i], want[i]);
}

struct DeviceCsr {
  int *row_ptr, *col;
  double* val;
  explicit DeviceCsr(const Csr& a) : row_ptr(to_device(a.row_ptr)), col(to_device(a.col)), val(to_device(a.val)) {}
  ~DeviceCsr() {
    CHECK_HIP(hipFree(row_ptr));
    CHECK_HIP(hipFree(col));
    CHECK_HIP(hipFree(val));
  }
};

static void sparse_csrmv(rocsparse_handle h, const Csr& a) {
  int m = a.m, nnz = (int)a.val.size();
  uint64_t st = 5;
  std::vector<double> x(m), y(m);
  for (int i = 0; i < m; i++) {
    x[i] = (double)(next_input(&st) % 1000) / 250.0 - 2.0;
    y[i] = (double)i;
  }
  DeviceCsr d(a);
  double* dx = to_device(x);
  double* dy = to_device(y);
  rocsparse_mat_descr descr;
  CHECK_SPARSE(rocsparse_create_mat_descr(&descr));
  rocsparse_mat_info info;
  CHECK_SPARSE(rocsparse_create_mat_info(&info));
  double alpha = 1.5, beta = -0.5;
  /* Once without analysis (the row-per-wave kernels), once with it (the adaptive kernels). */
  std::vector<double> want(m);
  for (int r = 0; r < m; r++) {
    double s = 0;
    for (int k = a.row_ptr[r]; k < a.row_ptr[r + 1]; k++) s += a.val[k] * x[a.col[k]];
    want[r] = alpha * s + beta * y[r];
  }
  CHECK_SPARSE(rocsparse_dcsrmv(h, rocsparse_operation_none, m, m, nnz, &alpha, descr, d.val, d.row_ptr, d.col,
                                nullptr, dx, &beta, dy));
  check_close("rocsparse csrmv", to_host(dy, m), want, 1e-12);
  CHECK_HIP(hipMemcpy(dy, y.data(), m * sizeof(double), hipMemcpyHostToDevice));
  CHECK_SPARSE(rocsparse_dcsrmv_analysis(h, rocsparse_operation_none, m, m, nnz, descr, d.val, d.row_ptr, d.col,
                                         info));
  CHECK_SPARSE(rocsparse_dcsrmv(h, rocsparse_operation_none, m, m, nnz, &alpha, descr, d.val, d.row_ptr, d.col,
                                info, dx, &beta, dy));
  check_close("rocsparse csrmv (adaptive)", to_host(dy, m), want, 1e-12);
  CHECK_SPARSE(rocsparse_destroy_mat_info(info));
  CHECK_SPARSE(rocsparse_destroy_mat_descr(descr));
  CHECK_HIP(hipFree(dx));
  CHECK_HIP(hipFree(dy));
  printf("rocsparse csrmv, %d rows, %d entries: ok\n", m, nnz);
}

/* csrmv of a transposed matrix with no rows scales all n entries of y by beta, even when the
 * caller's y is shorter (hipSPARSE's own size tests pass 100 entries for n = 4441): the kernel
 * runs past the buffer into other device memory, as on a GPU, where device allocations share one
 * address space (ROCR places small ones side by side in 2 MiB blocks). With beta = 1 nothing
 * changes. */
static void sparse_csrmv_past_a_short_y(rocsparse_handle h) {
  const int n = 4441, safe = 100;
  std::vector<double> y(safe);
  for (int i = 0; i < safe; i++) y[i] = 0.25 * i;
  double *dval, *dx;
  int *dptr, *dcol;
  CHECK_HIP(hipMalloc(&dptr, safe * sizeof(int)));
  CHECK_HIP(hipMalloc(&dcol, safe * sizeof(int)));
  CHECK_HIP(hipMalloc(&dval, safe * sizeof(double)));
  CHECK_HIP(hipMalloc(&dx, safe * sizeof(double)));
  double* dy = to_device(y);
  rocsparse_mat_descr descr;
  CHECK_SPARSE(rocsparse_create_mat_descr(&descr));
  double alpha = 3.0, beta = 1.0;
  CHECK_SPARSE(rocsparse_dcsrmv(h, rocsparse_operation_transpose, 0, n, 0, &alpha, descr, dval, dptr, dcol,
                                nullptr, dx, &beta, dy));
  check_close("rocsparse csrmv past a short y", to_host(dy, safe), y, 0.0);
  CHECK_SPARSE(rocsparse_destroy_mat_descr(descr));
  for (void* p : {(void*)dptr, (void*)dcol, (void*)dval, (void*)dx, (void*)dy}) CHECK_HIP(hipFree(p));
  printf("rocsparse csrmv past a short y: ok\n");
}

/* Lower-triangular solve L y = alpha x with L the lower part of `a` (diagonal included). */
static void sparse_csrsv(rocsparse_handle h, const Csr& full) {
  Csr a;
  a.m = full.m;
  a.row_ptr.push_back(0);
  for (int r = 0; r < full.m; r++) {
    for (int k = full.row_ptr[r]; k < full.row_ptr[r + 1]; k++)
      if (full.col[k] <= r) {
        a.col.push_back(full.col[k]);
        a.val.push_back(full.val[k]);
      }
    a.row_ptr.push_back((int)a.col.size());
  }
  int m = a.m, nnz = (int)a.val.size();
  std::vector<double> x(m), want(m);
  for (int i = 0; i < m; i++) x[i] = 1.0 + (i % 7);
  double alpha = 2.0;
  for (int r = 0; r < m; r++) {
    double s = alpha * x[r], diag = 0;
    for (int k = a.row_ptr[r]; k < a.row_ptr[r + 1]; k++) {
      if (a.col[k] == r)
        diag = a.val[k];
      else
        s -= a.val[k] * want[a.col[k]];
    }
    want[r] = s / diag;
  }
  DeviceCsr d(a);
  double* dx = to_device(x);
  double* dy;
  CHECK_HIP(hipMalloc(&dy, m * sizeof(double)));
  rocsparse_mat_descr descr;
  CHECK_SPARSE(rocsparse_create_mat_descr(&descr));
  CHECK_SPARSE(rocsparse_set_mat_fill_mode(descr, rocsparse_fill_mode_lower));
  rocsparse_mat_info info;
  CHECK_SPARSE(rocsparse_create_mat_info(&info));
  size_t bytes;
  CHECK_SPARSE(rocsparse_dcsrsv_buffer_size(h, rocsparse_operation_none, m, nnz, descr, d.val, d.row_ptr, d.col,
                                            info, &bytes));
  void* buffer;
  CHECK_HIP(hipMalloc(&buffer, bytes));
  CHECK_SPARSE(rocsparse_dcsrsv_analysis(h, rocsparse_operation_none, m, nnz, descr, d.val, d.row_ptr, d.col, info,
                                         rocsparse_analysis_policy_reuse, rocsparse_solve_policy_auto, buffer));
  CHECK_SPARSE(rocsparse_dcsrsv_solve(h, rocsparse_operation_none, m, nnz, &alpha, descr, d.val, d.row_ptr, d.col,
                                      info, dx, dy, rocsparse_solve_policy_auto, buffer));
  rocsparse_int zero_pivot;
  CHECK(rocsparse_csrsv_zero_pivot(h, descr, info, &zero_pivot) == rocsparse_status_success,
        "csrsv reports a zero pivot at %d", zero_pivot);
  check_close("rocsparse csrsv", to_host(dy, m), want, 1e-12);
  CHECK_HIP(hipFree(buffer));
  CHECK_SPARSE(rocsparse_destroy_mat_info(info));
  CHECK_SPARSE(rocsparse_destroy_mat_descr(descr));
  CHECK_HIP(hipFree(dx));
  CHECK_HIP(hipFree(dy));
  printf("rocsparse csrsv (lower), %d rows, %d entries: ok\n", m, nnz);
}

/* ILU(0): the incomplete LU factors on the sparsity pattern of `a`, in place. */
static void sparse_csrilu0(rocsparse_handle h, const Csr& a) {
  int m = a.m, nnz = (int)a.val.size();
  std::vector<double> want = a.val;
  for (int i = 0; i < m; i++) {
    for (int ik = a.row_ptr[i]; ik < a.row_ptr[i + 1] && a.col[ik] < i; ik++) {
      int k = a.col[ik];
      int kk = a.row_ptr[k];
      while (a.col[kk] != k) kk++;
      want[ik] /= want[kk];
      for (int ij = ik + 1; ij < a.row_ptr[i + 1]; ij++) {
        int j = a.col[ij];
        for (int kj = a.row_ptr[k]; kj < a.row_ptr[k + 1]; kj++)
          if (a.col[kj] == j) want[ij] -= want[ik] * want[kj];
      }
    }
  }
  DeviceCsr d(a);
  rocsparse_mat_descr descr;
  CHECK_SPARSE(rocsparse_create_mat_descr(&descr));
  rocsparse_mat_info info;
  CHECK_SPARSE(rocsparse_create_mat_info(&info));
  size_t bytes;
  CHECK_SPARSE(rocsparse_dcsrilu0_buffer_size(h, m, nnz, descr, d.val, d.row_ptr, d.col, info, &bytes));
  void* buffer;
  CHECK_HIP(hipMalloc(&buffer, bytes));
  CHECK_SPARSE(rocsparse_dcsrilu0_analysis(h, m, nnz, descr, d.val, d.row_ptr, d.col, info,
                                           rocsparse_analysis_policy_reuse, rocsparse_solve_policy_auto, buffer));
  CHECK_SPARSE(rocsparse_dcsrilu0(h, m, nnz, descr, d.val, d.row_ptr, d.col, info, rocsparse_solve_policy_auto,
                                  buffer));
  rocsparse_int zero_pivot;
  CHECK(rocsparse_csrilu0_zero_pivot(h, info, &zero_pivot) == rocsparse_status_success,
        "csrilu0 reports a zero pivot at %d", zero_pivot);
  check_close("rocsparse csrilu0", to_host(d.val, nnz), want, 1e-10);
  CHECK_HIP(hipFree(buffer));
  CHECK_SPARSE(rocsparse_destroy_mat_info(info));
  CHECK_SPARSE(rocsparse_destroy_mat_descr(descr));
  printf("rocsparse csrilu0, %d rows, %d entries: ok\n", m, nnz);
}

/* Tridiagonal systems with several right-hand sides, against the Thomas algorithm. */
static void sparse_gtsv(rocsparse_handle h, int m, int rhs) {
  std::vector<double> dl(m), dg(m), du(m), b((size_t)m * rhs);
  uint64_t st = 9;
  for (int i = 0; i < m; i++) {
    dl[i] = i == 0 ? 0.0 : (double)(next_input(&st) % 100) / 100.0 - 0.5;
    du[i] = i == m - 1 ? 0.0 : (double)(next_input(&st) % 100) / 100.0 - 0.5;
    dg[i] = 3.0 + (double)(next_input(&st) % 100) / 100.0;
  }
  for (auto& v : b) v = (double)(next_input(&st) % 1000) / 100.0 - 5.0;
  std::vector<double> want = b;
  for (int c = 0; c < rhs; c++) {
    double* x = &want[(size_t)c * m];
    std::vector<double> cp(m), dp(m);
    cp[0] = du[0] / dg[0];
    dp[0] = x[0] / dg[0];
    for (int i = 1; i < m; i++) {
      double den = dg[i] - dl[i] * cp[i - 1];
      cp[i] = du[i] / den;
      dp[i] = (x[i] - dl[i] * dp[i - 1]) / den;
    }
    x[m - 1] = dp[m - 1];
    for (int i = m - 2; i >= 0; i--) x[i] = dp[i] - cp[i] * x[i + 1];
  }
  double *ddl = to_device(dl), *ddg = to_device(dg), *ddu = to_device(du), *db = to_device(b);
  size_t bytes;
  CHECK_SPARSE(rocsparse_dgtsv_buffer_size(h, m, rhs, ddl, ddg, ddu, db, m, &bytes));
  void* buffer;
  CHECK_HIP(hipMalloc(&buffer, bytes));
  CHECK_SPARSE(rocsparse_dgtsv(h, m, rhs, ddl, ddg, ddu, db, m, buffer));
  check_close("rocsparse gtsv", to_host(db, b.size()), want, 1e-10);
  CHECK_HIP(hipFree(buffer));
  CHECK_HIP(hipFree(ddl));
  CHECK_HIP(hipFree(ddg));
  CHECK_HIP(hipFree(ddu));
  CHECK_HIP(hipFree(db));
  printf("rocsparse gtsv, %d rows, %d right-hand sides: ok\n", m, rhs);
}

/* CSR to CSC: an exact transposition of the pattern and values. */
static void sparse_csr2csc(rocsparse_handle h, const Csr& a) {
  int m = a.m, nnz = (int)a.val.size();
  std::vector<int> col_ptr(m + 1, 0), row_ind(nnz);
  std::vector<double> csc_val(nnz);
  for (int k = 0; k < nnz; k++) col_ptr[a.col[k] + 1]++;
  for (int c = 0; c < m; c++) col_ptr[c + 1] += col_ptr[c];
  std::vector<int> fill(col_ptr.begin(), col_ptr.end() - 1);
  for (int r = 0; r < m; r++)
    for (int k = a.row_ptr[r]; k < a.row_ptr[r + 1]; k++) {
      int at = fill[a.col[k]]++;
      row_ind[at] = r;
      csc_val[at] = a.val[k];
    }
  DeviceCsr d(a);
  int *d_col_ptr, *d_row_ind;
  double* d_csc_val;
  CHECK_HIP(hipMalloc(&d_col_ptr, (m + 1) * sizeof(int)));
  CHECK_HIP(hipMalloc(&d_row_ind, nnz * sizeof(int)));
  CHECK_HIP(hipMalloc(&d_csc_val, nnz * sizeof(double)));
  size_t bytes;
  CHECK_SPARSE(rocsparse_csr2csc_buffer_size(h, m, m, nnz, d.row_ptr, d.col, rocsparse_action_numeric, &bytes));
  void* buffer;
  CHECK_HIP(hipMalloc(&buffer, bytes));
  CHECK_SPARSE(rocsparse_dcsr2csc(h, m, m, nnz, d.val, d.row_ptr, d.col, d_csc_val, d_row_ind, d_col_ptr,
                                  rocsparse_action_numeric, rocsparse_index_base_zero, buffer));
  CHECK(to_host(d_col_ptr, m + 1) == col_ptr, "rocsparse csr2csc column pointers differ");
  CHECK(to_host(d_row_ind, nnz) == row_ind, "rocsparse csr2csc row indices differ");
  CHECK(to_host(d_csc_val, nnz) == csc_val, "rocsparse csr2csc values differ");
  CHECK_HIP(hipFree(buffer));
  CHECK_HIP(hipFree(d_col_ptr));
  CHECK_HIP(hipFree(d_row_ind));
  CHECK_HIP(hipFree(d_csc_val));
  printf("rocsparse csr2csc, %d rows, %d entries: ok\n", m, nnz);
}

int main() {
  uint64_t before = gpu_dispatches();
  prim_reduce_and_scans(1 << 20);
  prim_radix_sorts(1 << 20);
  rand_philox_bits(1 << 16, 0x123456789abcdefull);
  rand_distributions(1 << 16);
  rocsparse_handle h;
  CHECK_SPARSE(rocsparse_create_handle(&h));
  Csr a = random_csr(2000, 8, 3);
  sparse_csrmv(h, a);
  sparse_csrmv_past_a_short_y(h);
  sparse_csrsv(h, a);
  sparse_csrilu0(h, random_csr(500, 4, 4));
  sparse_gtsv(h, 1000, 3);
  sparse_csr2csc(h, a);
  CHECK_SPARSE(rocsparse_destroy_handle(h));
  uint64_t ran = gpu_dispatches() - before;
  CHECK(ran > 40, "only %llu kernel dispatches ran on the virtual GPU", (unsigned long long)ran);
  printf("%llu kernel dispatches\nPASS\n", (unsigned long long)ran);
  return 0;
}
