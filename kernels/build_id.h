#pragma once
// The GNU build ID of the binary this code was linked into (readelf -n shows it), as hex. The
// linear tuner keys its per-machine cache on it: a cached choice between our kernel and OpenBLAS
// was measured with one build's kernels, and a rebuild that makes a kernel faster must time it
// again (a stale cache kept the forced-AVX2 engine on OpenBLAS at M >= 64 after its kernel had
// become 1.3x faster than OpenBLAS there).
#include <string>

namespace ps {

// 40 hex digits with Debian's default linker flags (--build-id=sha1); "unknown" when the
// binary carries no build-ID note.
std::string build_id();

}  // namespace ps
