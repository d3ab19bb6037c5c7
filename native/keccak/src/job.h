// One hash to compute: keccak256(data[0..len)) written to out[0..32).
#pragma once
#include <cstddef>
#include <cstdint>

struct KeccakJob {
  const uint8_t* data;
  uint32_t len;
  uint8_t* out;
};

// Each hashes jobs[0..n) (independent inputs; no job's out overlaps another's data).
void keccak_run_scalar(const KeccakJob* jobs, size_t n);
#if defined(__x86_64__)
void keccak_run_avx2x4(const KeccakJob* jobs, size_t n);
void keccak_run_avx512x4(const KeccakJob* jobs, size_t n);
void keccak_run_avx512x8(const KeccakJob* jobs, size_t n);
#endif
