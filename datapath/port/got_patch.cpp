#include "datapath/port/got_patch.h"

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace uroce::port {

namespace {

#if defined(__x86_64__)
constexpr auto kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr auto kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr auto kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr auto kGlobDat = R_AARCH64_GLOB_DAT;
#else
#error "got_patch.cpp: the GOT relocation types of this target are not listed"
#endif

// What a search found in the first object whose file name matches.
struct Slots {
  std::string_view object;
  std::string_view symbol;
  bool found_object = false;
  std::vector<void**> slots;
  std::uintptr_t relro_begin = 0;  // PT_GNU_RELRO: [begin, end)
  std::uintptr_t relro_end = 0;
};

std::string_view file_name(const char* path) {
  std::string_view p = path == nullptr ? std::string_view{} : std::string_view{path};
  const std::size_t slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

// A dynamic entry's address: glibc rewrites the tags it uses to absolute
// addresses in place where the dynamic section is writable; where it is
// not, they are still offsets from the load base.
template <class T>
T* dyn_ptr(ElfW(Addr) value, ElfW(Addr) base) {
  return reinterpret_cast<T*>(value < base ? value + base : value);
}

void collect(const ElfW(Rela) * rel, std::size_t bytes, const ElfW(Sym) * symtab,
             const char* strtab, ElfW(Addr) base, Slots* s) {
  for (std::size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
    const auto type = ELF64_R_TYPE(rel[i].r_info);
    if (type != kJumpSlot && type != kGlobDat) continue;
    const ElfW(Sym)& sym = symtab[ELF64_R_SYM(rel[i].r_info)];
    if (s->symbol != std::string_view{strtab + sym.st_name}) continue;
    s->slots.push_back(reinterpret_cast<void**>(base + rel[i].r_offset));
  }
}

int find_slots(dl_phdr_info* info, std::size_t, void* arg) {
  auto* s = static_cast<Slots*>(arg);
  if (!file_name(info->dlpi_name).starts_with(s->object)) return 0;
  s->found_object = true;
  const ElfW(Addr) base = info->dlpi_addr;
  const ElfW(Dyn)* dyn = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) dyn = reinterpret_cast<const ElfW(Dyn)*>(base + ph.p_vaddr);
    if (ph.p_type == PT_GNU_RELRO) {
      s->relro_begin = base + ph.p_vaddr;
      s->relro_end = s->relro_begin + ph.p_memsz;
    }
  }
  if (dyn == nullptr) return 1;
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const ElfW(Rela)* jmprel = nullptr;
  const ElfW(Rela)* rela = nullptr;
  std::size_t jmprel_bytes = 0;
  std::size_t rela_bytes = 0;
  bool plt_is_rela = true;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: symtab = dyn_ptr<const ElfW(Sym)>(d->d_un.d_ptr, base); break;
      case DT_STRTAB: strtab = dyn_ptr<const char>(d->d_un.d_ptr, base); break;
      case DT_JMPREL: jmprel = dyn_ptr<const ElfW(Rela)>(d->d_un.d_ptr, base); break;
      case DT_PLTRELSZ: jmprel_bytes = d->d_un.d_val; break;
      case DT_RELA: rela = dyn_ptr<const ElfW(Rela)>(d->d_un.d_ptr, base); break;
      case DT_RELASZ: rela_bytes = d->d_un.d_val; break;
      case DT_PLTREL: plt_is_rela = d->d_un.d_val == DT_RELA; break;
      default: break;
    }
  }
  if (symtab == nullptr || strtab == nullptr) return 1;
  if (jmprel != nullptr && plt_is_rela) collect(jmprel, jmprel_bytes, symtab, strtab, base, s);
  if (rela != nullptr) collect(rela, rela_bytes, symtab, strtab, base, s);
  // Some linkers count .rela.plt in DT_RELASZ too: each slot once.
  std::sort(s->slots.begin(), s->slots.end());
  s->slots.erase(std::unique(s->slots.begin(), s->slots.end()), s->slots.end());
  return 1;  // the first match only
}

Slots search(std::string_view object, std::string_view symbol) {
  Slots s{.object = object, .symbol = symbol};
  dl_iterate_phdr(find_slots, &s);
  return s;
}

}  // namespace

std::vector<void*> got_slot_targets(std::string_view object, std::string_view symbol) {
  std::vector<void*> out;
  for (void** slot : search(object, symbol).slots) {
    out.push_back(std::atomic_ref<void*>(*slot).load(std::memory_order_acquire));
  }
  return out;
}

int patch_got(std::string_view object, std::string_view symbol, void* replacement,
              std::string* error) {
  const Slots s = search(object, symbol);
  if (!s.found_object) {
    *error = "no loaded object named " + std::string(object) + "*";
    return -ENOENT;
  }
  if (s.slots.empty()) {
    *error = std::string(object) + " imports no " + std::string(symbol);
    return -ENOENT;
  }
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  // The dynamic linker makes read-only only the whole pages of the RELRO
  // segment (its start and end rounded down): a slot on the partial page
  // after them stays writable, and so does that page.
  const std::uintptr_t ro_begin = s.relro_begin & ~(page - 1);
  const std::uintptr_t ro_end = s.relro_end & ~(page - 1);
  for (void** slot : s.slots) {
    const auto at = reinterpret_cast<std::uintptr_t>(slot);
    const bool ro = at >= ro_begin && at < ro_end;
    void* const first = reinterpret_cast<void*>(at & ~(page - 1));
    if (ro && mprotect(first, page, PROT_READ | PROT_WRITE) != 0) {
      const int err = errno;
      *error = "cannot make the GOT of " + std::string(object) + " writable: " + std::strerror(err);
      return -err;
    }
    std::atomic_ref<void*>(*slot).store(replacement, std::memory_order_release);
    if (ro && mprotect(first, page, PROT_READ) != 0) {
      const int err = errno;
      *error = "cannot make the GOT of " + std::string(object) +
               " read-only again: " + std::strerror(err);
      return -err;
    }
  }
  return static_cast<int>(s.slots.size());
}

}  // namespace uroce::port
