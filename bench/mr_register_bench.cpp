// uroce-mr-register-bench: what registering a private buffer costs the
// application, in the provider's remap (verbs-provider/mr_remap.h) and in
// the first write to each page after it (docs/shm.md, "Remap"). Maps
// --mib MiB of anonymous private memory (written once first with
// --touched, as a buffer the application already used), registers it with
// the process's memfd registry as reg_mr does, then writes one byte of
// each page, as a receive queue's first lap does.
//
//   uroce-mr-register-bench [--mib N] [--touched]
//
// Prints one JSON line: {"bench": "mr-register", "mib": N, "touched":
// B, "register_ms": X, "first_lap_ms": Y}.
#include <sys/mman.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>

#include "verbs-provider/mr_remap.h"

namespace {

double ms_between(std::chrono::steady_clock::time_point a,
                  std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"uroce-mr-register-bench: a registration's remap and the first lap after it"};
  std::size_t mib = 64;
  bool touched = false;
  app.add_option("--mib", mib, "buffer size, MiB")->check(CLI::Range(1, 65536));
  app.add_flag("--touched", touched, "write each page before registering");
  CLI11_PARSE(app, argc, argv);

  const std::size_t len = mib << 20;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  auto* p = static_cast<volatile unsigned char*>(
      ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (p == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  if (touched) {
    for (std::size_t off = 0; off < len; off += page) p[off] = 1;
  }
  uroce::provider::MemfdRegistry reg(0);
  uroce::provider::MrBacking backing;
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = reg.acquire(const_cast<unsigned char*>(p), len, &backing);
  const auto t1 = std::chrono::steady_clock::now();
  if (rc != 0) {
    std::fprintf(stderr, "uroce-mr-register-bench: acquire: %d\n", rc);
    return 1;
  }
  for (std::size_t off = 0; off < len; off += page) p[off] = 2;
  const auto t2 = std::chrono::steady_clock::now();
  std::printf(
      "{\"bench\": \"mr-register\", \"mib\": %zu, \"touched\": %s, \"register_ms\": %.1f, "
      "\"first_lap_ms\": %.1f}\n",
      mib, touched ? "true" : "false", ms_between(t0, t1), ms_between(t1, t2));
  reg.release(backing);
  ::munmap(const_cast<unsigned char*>(p), len);
  return 0;
}
