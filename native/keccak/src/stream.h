// A running Keccak-256 (one sponge absorbing bytes as they come, digests taken of it without ending it): the RLPx
// frame MAC's hash. The state is the 25 words of Keccak-f[1600]; `pos` is how many bytes of the current 136-byte
// block are already XORed into it (0 … 135).
#pragma once
#include <cstddef>
#include <cstdint>

struct KeccakStream {
  uint64_t s[25];
  uint32_t pos;
};

struct KeccakStreamFns {
  const char* name;
  void (*absorb)(KeccakStream* stream, const uint8_t* data, size_t len);
  // keccak256 of everything absorbed so far into out[0 … 32); the stream goes on as if it had not been called.
  void (*digest)(const KeccakStream* stream, uint8_t* out);
};

// Portable C++, and the same compiled with BMI1/BMI2 (andn, rorx: about twice as fast on x86-64).
extern const KeccakStreamFns keccak_stream_portable;
#if defined(__x86_64__)
extern const KeccakStreamFns keccak_stream_bmi2;
#endif
