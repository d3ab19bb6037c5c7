// Keccak-256 one input at a time in portable C++ (any CPU): the native fallback below AVX2.
#include <cstring>
#include "job.h"

namespace {
#include "scalar_ops.h"
#include "lanes.h"
}  // namespace

void keccak_run_scalar(const KeccakJob* jobs, size_t n) { run_lanes(jobs, n); }
