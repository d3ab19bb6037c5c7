// Keccak-256 of four inputs at once in AVX2 (one 64-bit word of each of four states per 256-bit register). Compiled
// with -mavx2; only called after the CPU was seen to have AVX2.
#include <cstring>
#include "job.h"
#if defined(__x86_64__)
#include <immintrin.h>

namespace {
struct O {
  static constexpr int LANES = 4;
  using V = __m256i;
  static V zero() { return _mm256_setzero_si256(); }
  static V set1(uint64_t w) { return _mm256_set1_epi64x(static_cast<long long>(w)); }
  static V load(const uint64_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store(uint64_t* p, V v) { _mm256_store_si256(reinterpret_cast<__m256i*>(p), v); }
  static V bxor(V a, V b) { return _mm256_xor_si256(a, b); }
  static V xor5(V a, V b, V c, V d, V e) { return _mm256_xor_si256(_mm256_xor_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(c, d)), e); }
  static V chi(V a, V b, V c) { return _mm256_xor_si256(a, _mm256_andnot_si256(b, c)); }
  static V clear(V mask, V a) { return _mm256_andnot_si256(mask, a); }
  template <int N>
  static V rol(V a) {
    if constexpr (N == 0) return a;
    else return _mm256_or_si256(_mm256_slli_epi64(a, N), _mm256_srli_epi64(a, 64 - N));
  }
};
#include "lanes.h"
}  // namespace

void keccak_run_avx2x4(const KeccakJob* jobs, size_t n) { run_lanes(jobs, n); }
#endif
