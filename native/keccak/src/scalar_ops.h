// lanes.h's `O` for one state at a time: plain 64-bit words (scalar.cc, stream.cc, stream_bmi2.cc). Included inside
// an anonymous namespace, after <cstdint>, like lanes.h: each translation unit compiles it with its own flags.
struct O {
  static constexpr int LANES = 1;
  using V = uint64_t;
  static V zero() { return 0; }
  static V set1(uint64_t w) { return w; }
  static V load(const uint64_t* p) { return *p; }
  static void store(uint64_t* p, V v) { *p = v; }
  static V bxor(V a, V b) { return a ^ b; }
  static V xor5(V a, V b, V c, V d, V e) { return a ^ b ^ c ^ d ^ e; }
  static V chi(V a, V b, V c) { return a ^ (~b & c); }
  static V clear(V mask, V a) { return a & ~mask; }
  template <int N>
  static V rol(V a) {
    if constexpr (N == 0) return a;
    else return (a << N) | (a >> (64 - N));
  }
};
