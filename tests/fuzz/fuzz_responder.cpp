// libFuzzer target: packets into the transports' receive paths (issue 3,
// "bad input"); the rig, the input format and the invariants it checks are
// fuzz_responder_rig.h, the seed corpus writer fuzz_responder_seeds.cpp.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_responder_rig.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  uroce::transport::fuzz_responder::run_script(data, size);
  return 0;
}
