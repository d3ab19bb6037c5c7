// The running Keccak-256 of stream.h over lanes.h's one-state permutation. Included by stream.cc and stream_bmi2.cc
// inside an anonymous namespace (each compiled with its own instruction-set flags).
#include "scalar_ops.h"
#include "lanes.h"

// The state's bytes in absorb order: word i holds bytes 8i … 8i+7 little-endian (x86 and the other targets Node
// ships for are little-endian, as lanes.h's load_le64 assumes).
inline uint8_t* state_bytes(uint64_t* s) { return reinterpret_cast<uint8_t*>(s); }

void absorb(KeccakStream* stream, const uint8_t* data, size_t len) {
  uint64_t* s = stream->s;
  size_t pos = stream->pos;
  if (pos != 0) {
    const size_t n = len < kRate - pos ? len : kRate - pos;
    uint8_t* bytes = state_bytes(s) + pos;
    for (size_t i = 0; i < n; i++) bytes[i] ^= data[i];
    pos += n;
    data += n;
    len -= n;
    if (pos < kRate) {
      stream->pos = static_cast<uint32_t>(pos);
      return;
    }
    permute(s);
    pos = 0;
  }
  for (; len >= kRate; data += kRate, len -= kRate) {
    for (size_t i = 0; i < kRateWords; i++) s[i] ^= load_le64(data + 8 * i);
    permute(s);
  }
  uint8_t* bytes = state_bytes(s);
  for (size_t i = 0; i < len; i++) bytes[i] ^= data[i];
  stream->pos = static_cast<uint32_t>(len);
}

void digest(const KeccakStream* stream, uint8_t* out) {
  uint64_t s[25];
  memcpy(s, stream->s, sizeof s);
  uint8_t* bytes = state_bytes(s);
  bytes[stream->pos] ^= 0x01;
  bytes[kRate - 1] ^= 0x80;
  permute(s);
  memcpy(out, s, 32);
}
