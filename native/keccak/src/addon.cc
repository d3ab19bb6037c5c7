// Node-API entry points of the batch Keccak-256 addon.
//
//   implementations(): string[]   the implementations this CPU runs, slowest first: "scalar", then "avx2x4",
//                                 "avx512x4", "avx512x8" when the CPU (and the OS, for the wider registers) has them
//   hashJobs(arena: Uint8Array, jobs: Uint32Array, count: number, implementation: number): void
//       job k is jobs[4k … 4k+3] = [start, length, dest, level]: keccak256(arena[start, start+length)) is written
//       to arena[dest, dest+32). Jobs run level by level, lowest first, so a job may hash bytes that jobs of lower
//       levels write (a trie node holding its children's hashes); within one level no job's dest may overlap
//       another's input. Every range is checked against the arena before anything runs (RangeError).
//   bloomBits(bytes: Uint8Array, values: Uint32Array, count: number, blooms: Uint8Array, blockBloom: Uint8Array,
//             implementation: number): void
//       value k is values[3k … 3k+2] = [start, length, bloom]: keccak256(bytes[start, start+length)) sets its three
//       logs-bloom bits (the first three 11-bit big-endian pairs of the hash) in blooms[bloom, bloom+256) and in
//       blockBloom[0, 256). Every range is checked before anything runs (RangeError). Values of 1 … 32 bytes seen
//       recently (a per-thread cache of 4,096 values, exact: a hit compares every byte) are not hashed again.
//   KeccakStream: a running Keccak-256 kept natively (the RLPx frame MAC's hash; see stream.h)
//       new KeccakStream(implementation?: number)   the empty sponge, on streamImplementations()[implementation]
//                                     (the last, fastest, by default)
//       absorb(bytes: Uint8Array)     absorbs bytes of any length
//       absorbXor(a, b: Uint8Array)   absorbs a[i] ^ b[i] for i below the shorter's length (devp2p's xor)
//       digest(out: Uint8Array)       writes the first min(out.length, 32) bytes of keccak256 of all absorbed so
//                                     far; the stream goes on unchanged
//   streamImplementations(): string[]   "portable", then "bmi2" on x86-64 with BMI1 and BMI2
#include <node_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "job.h"
#include "stream.h"

namespace {

using Runner = void (*)(const KeccakJob*, size_t);

struct Implementation {
  const char* name;
  Runner run;
  int lanes;
};

std::vector<Implementation> available() {
  std::vector<Implementation> out{{"scalar", keccak_run_scalar, 1}};
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) out.push_back({"avx2x4", keccak_run_avx2x4, 4});
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
    out.push_back({"avx512x4", keccak_run_avx512x4, 4});
    out.push_back({"avx512x8", keccak_run_avx512x8, 8});
  }
#endif
  return out;
}

const std::vector<Implementation>& implementations() {
  static const std::vector<Implementation> list = available();
  return list;
}

napi_value Throw(napi_env env, const char* message, bool range = false) {
  if (range) napi_throw_range_error(env, nullptr, message);
  else napi_throw_type_error(env, nullptr, message);
  return nullptr;
}

bool TypedArray(napi_env env, napi_value value, napi_typedarray_type want, void** data, size_t* length) {
  bool is = false;
  if (napi_is_typedarray(env, value, &is) != napi_ok || !is) return false;
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset;
  if (napi_get_typedarray_info(env, value, &type, length, data, &buffer, &offset) != napi_ok) return false;
  return type == want;
}

/** A JS array of the `name`s of `list`'s items (pointers or not). */
template <typename List>
napi_value Names(napi_env env, const List& list) {
  napi_value array;
  napi_create_array_with_length(env, list.size(), &array);
  for (size_t i = 0; i < list.size(); i++) {
    napi_value name;
    const char* text;
    if constexpr (std::is_pointer_v<typename List::value_type>) text = list[i]->name;
    else text = list[i].name;
    napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &name);
    napi_set_element(env, array, static_cast<uint32_t>(i), name);
  }
  return array;
}

napi_value Implementations(napi_env env, napi_callback_info) { return Names(env, implementations()); }

constexpr uint32_t kMaxLevel = 255;

struct Scratch {
  std::vector<KeccakJob> jobs;
  std::vector<uint32_t> levelCounts;
};

napi_value HashJobs(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (argc < 4) return Throw(env, "hashJobs(arena, jobs, count, implementation)");
  void* arenaData;
  size_t arenaLength;
  if (!TypedArray(env, argv[0], napi_uint8_array, &arenaData, &arenaLength)) return Throw(env, "arena must be a Uint8Array");
  void* jobsData;
  size_t jobsLength;
  if (!TypedArray(env, argv[1], napi_uint32_array, &jobsData, &jobsLength)) return Throw(env, "jobs must be a Uint32Array");
  uint32_t count, which;
  if (napi_get_value_uint32(env, argv[2], &count) != napi_ok) return Throw(env, "count must be a number");
  if (napi_get_value_uint32(env, argv[3], &which) != napi_ok) return Throw(env, "implementation must be a number");
  const auto& list = implementations();
  if (which >= list.size()) return Throw(env, "no such implementation on this CPU", true);
  if (static_cast<uint64_t>(count) * 4 > jobsLength) return Throw(env, "jobs holds fewer than count jobs", true);
  if (count == 0) return nullptr;

  uint8_t* arena = static_cast<uint8_t*>(arenaData);
  const uint32_t* raw = static_cast<const uint32_t*>(jobsData);
  static thread_local Scratch scratch;  // one per worker thread: calls on a thread never overlap
  auto& counts = scratch.levelCounts;
  counts.assign(kMaxLevel + 2, 0);
  uint32_t top = 0;
  for (uint32_t k = 0; k < count; k++) {
    const uint64_t start = raw[4 * k], length = raw[4 * k + 1], dest = raw[4 * k + 2], level = raw[4 * k + 3];
    if (start + length > arenaLength || dest + 32 > arenaLength) return Throw(env, "a job's range lies outside the arena", true);
    if (level > kMaxLevel) return Throw(env, "a job's level is above 255", true);
    counts[level + 1]++;
    if (level > top) top = static_cast<uint32_t>(level);
  }
  for (uint32_t level = 1; level <= top + 1; level++) counts[level] += counts[level - 1];
  auto& jobs = scratch.jobs;
  jobs.resize(count);
  // counts[level] is now where that level's jobs start; place them (a counting sort by level).
  std::vector<uint32_t> cursor(counts.begin(), counts.begin() + top + 2);
  for (uint32_t k = 0; k < count; k++) {
    const uint32_t level = raw[4 * k + 3];
    jobs[cursor[level]++] = KeccakJob{arena + raw[4 * k], raw[4 * k + 1], arena + raw[4 * k + 2]};
  }
  const Implementation& impl = list[which];
  for (uint32_t level = 0; level <= top; level++) {
    KeccakJob* first = jobs.data() + counts[level];
    const size_t n = counts[level + 1] - counts[level];
    if (n == 0) continue;
    if (n == 1 || impl.lanes == 1) {
      keccak_run_scalar(first, n);
      continue;
    }
    // Longest first, so lanes finish together (a lane refills as soon as its input is done).
    if (n > static_cast<size_t>(impl.lanes)) {
      std::stable_sort(first, first + n, [](const KeccakJob& a, const KeccakJob& b) { return a.len / 136 > b.len / 136; });
    }
    impl.run(first, n);
  }
  return nullptr;
}

constexpr size_t kBloomBytes = 256;

// The bloom bit indexes of recently seen values (a token's address, the Transfer topic and busy accounts repeat
// across a block's logs and from block to block), so most values skip their hash: direct-mapped, one per thread; a
// hit requires every byte to be equal, so it only ever answers for the very same value.
constexpr uint32_t kCacheSlots = 4096;
constexpr uint32_t kCacheValueBytes = 32;

struct BloomCache {
  uint8_t values[kCacheSlots][kCacheValueBytes];
  uint8_t lengths[kCacheSlots] = {};  // 0: empty
  uint16_t bits[kCacheSlots][3];
  uint32_t pendingJob[kCacheSlots] = {};  // job + 1 while the slot's value is being hashed in this call
};

struct BloomScratch {
  BloomCache cache;
  std::vector<KeccakJob> jobs;
  std::vector<uint8_t> hashes;
  std::vector<uint32_t> jobValue;  // the value each job hashes
  std::vector<int32_t> jobSlot;    // the cache slot it fills, or -1
  std::vector<uint32_t> waiting;   // pairs (value, job): a repeat of a value hashed in this call
};

uint32_t CacheSlot(const uint8_t* value, uint32_t length) {
  uint64_t key = static_cast<uint64_t>(length) << 56;
  if (length >= 8) {
    uint64_t tail;
    memcpy(&tail, value + length - 8, 8);
    key ^= tail;
  } else {
    for (uint32_t i = 0; i < length; i++) key ^= static_cast<uint64_t>(value[i]) << (8 * i);
  }
  return static_cast<uint32_t>((key * 0x9E3779B97F4A7C15ULL) >> 52) & (kCacheSlots - 1);
}

void BitsOf(const uint8_t* hash, uint16_t* bits) {
  for (int i = 0; i < 3; i++) bits[i] = ((static_cast<uint16_t>(hash[2 * i]) << 8) | hash[2 * i + 1]) & 2047;
}

void SetBloomBits(uint8_t* bloom, const uint16_t* bits) {
  for (int i = 0; i < 3; i++) bloom[kBloomBytes - 1 - (bits[i] >> 3)] |= static_cast<uint8_t>(1u << (bits[i] & 7));
}

napi_value BloomBits(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (argc < 6) return Throw(env, "bloomBits(bytes, values, count, blooms, blockBloom, implementation)");
  void *bytesData, *valuesData, *bloomsData, *blockData;
  size_t bytesLength, valuesLength, bloomsLength, blockLength;
  if (!TypedArray(env, argv[0], napi_uint8_array, &bytesData, &bytesLength)) return Throw(env, "bytes must be a Uint8Array");
  if (!TypedArray(env, argv[1], napi_uint32_array, &valuesData, &valuesLength)) return Throw(env, "values must be a Uint32Array");
  if (!TypedArray(env, argv[3], napi_uint8_array, &bloomsData, &bloomsLength)) return Throw(env, "blooms must be a Uint8Array");
  if (!TypedArray(env, argv[4], napi_uint8_array, &blockData, &blockLength)) return Throw(env, "blockBloom must be a Uint8Array");
  uint32_t count, which;
  if (napi_get_value_uint32(env, argv[2], &count) != napi_ok) return Throw(env, "count must be a number");
  if (napi_get_value_uint32(env, argv[5], &which) != napi_ok) return Throw(env, "implementation must be a number");
  const auto& list = implementations();
  if (which >= list.size()) return Throw(env, "no such implementation on this CPU", true);
  if (static_cast<uint64_t>(count) * 3 > valuesLength) return Throw(env, "values holds fewer than count values", true);
  if (blockLength < kBloomBytes) return Throw(env, "blockBloom must hold 256 bytes", true);
  const uint8_t* bytes = static_cast<const uint8_t*>(bytesData);
  const uint32_t* values = static_cast<const uint32_t*>(valuesData);
  uint8_t* blooms = static_cast<uint8_t*>(bloomsData);
  uint8_t* block = static_cast<uint8_t*>(blockData);
  for (uint32_t k = 0; k < count; k++) {
    const uint64_t start = values[3 * k], length = values[3 * k + 1], bloom = values[3 * k + 2];
    if (start + length > bytesLength || bloom + kBloomBytes > bloomsLength) return Throw(env, "a value's range lies outside its array", true);
  }
  static thread_local std::unique_ptr<BloomScratch> owned;  // one per worker thread: calls on a thread never overlap
  if (!owned) owned = std::make_unique<BloomScratch>();
  BloomScratch& scratch = *owned;
  BloomCache& cache = scratch.cache;
  scratch.jobs.clear();
  scratch.jobValue.clear();
  scratch.jobSlot.clear();
  scratch.waiting.clear();
  for (uint32_t k = 0; k < count; k++) {
    const uint8_t* value = bytes + values[3 * k];
    const uint32_t length = values[3 * k + 1];
    int32_t slot = -1;
    if (length > 0 && length <= kCacheValueBytes) {
      slot = static_cast<int32_t>(CacheSlot(value, length));
      if (cache.lengths[slot] == length && memcmp(cache.values[slot], value, length) == 0) {
        if (cache.pendingJob[slot] != 0) {
          scratch.waiting.push_back(k);
          scratch.waiting.push_back(cache.pendingJob[slot] - 1);
        } else {
          SetBloomBits(blooms + values[3 * k + 2], cache.bits[slot]);
          SetBloomBits(block, cache.bits[slot]);
        }
        continue;
      }
      memcpy(cache.values[slot], value, length);
      cache.lengths[slot] = static_cast<uint8_t>(length);
      cache.pendingJob[slot] = static_cast<uint32_t>(scratch.jobs.size()) + 1;
    }
    scratch.jobValue.push_back(k);
    scratch.jobSlot.push_back(slot);
    scratch.jobs.push_back(KeccakJob{value, length, nullptr});
  }
  const size_t jobs = scratch.jobs.size();
  scratch.hashes.resize(jobs * 32);
  for (size_t j = 0; j < jobs; j++) scratch.jobs[j].out = scratch.hashes.data() + 32 * j;
  const Implementation& impl = list[which];
  if (jobs > 0) {
    if (jobs == 1 || impl.lanes == 1) keccak_run_scalar(scratch.jobs.data(), jobs);
    else impl.run(scratch.jobs.data(), jobs);
  }
  uint16_t bits[3];
  for (size_t j = 0; j < jobs; j++) {
    BitsOf(scratch.hashes.data() + 32 * j, bits);
    SetBloomBits(blooms + values[3 * scratch.jobValue[j] + 2], bits);
    SetBloomBits(block, bits);
    const int32_t slot = scratch.jobSlot[j];
    if (slot >= 0 && cache.pendingJob[slot] == j + 1) {
      memcpy(cache.bits[slot], bits, sizeof bits);
      cache.pendingJob[slot] = 0;
    }
  }
  for (size_t i = 0; i < scratch.waiting.size(); i += 2) {
    BitsOf(scratch.hashes.data() + 32 * scratch.waiting[i + 1], bits);
    SetBloomBits(blooms + values[3 * scratch.waiting[i] + 2], bits);
    SetBloomBits(block, bits);
  }
  return nullptr;
}

std::vector<const KeccakStreamFns*> availableStreams() {
  std::vector<const KeccakStreamFns*> out{&keccak_stream_portable};
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2")) out.push_back(&keccak_stream_bmi2);
#endif
  return out;
}

const std::vector<const KeccakStreamFns*>& streamImplementations() {
  static const std::vector<const KeccakStreamFns*> list = availableStreams();
  return list;
}

napi_value StreamImplementations(napi_env env, napi_callback_info) { return Names(env, streamImplementations()); }

struct WrappedStream {
  KeccakStream state;
  const KeccakStreamFns* fns;
};

void DeleteStream(napi_env, void* data, void*) { delete static_cast<WrappedStream*>(data); }

napi_value NewStream(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_value self;
  napi_get_cb_info(env, info, &argc, argv, &self, nullptr);
  const auto& list = streamImplementations();
  uint32_t which = static_cast<uint32_t>(list.size() - 1);
  napi_valuetype type = napi_undefined;
  if (argc >= 1) napi_typeof(env, argv[0], &type);
  if (type != napi_undefined && (napi_get_value_uint32(env, argv[0], &which) != napi_ok || which >= list.size())) {
    return Throw(env, "no such stream implementation on this CPU", true);
  }
  auto* stream = new WrappedStream{KeccakStream{}, list[which]};
  if (napi_wrap(env, self, stream, DeleteStream, nullptr, nullptr) != napi_ok) {
    delete stream;
    return Throw(env, "KeccakStream must be called with new");
  }
  return nullptr;
}

/** A stream method's call: the stream `this` holds and its Uint8Array arguments (`ok` false, with a TypeError thrown, when any is wrong). */
struct StreamCall {
  WrappedStream* stream = nullptr;
  uint8_t* bytes[2] = {nullptr, nullptr};
  size_t lengths[2] = {0, 0};
  bool ok = false;

  StreamCall(napi_env env, napi_callback_info info, size_t want) {
    size_t argc = 2;
    napi_value argv[2];
    napi_value self;
    napi_get_cb_info(env, info, &argc, argv, &self, nullptr);
    void* data;
    if (napi_unwrap(env, self, &data) != napi_ok) {
      Throw(env, "not a KeccakStream");
      return;
    }
    stream = static_cast<WrappedStream*>(data);
    for (size_t i = 0; i < want; i++) {
      void* raw;
      if (i >= argc || !TypedArray(env, argv[i], napi_uint8_array, &raw, &lengths[i])) {
        Throw(env, "expected a Uint8Array");
        return;
      }
      bytes[i] = static_cast<uint8_t*>(raw);
    }
    ok = true;
  }
};

napi_value StreamAbsorb(napi_env env, napi_callback_info info) {
  StreamCall call(env, info, 1);
  if (call.ok) call.stream->fns->absorb(&call.stream->state, call.bytes[0], call.lengths[0]);
  return nullptr;
}

napi_value StreamAbsorbXor(napi_env env, napi_callback_info info) {
  StreamCall call(env, info, 2);
  if (!call.ok) return nullptr;
  const size_t length = std::min(call.lengths[0], call.lengths[1]);
  uint8_t chunk[64];
  for (size_t at = 0; at < length; at += sizeof chunk) {
    const size_t n = std::min(sizeof chunk, length - at);
    for (size_t i = 0; i < n; i++) chunk[i] = call.bytes[0][at + i] ^ call.bytes[1][at + i];
    call.stream->fns->absorb(&call.stream->state, chunk, n);
  }
  return nullptr;
}

napi_value StreamDigest(napi_env env, napi_callback_info info) {
  StreamCall call(env, info, 1);
  if (!call.ok) return nullptr;
  uint8_t hash[32];
  call.stream->fns->digest(&call.stream->state, hash);
  memcpy(call.bytes[0], hash, std::min(call.lengths[0], sizeof hash));
  return nullptr;
}

napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor streamMethods[] = {
      {"absorb", nullptr, StreamAbsorb, nullptr, nullptr, nullptr, napi_default_method, nullptr},
      {"absorbXor", nullptr, StreamAbsorbXor, nullptr, nullptr, nullptr, napi_default_method, nullptr},
      {"digest", nullptr, StreamDigest, nullptr, nullptr, nullptr, napi_default_method, nullptr},
  };
  napi_value streamClass;
  napi_define_class(env, "KeccakStream", NAPI_AUTO_LENGTH, NewStream, nullptr, sizeof(streamMethods) / sizeof(streamMethods[0]), streamMethods, &streamClass);
  napi_property_descriptor properties[] = {
      {"implementations", nullptr, Implementations, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"hashJobs", nullptr, HashJobs, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"bloomBits", nullptr, BloomBits, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"streamImplementations", nullptr, StreamImplementations, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"KeccakStream", nullptr, nullptr, nullptr, nullptr, streamClass, napi_enumerable, nullptr},
  };
  napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties);
  return exports;
}

}  // namespace

NAPI_MODULE_INIT() { return Init(env, exports); }
