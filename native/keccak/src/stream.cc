// The running Keccak-256 (stream.h) in portable C++.
#include <cstring>
#include "job.h"
#include "stream.h"

namespace {
#include "stream_body.h"
}  // namespace

const KeccakStreamFns keccak_stream_portable{"portable", absorb, digest};
