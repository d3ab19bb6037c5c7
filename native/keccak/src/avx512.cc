// Keccak-256 of four or eight inputs at once with AVX-512 (F + VL): rotations in one instruction (vprolq) and χ and
// θ's five-way XOR as three-input logic (vpternlogq). Four lanes in 256-bit registers, eight in 512-bit ones.
// Compiled with -mavx512f -mavx512vl; only called after the CPU was seen to have both.
#include <cstring>
#include "job.h"
#if defined(__x86_64__)
#include <immintrin.h>

namespace {
namespace x4 {
struct O {
  static constexpr int LANES = 4;
  using V = __m256i;
  static V zero() { return _mm256_setzero_si256(); }
  static V set1(uint64_t w) { return _mm256_set1_epi64x(static_cast<long long>(w)); }
  static V load(const uint64_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store(uint64_t* p, V v) { _mm256_store_si256(reinterpret_cast<__m256i*>(p), v); }
  static V bxor(V a, V b) { return _mm256_xor_si256(a, b); }
  static V xor5(V a, V b, V c, V d, V e) { return _mm256_ternarylogic_epi64(_mm256_ternarylogic_epi64(a, b, c, 0x96), d, e, 0x96); }
  static V chi(V a, V b, V c) { return _mm256_ternarylogic_epi64(a, b, c, 0xD2); }
  static V clear(V mask, V a) { return _mm256_andnot_si256(mask, a); }
  template <int N>
  static V rol(V a) {
    if constexpr (N == 0) return a;
    else return _mm256_rol_epi64(a, N);
  }
};
#include "lanes.h"
}  // namespace x4

namespace x8 {
struct O {
  static constexpr int LANES = 8;
  using V = __m512i;
  static V zero() { return _mm512_setzero_si512(); }
  static V set1(uint64_t w) { return _mm512_set1_epi64(static_cast<long long>(w)); }
  static V load(const uint64_t* p) { return _mm512_load_si512(p); }
  static void store(uint64_t* p, V v) { _mm512_store_si512(p, v); }
  static V bxor(V a, V b) { return _mm512_xor_si512(a, b); }
  static V xor5(V a, V b, V c, V d, V e) { return _mm512_ternarylogic_epi64(_mm512_ternarylogic_epi64(a, b, c, 0x96), d, e, 0x96); }
  static V chi(V a, V b, V c) { return _mm512_ternarylogic_epi64(a, b, c, 0xD2); }
  static V clear(V mask, V a) { return _mm512_andnot_si512(mask, a); }
  template <int N>
  static V rol(V a) {
    if constexpr (N == 0) return a;
    else return _mm512_rol_epi64(a, N);
  }
};
#include "lanes.h"
}  // namespace x8
}  // namespace

void keccak_run_avx512x4(const KeccakJob* jobs, size_t n) { x4::run_lanes(jobs, n); }
void keccak_run_avx512x8(const KeccakJob* jobs, size_t n) { x8::run_lanes(jobs, n); }
#endif
