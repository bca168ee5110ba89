// mpi_check: what an MPI application asks of a verbs device, checked byte for
// byte between two ranks (verbs_mpi, run by mpirun over the UCX PML with each
// rank on its own uroce device):
//   - a ping-pong from 1 B to 4 MiB (powers of two), every byte of every
//     message checked on both sides;
//   - an 8-byte ping-pong's latency (printed, not judged);
//   - an allreduce (sum) of 65,536 integers;
//   - one-sided Put and Get through windows on the heap and on the stack,
//     with fence synchronisation.
// Prints one line per check and exits 0 only when every check passed.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

std::uint8_t pattern(std::size_t i, std::size_t size, int salt) {
  return static_cast<std::uint8_t>((i * 131u + size * 7u + static_cast<unsigned>(salt)) & 0xff);
}

bool check(const std::vector<std::uint8_t>& b, std::size_t size, int salt) {
  for (std::size_t i = 0; i < size; ++i) {
    if (b[i] != pattern(i, size, salt)) return false;
  }
  return true;
}

int failures = 0;

void report(int rank, bool ok, const char* what, std::size_t size) {
  if (!ok) ++failures;
  if (rank == 0 || !ok)
    std::printf("rank %d: %s %zu B: %s\n", rank, what, size, ok ? "ok" : "FAILED");
}

void pingpong(int rank) {
  constexpr std::size_t kMax = std::size_t{4} << 20;
  std::vector<std::uint8_t> buf(kMax);
  for (std::size_t size = 1; size <= kMax; size *= 2) {
    bool ok = true;
    const int n = size >= (1u << 20) ? 5 : 20;
    for (int it = 0; it < n; ++it) {
      if (rank == 0) {
        for (std::size_t i = 0; i < size; ++i) buf[i] = pattern(i, size, it);
        MPI_Send(buf.data(), static_cast<int>(size), MPI_BYTE, 1, it, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), static_cast<int>(size), MPI_BYTE, 1, it, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        ok = ok && check(buf, size, it + 1);
      } else {
        MPI_Recv(buf.data(), static_cast<int>(size), MPI_BYTE, 0, it, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        ok = ok && check(buf, size, it);
        for (std::size_t i = 0; i < size; ++i) buf[i] = pattern(i, size, it + 1);
        MPI_Send(buf.data(), static_cast<int>(size), MPI_BYTE, 0, it, MPI_COMM_WORLD);
      }
    }
    report(rank, ok, "ping-pong", size);
  }
}

void allreduce(int rank, int nranks) {
  constexpr int kN = 65536;
  std::vector<int> in(kN), out(kN, -1);
  for (int i = 0; i < kN; ++i) in[i] = i * (rank + 1);
  MPI_Allreduce(in.data(), out.data(), kN, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const int factor = nranks * (nranks + 1) / 2;
  bool ok = true;
  for (int i = 0; i < kN; ++i) ok = ok && out[i] == i * factor;
  report(rank, ok, "allreduce (sum of int)", sizeof(int) * kN);
}

// Rank 0 puts a pattern into rank 1's window, rank 1 checks it; then rank 1
// fills its window with another pattern and rank 0 gets and checks it.
void one_sided(int rank, std::uint8_t* win_mem, std::size_t size, const char* where) {
  MPI_Win win;
  MPI_Win_create(win_mem, static_cast<MPI_Aint>(size), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  std::vector<std::uint8_t> local(size);
  for (std::size_t i = 0; i < size; ++i) win_mem[i] = 0;
  MPI_Win_fence(0, win);
  if (rank == 0) {
    for (std::size_t i = 0; i < size; ++i) local[i] = pattern(i, size, 11);
    MPI_Put(local.data(), static_cast<int>(size), MPI_BYTE, 1, 0, static_cast<int>(size), MPI_BYTE,
            win);
  }
  MPI_Win_fence(0, win);
  bool ok = true;
  if (rank == 1) {
    for (std::size_t i = 0; i < size; ++i) ok = ok && win_mem[i] == pattern(i, size, 11);
    for (std::size_t i = 0; i < size; ++i) win_mem[i] = pattern(i, size, 12);
  }
  MPI_Win_fence(0, win);
  if (rank == 0) {
    MPI_Get(local.data(), static_cast<int>(size), MPI_BYTE, 1, 0, static_cast<int>(size), MPI_BYTE,
            win);
  }
  MPI_Win_fence(0, win);
  if (rank == 0) ok = check(local, size, 12);
  int all = ok ? 1 : 0, both = 0;
  MPI_Allreduce(&all, &both, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  char what[64];
  std::snprintf(what, sizeof what, "one-sided Put/Get, window on the %s", where);
  report(rank, both == 1, what, size);
  MPI_Win_free(&win);
}

}  // namespace

// Half the round-trip time of an 8-byte MPI_Send/MPI_Recv ping-pong, after
// 100 warm-up round trips (a figure for docs/middleware.md, not a check).
void latency(int rank) {
  constexpr int kWarm = 100, kIters = 2000;
  std::uint8_t b[8] = {};
  double t0 = 0;
  for (int i = 0; i < kWarm + kIters; ++i) {
    if (i == kWarm) t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(b, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(b, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(b, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(b, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  }
  const double us = (MPI_Wtime() - t0) / kIters / 2 * 1e6;
  if (rank == 0) std::printf("rank 0: ping-pong latency 8 B: %.1f us (half round trip)\n", us);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (nranks != 2) {
    if (rank == 0) std::fprintf(stderr, "mpi_check: needs exactly 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  pingpong(rank);
  latency(rank);
  allreduce(rank, nranks);
  constexpr std::size_t kWin = 1 << 16;
  std::vector<std::uint8_t> heap(kWin);
  one_sided(rank, heap.data(), kWin, "heap");
  std::uint8_t stack[8192];
  one_sided(rank, stack, sizeof stack, "stack");
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("mpi_check: %s\n", total == 0 ? "all passed" : "FAILED");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
