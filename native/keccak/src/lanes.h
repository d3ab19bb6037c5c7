// Keccak-f[1600] over LANES independent states at once, and Keccak-256 (rate 136 bytes, pad 0x01 … 0x80) of many
// independent inputs, each lane taking the next input as soon as its current one is done.
//
// Included inside an anonymous namespace by each instruction-set translation unit, after it defines `O`: the vector
// type `V` (one 64-bit word of each of LANES states) and its operations. Every instantiation therefore has internal
// linkage, so code compiled for one instruction set can never be picked by the linker for another.
//
// Requires from O: LANES, V, zero(), load(const uint64_t*) (LANES words), store(uint64_t*, V), bxor(a, b),
// xor5(a, b, c, d, e), chi(a, b, c) = a ^ (~b & c), rol<N>(a) (rotate each word left by N), clear(mask, a) = a & ~mask.

constexpr uint64_t kRoundConstants[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808AULL, 0x8000000080008000ULL,
    0x000000000000808BULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008AULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000AULL,
    0x000000008000808BULL, 0x800000000000008BULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800AULL, 0x800000008000000AULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

constexpr size_t kRate = 136;
constexpr size_t kRateWords = kRate / 8;

// State word i is lane (x, y) with i = x + 5y.
inline __attribute__((always_inline)) void permute(typename O::V* s) {
  using V = typename O::V;
  V C[5], D[5], B[25];
  for (int round = 0; round < 24; round++) {
    // θ
    C[0] = O::xor5(s[0], s[5], s[10], s[15], s[20]);
    C[1] = O::xor5(s[1], s[6], s[11], s[16], s[21]);
    C[2] = O::xor5(s[2], s[7], s[12], s[17], s[22]);
    C[3] = O::xor5(s[3], s[8], s[13], s[18], s[23]);
    C[4] = O::xor5(s[4], s[9], s[14], s[19], s[24]);
    D[0] = O::bxor(C[4], O::template rol<1>(C[1]));
    D[1] = O::bxor(C[0], O::template rol<1>(C[2]));
    D[2] = O::bxor(C[1], O::template rol<1>(C[3]));
    D[3] = O::bxor(C[2], O::template rol<1>(C[4]));
    D[4] = O::bxor(C[3], O::template rol<1>(C[0]));
    // ρ and π: B[y, 2x + 3y] = rot(A[x, y] ^ D[x], r[x, y])
    B[0] = O::template rol<0>(O::bxor(s[0], D[0]));
    B[10] = O::template rol<1>(O::bxor(s[1], D[1]));
    B[20] = O::template rol<62>(O::bxor(s[2], D[2]));
    B[5] = O::template rol<28>(O::bxor(s[3], D[3]));
    B[15] = O::template rol<27>(O::bxor(s[4], D[4]));
    B[16] = O::template rol<36>(O::bxor(s[5], D[0]));
    B[1] = O::template rol<44>(O::bxor(s[6], D[1]));
    B[11] = O::template rol<6>(O::bxor(s[7], D[2]));
    B[21] = O::template rol<55>(O::bxor(s[8], D[3]));
    B[6] = O::template rol<20>(O::bxor(s[9], D[4]));
    B[7] = O::template rol<3>(O::bxor(s[10], D[0]));
    B[17] = O::template rol<10>(O::bxor(s[11], D[1]));
    B[2] = O::template rol<43>(O::bxor(s[12], D[2]));
    B[12] = O::template rol<25>(O::bxor(s[13], D[3]));
    B[22] = O::template rol<39>(O::bxor(s[14], D[4]));
    B[23] = O::template rol<41>(O::bxor(s[15], D[0]));
    B[8] = O::template rol<45>(O::bxor(s[16], D[1]));
    B[18] = O::template rol<15>(O::bxor(s[17], D[2]));
    B[3] = O::template rol<21>(O::bxor(s[18], D[3]));
    B[13] = O::template rol<8>(O::bxor(s[19], D[4]));
    B[14] = O::template rol<18>(O::bxor(s[20], D[0]));
    B[24] = O::template rol<2>(O::bxor(s[21], D[1]));
    B[9] = O::template rol<61>(O::bxor(s[22], D[2]));
    B[19] = O::template rol<56>(O::bxor(s[23], D[3]));
    B[4] = O::template rol<14>(O::bxor(s[24], D[4]));
    // χ
    for (int y = 0; y < 25; y += 5) {
      s[y + 0] = O::chi(B[y + 0], B[y + 1], B[y + 2]);
      s[y + 1] = O::chi(B[y + 1], B[y + 2], B[y + 3]);
      s[y + 2] = O::chi(B[y + 2], B[y + 3], B[y + 4]);
      s[y + 3] = O::chi(B[y + 3], B[y + 4], B[y + 0]);
      s[y + 4] = O::chi(B[y + 4], B[y + 0], B[y + 1]);
    }
    // ι
    s[0] = O::bxor(s[0], O::set1(kRoundConstants[round]));
  }
}

inline uint64_t load_le64(const uint8_t* p) {
  uint64_t word;
  memcpy(&word, p, 8);  // x86 and the other targets Node ships for are little-endian
  return word;
}

inline uint32_t block_count(uint32_t len) { return len / kRate + 1; }

void run_lanes(const KeccakJob* jobs, size_t n) {
  constexpr int L = O::LANES;
  using V = typename O::V;
  V s[25];
  for (int i = 0; i < 25; i++) s[i] = O::zero();
  alignas(64) uint64_t stage[kRateWords * L];
  alignas(64) uint8_t tail[L][kRate];
  alignas(64) uint64_t words[4 * L];
  alignas(64) uint64_t mask[L];
  int64_t current[L];
  uint32_t block[L], blocks[L];
  size_t next = 0;
  int active = 0;
  for (int l = 0; l < L; l++) {
    if (next < n) {
      current[l] = static_cast<int64_t>(next);
      block[l] = 0;
      blocks[l] = block_count(jobs[next].len);
      next++;
      active++;
    } else {
      current[l] = -1;
    }
  }
  while (active > 0) {
    for (int l = 0; l < L; l++) {
      if (current[l] < 0) {
        for (size_t i = 0; i < kRateWords; i++) stage[i * L + l] = 0;
        continue;
      }
      const KeccakJob& job = jobs[current[l]];
      const size_t offset = static_cast<size_t>(block[l]) * kRate;
      const uint8_t* p;
      if (offset + kRate <= job.len) {
        p = job.data + offset;
      } else {
        const size_t rest = job.len - offset;  // 0 … 135
        memcpy(tail[l], job.data + offset, rest);
        memset(tail[l] + rest, 0, kRate - rest);
        tail[l][rest] ^= 0x01;
        tail[l][kRate - 1] ^= 0x80;
        p = tail[l];
      }
      for (size_t i = 0; i < kRateWords; i++) stage[i * L + l] = load_le64(p + 8 * i);
    }
    for (size_t i = 0; i < kRateWords; i++) s[i] = O::bxor(s[i], O::load(stage + i * L));
    permute(s);
    bool finished = false;
    for (int l = 0; l < L; l++) {
      if (current[l] >= 0 && ++block[l] == blocks[l]) finished = true;
    }
    if (!finished) continue;
    for (int i = 0; i < 4; i++) O::store(words + i * L, s[i]);
    for (int l = 0; l < L; l++) {
      mask[l] = 0;
      if (current[l] < 0 || block[l] != blocks[l]) continue;
      uint8_t* out = jobs[current[l]].out;
      for (int i = 0; i < 4; i++) memcpy(out + 8 * i, &words[i * L + l], 8);
      mask[l] = ~0ULL;
      if (next < n) {
        current[l] = static_cast<int64_t>(next);
        block[l] = 0;
        blocks[l] = block_count(jobs[next].len);
        next++;
      } else {
        current[l] = -1;
        active--;
      }
    }
    const V m = O::load(mask);
    for (int i = 0; i < 25; i++) s[i] = O::clear(m, s[i]);
  }
}
