// The running Keccak-256 (stream.h) compiled with -mbmi -mbmi2 (χ's and-not in one instruction, rotations without
// touching flags); only called after the CPU was seen to have both.
#include <cstring>
#include "job.h"
#include "stream.h"

#if defined(__x86_64__)
namespace {
#include "stream_body.h"
}  // namespace

const KeccakStreamFns keccak_stream_bmi2{"bmi2", absorb, digest};
#endif
