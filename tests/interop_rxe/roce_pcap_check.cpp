// roce_pcap_check: reads a classic pcap file (LINKTYPE_ETHERNET) and checks
// every frame in it with our own RoCEv2 parser, ICRC included
// (wire::parse_roce). Used on the captures of scripts/interop-rxe.sh, where
// half of the frames come from Linux rdma_rxe: a frame rxe accepted but we
// reject (or the reverse) is a disagreement one of us must fix.
//
//   roce_pcap_check [--require-from IPV4]... [--list] FILE.pcap
//
// Prints frame counts per opcode and per direction (source -> destination
// IPv4). With --list, also one line per frame: "frame N icrc 0xXXXXXXXX"
// (the 4 ICRC bytes in wire order, read as a big-endian number: what
// tshark shows as infiniband.invariant.crc), for the caller to compare with
// tshark's decode.
// Exit status: 0 when every frame parses with a good ICRC, there is at least
// one frame, and every --require-from address sent at least one; 1
// otherwise; 2 on a usage or file error.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "datapath/wire/addr.h"
#include "datapath/wire/byteorder.h"
#include "datapath/wire/icrc.h"
#include "datapath/wire/opcodes.h"
#include "datapath/wire/parser.h"

namespace {

namespace wire = uroce::wire;

constexpr std::uint32_t kMagicMicros = 0xa1b2c3d4;
constexpr std::uint32_t kMagicNanos = 0xa1b23c4d;
constexpr std::uint32_t kLinktypeEthernet = 1;
constexpr std::size_t kFileHeaderSize = 24;
constexpr std::size_t kRecordHeaderSize = 16;
// Larger than any frame we send or accept (9216-byte MTU plus headers).
constexpr std::uint32_t kMaxFrame = 65535;

std::uint32_t swap32(std::uint32_t v) { return __builtin_bswap32(v); }

// The classic pcap format: a 24-byte file header (magic, version, zone,
// sigfigs, snaplen, linktype), then per frame a 16-byte record header
// (ts_sec, ts_frac, incl_len, orig_len) and incl_len bytes. The byte order
// is the writer's; the magic tells which.
class PcapReader {
 public:
  ~PcapReader() {
    if (f_ != nullptr) std::fclose(f_);
  }
  // Returns an empty string or what is wrong.
  std::string open(const char* path) {
    f_ = std::fopen(path, "rb");
    if (f_ == nullptr) return std::string("cannot open: ") + std::strerror(errno);
    std::uint8_t h[kFileHeaderSize];
    if (std::fread(h, 1, sizeof h, f_) != sizeof h) return "shorter than a pcap file header";
    std::uint32_t magic = 0;
    std::memcpy(&magic, h, 4);
    if (magic == swap32(kMagicMicros) || magic == swap32(kMagicNanos)) swapped_ = true;
    magic = get32(h);
    if (magic != kMagicMicros && magic != kMagicNanos) {
      return "not a classic pcap file (pcapng? write with -F pcap)";
    }
    if (get32(h + 20) != kLinktypeEthernet) {
      return "link type " + std::to_string(get32(h + 20)) + " is not Ethernet (1)";
    }
    return {};
  }
  // 1: a frame in `frame`; 0: end of file; -1: error (in `err`).
  int next(std::vector<std::uint8_t>& frame, std::string& err) {
    std::uint8_t r[kRecordHeaderSize];
    const std::size_t n = std::fread(r, 1, sizeof r, f_);
    if (n == 0) return 0;
    if (n != sizeof r) {
      err = "truncated record header";
      return -1;
    }
    const std::uint32_t incl = get32(r + 8);
    const std::uint32_t orig = get32(r + 12);
    if (incl > kMaxFrame) {
      err = "record length " + std::to_string(incl) + " too large";
      return -1;
    }
    if (incl != orig) {
      err = "frame cut by the snaplen (" + std::to_string(incl) + " of " + std::to_string(orig) +
            " bytes): capture with a larger snaplen";
      return -1;
    }
    frame.resize(incl);
    if (std::fread(frame.data(), 1, incl, f_) != incl) {
      err = "truncated frame data";
      return -1;
    }
    return 1;
  }

 private:
  std::uint32_t get32(const std::uint8_t* p) const {
    std::uint32_t v = 0;
    std::memcpy(&v, p, 4);
    return swapped_ ? swap32(v) : v;
  }
  std::FILE* f_ = nullptr;
  bool swapped_ = false;
};

int usage() {
  std::fprintf(stderr, "usage: roce_pcap_check [--require-from IPV4]... [--list] FILE.pcap\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> required;
  bool list = false;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--require-from" && i + 1 < argc) {
      required.emplace_back(argv[++i]);
      if (!wire::Ipv4Addr::parse(required.back())) {
        std::fprintf(stderr, "--require-from: '%s' is not an IPv4 address\n",
                     required.back().c_str());
        return 2;
      }
    } else if (a == "--list") {
      list = true;
    } else if (path == nullptr && !a.starts_with("-")) {
      path = argv[i];
    } else {
      return usage();
    }
  }
  if (path == nullptr) return usage();

  PcapReader in;
  if (const std::string err = in.open(path); !err.empty()) {
    std::fprintf(stderr, "%s: %s\n", path, err.c_str());
    return 2;
  }
  std::map<std::string, std::uint64_t> per_opcode;
  std::map<std::pair<std::string, std::string>, std::uint64_t> per_direction;
  std::map<std::string, std::uint64_t> per_error;
  std::uint64_t frames = 0;
  std::uint64_t bad = 0;
  std::vector<std::uint8_t> frame;
  std::string err;
  int r = 0;
  while ((r = in.next(frame, err)) == 1) {
    ++frames;
    wire::ParsedPacket p;
    const wire::ParseError e = parse_roce(std::span<const std::uint8_t>(frame), p);
    if (e != wire::ParseError::kOk) {
      ++bad;
      ++per_error[std::string(wire::parse_error_name(e))];
      std::printf("BAD frame %llu (%zu bytes): %s\n", static_cast<unsigned long long>(frames),
                  frame.size(), std::string(wire::parse_error_name(e)).c_str());
      continue;
    }
    ++per_opcode[std::string(p.info->name)];
    ++per_direction[{p.ip.src().to_string(), p.ip.dst().to_string()}];
    if (list) {
      std::printf("frame %llu icrc 0x%08x\n", static_cast<unsigned long long>(frames),
                  wire::load_be32(frame.data() + p.icrc_offset));
    }
  }
  if (r < 0) {
    std::fprintf(stderr, "%s: frame %llu: %s\n", path, static_cast<unsigned long long>(frames + 1),
                 err.c_str());
    return 2;
  }

  std::printf("%s: %llu RoCEv2 frames, %llu bad\n", path, static_cast<unsigned long long>(frames),
              static_cast<unsigned long long>(bad));
  for (const auto& [name, n] : per_opcode) {
    std::printf("  opcode %-32s %llu\n", name.c_str(), static_cast<unsigned long long>(n));
  }
  for (const auto& [dir, n] : per_direction) {
    std::printf("  %s -> %s: %llu\n", dir.first.c_str(), dir.second.c_str(),
                static_cast<unsigned long long>(n));
  }
  for (const auto& [name, n] : per_error) {
    std::printf("  error %-33s %llu\n", name.c_str(), static_cast<unsigned long long>(n));
  }
  bool ok = frames > 0 && bad == 0;
  if (frames == 0) std::printf("FAIL: no frames\n");
  for (const std::string& ip : required) {
    std::uint64_t n = 0;
    for (const auto& [dir, c] : per_direction) {
      if (dir.first == ip) n += c;
    }
    if (n == 0) {
      std::printf("FAIL: no good frame from %s\n", ip.c_str());
      ok = false;
    }
  }
  return ok ? 0 : 1;
}
