// Issue 12's ASan soak: what clang-14's ASan runtime keeps per thread a
// process creates and joins, with no application memory involved. Creates
// and joins threads 50 at a time (each touches 256 bytes of its stack) and
// prints the RSS every 2,000 threads. Built by hand, outside the build:
//
//   clang++-14 -std=c++20 -O1 -fsanitize=address -pthread \
//     scripts/lib/asan_thread_churn.cpp -o /tmp/asan_thread_churn
//   ASAN_OPTIONS=quarantine_size_mb=0:thread_local_quarantine_size_kb=0 \
//     /tmp/asan_thread_churn 12000
//
// and the same without -fsanitize=address for the plain figure.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

long status_kb(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key, 0) == 0) return std::atol(line.c_str() + std::strlen(key));
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  const int total = argc > 1 ? std::atoi(argv[1]) : 12000;
  for (int done = 0; done <= total; done += 50) {
    if (done % 2000 == 0) std::printf("threads %5d rss_kb %7ld\n", done, status_kb("VmRSS:"));
    std::vector<std::thread> batch;
    for (int i = 0; i < 50; ++i) {
      batch.emplace_back([] {
        volatile char touched[256];
        touched[1] = 1;
      });
    }
    for (auto& t : batch) t.join();
  }
  return 0;
}
