#include "elf_file.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <sys/stat.h>

namespace gpulock::probe::detail {
namespace {

// The class and machine of this process: the loader skips libraries of any other.
#if defined(__x86_64__)
constexpr std::uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr std::uint16_t kHostMachine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr std::uint16_t kHostMachine = EM_PPC64;
#else
constexpr std::uint16_t kHostMachine = 0;
#endif
constexpr bool kHost64 = sizeof(void*) == 8;

// A file read at offsets, with its size for bounds checks.
class File {
 public:
  explicit File(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    struct stat st {};
    if (fd_ >= 0 && ::fstat(fd_, &st) == 0) size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  [[nodiscard]] bool ok() const noexcept { return fd_ >= 0; }
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

  // Reads exactly `n` bytes at `offset`; false if they are not all in the file.
  bool read(std::uint64_t offset, void* into, std::size_t n) const {
    if (offset > size_ || n > size_ - offset) return false;
    auto* p = static_cast<char*>(into);
    while (n > 0) {
      ssize_t r = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      p += r;
      n -= static_cast<std::size_t>(r);
      offset += static_cast<std::uint64_t>(r);
    }
    return true;
  }

  // A NUL-terminated string at `offset`, at most `limit` bytes.
  std::optional<std::string> read_string(std::uint64_t offset, std::size_t limit = 4096) const {
    std::string out;
    char buf[256];
    while (out.size() < limit) {
      std::size_t n = sizeof buf;
      if (offset >= size_) return std::nullopt;
      if (n > size_ - offset) n = static_cast<std::size_t>(size_ - offset);
      if (!read(offset, buf, n)) return std::nullopt;
      const void* nul = std::memchr(buf, '\0', n);
      if (nul != nullptr) {
        out.append(buf, static_cast<std::size_t>(static_cast<const char*>(nul) - buf));
        return out;
      }
      out.append(buf, n);
      offset += n;
    }
    return std::nullopt;
  }

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// Program and section headers, normalized to 64-bit fields.
struct Segment {
  std::uint32_t type;
  std::uint64_t offset, vaddr, filesz, memsz;
};
struct Section {
  std::uint32_t type;
  std::uint32_t link;
  std::uint64_t offset, size, entsize;
};

struct Parsed {
  bool is_64 = false;
  std::uint16_t machine = 0;
  std::uint16_t type = 0;
  std::vector<Segment> segments;
  std::vector<Section> sections;
};

core::Error bad(const std::string& path, std::string what) {
  return core::make_error(core::ErrorCode::InvalidInput, std::move(what), path);
}

template <class Ehdr, class Phdr, class Shdr>
std::expected<Parsed, std::string> parse_headers(const File& f) {
  Ehdr eh{};
  if (!f.read(0, &eh, sizeof eh)) return std::unexpected("truncated ELF header");
  Parsed p;
  p.machine = eh.e_machine;
  p.type = eh.e_type;
  if (eh.e_phnum > 4096 || eh.e_shnum > 65535) return std::unexpected("too many headers");
  if (eh.e_phnum > 0 && eh.e_phentsize != sizeof(Phdr)) return std::unexpected("bad e_phentsize");
  for (std::size_t i = 0; i < eh.e_phnum; ++i) {
    Phdr ph{};
    if (!f.read(eh.e_phoff + i * sizeof(Phdr), &ph, sizeof ph)) {
      return std::unexpected("truncated program headers");
    }
    p.segments.push_back({ph.p_type, ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz});
  }
  if (eh.e_shnum > 0 && eh.e_shentsize == sizeof(Shdr)) {
    for (std::size_t i = 0; i < eh.e_shnum; ++i) {
      Shdr sh{};
      if (!f.read(eh.e_shoff + i * sizeof(Shdr), &sh, sizeof sh)) break;  // optional
      p.sections.push_back({sh.sh_type, sh.sh_link, sh.sh_offset, sh.sh_size, sh.sh_entsize});
    }
  }
  return p;
}

// Header check and parse. The identification bytes must say little-endian ELF (every
// architecture gpulock runs on); the class picks the 32- or 64-bit layout.
std::expected<Parsed, std::string> parse(const File& f) {
  unsigned char ident[EI_NIDENT];
  if (!f.read(0, ident, sizeof ident)) return std::unexpected("not an ELF file (too short)");
  if (std::memcmp(ident, ELFMAG, SELFMAG) != 0) return std::unexpected("not an ELF file");
  if (ident[EI_DATA] != ELFDATA2LSB) return std::unexpected("big-endian ELF file");
  std::expected<Parsed, std::string> p;
  if (ident[EI_CLASS] == ELFCLASS64) {
    p = parse_headers<Elf64_Ehdr, Elf64_Phdr, Elf64_Shdr>(f);
    if (p) p->is_64 = true;
  } else if (ident[EI_CLASS] == ELFCLASS32) {
    p = parse_headers<Elf32_Ehdr, Elf32_Phdr, Elf32_Shdr>(f);
  } else {
    return std::unexpected("unknown ELF class");
  }
  return p;
}

// File offset of virtual address `vaddr` (inside a PT_LOAD's file image).
std::optional<std::uint64_t> vaddr_to_offset(const Parsed& p, std::uint64_t vaddr,
                                             std::uint64_t length = 1) {
  for (const auto& s : p.segments) {
    if (s.type != PT_LOAD) continue;
    if (vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz && length <= s.filesz - (vaddr - s.vaddr)) {
      return s.offset + (vaddr - s.vaddr);
    }
  }
  return std::nullopt;
}

struct DynEntry {
  std::int64_t tag;
  std::uint64_t val;
};

std::vector<DynEntry> dynamic_entries(const File& f, const Parsed& p) {
  std::vector<DynEntry> out;
  for (const auto& s : p.segments) {
    if (s.type != PT_DYNAMIC) continue;
    const std::size_t entsize = p.is_64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
    const std::uint64_t count = std::min<std::uint64_t>(s.filesz / entsize, 65536);
    for (std::uint64_t i = 0; i < count; ++i) {
      DynEntry e{};
      if (p.is_64) {
        Elf64_Dyn d{};
        if (!f.read(s.offset + i * entsize, &d, sizeof d)) break;
        e = {d.d_tag, d.d_un.d_val};
      } else {
        Elf32_Dyn d{};
        if (!f.read(s.offset + i * entsize, &d, sizeof d)) break;
        e = {d.d_tag, d.d_un.d_val};
      }
      if (e.tag == DT_NULL) break;
      out.push_back(e);
    }
    break;
  }
  return out;
}

}  // namespace

bool host_elf_is_64() noexcept {
  return kHost64;
}
std::uint16_t host_elf_machine() noexcept {
  return kHostMachine;
}

core::Result<ElfInfo> read_elf(const std::string& path) {
  File f(path);
  if (!f.ok()) {
    return std::unexpected(core::make_error(
        core::ErrorCode::Io, fmt::format("cannot open it: {}", std::strerror(errno)), path));
  }
  auto p = parse(f);
  if (!p) return std::unexpected(bad(path, p.error()));
  ElfInfo info;
  info.is_64 = p->is_64;
  info.machine = p->machine;
  info.compatible = p->is_64 == kHost64 && p->machine == kHostMachine;
  if (p->type != ET_DYN) return std::unexpected(bad(path, "not a shared object"));

  auto dyn = dynamic_entries(f, *p);
  std::optional<std::uint64_t> strtab;
  for (const auto& e : dyn) {
    if (e.tag == DT_STRTAB) strtab = vaddr_to_offset(*p, e.val);
  }
  if (!dyn.empty() && !strtab) return std::unexpected(bad(path, "no dynamic string table"));
  auto str = [&](std::uint64_t off) { return f.read_string(*strtab + off); };
  for (const auto& e : dyn) {
    switch (e.tag) {
      case DT_SONAME:
        if (auto s = str(e.val)) info.soname = *s;
        break;
      case DT_NEEDED:
        if (auto s = str(e.val)) info.needed.push_back(*s);
        break;
      case DT_RPATH:
        info.rpath = str(e.val);
        break;
      case DT_RUNPATH:
        info.runpath = str(e.val);
        break;
      default:
        break;
    }
  }
  return info;
}

std::optional<std::vector<unsigned char>> read_symbol_bytes(const std::string& path,
                                                            const std::string& name,
                                                            std::size_t size) {
  if (size == 0 || size > 64) return std::nullopt;
  File f(path);
  if (!f.ok()) return std::nullopt;
  auto p = parse(f);
  if (!p) return std::nullopt;
  for (const auto& sec : p->sections) {
    if (sec.type != SHT_DYNSYM || sec.link >= p->sections.size()) continue;
    const Section& strs = p->sections[sec.link];
    const std::size_t entsize = p->is_64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
    if (sec.entsize != entsize) continue;
    const std::uint64_t count = std::min<std::uint64_t>(sec.size / entsize, 1u << 22);
    for (std::uint64_t i = 1; i < count; ++i) {
      std::uint64_t name_off = 0, value = 0, sym_size = 0;
      std::uint16_t shndx = 0;
      if (p->is_64) {
        Elf64_Sym s{};
        if (!f.read(sec.offset + i * entsize, &s, sizeof s)) break;
        name_off = s.st_name;
        value = s.st_value;
        sym_size = s.st_size;
        shndx = s.st_shndx;
      } else {
        Elf32_Sym s{};
        if (!f.read(sec.offset + i * entsize, &s, sizeof s)) break;
        name_off = s.st_name;
        value = s.st_value;
        sym_size = s.st_size;
        shndx = s.st_shndx;
      }
      if (shndx == SHN_UNDEF || name_off >= strs.size) continue;
      auto sym_name = f.read_string(strs.offset + name_off, name.size() + 1);
      if (!sym_name || *sym_name != name) continue;
      if (sym_size != 0 && sym_size < size) return std::nullopt;
      auto off = vaddr_to_offset(*p, value, size);
      if (!off) return std::nullopt;
      std::vector<unsigned char> bytes(size);
      if (!f.read(*off, bytes.data(), size)) return std::nullopt;
      return bytes;
    }
  }
  return std::nullopt;
}

std::optional<std::string> expand_origin(const std::string& entry, const std::string& origin) {
  std::string out;
  for (std::size_t i = 0; i < entry.size();) {
    if (entry[i] != '$') {
      out += entry[i++];
      continue;
    }
    std::string_view rest(entry.data() + i + 1, entry.size() - i - 1);
    if (rest.starts_with("{ORIGIN}")) {
      out += origin;
      i += 1 + 8;
    } else if (rest.starts_with("ORIGIN") &&
               (rest.size() == 6 ||
                !(std::isalnum(static_cast<unsigned char>(rest[6])) || rest[6] == '_'))) {
      out += origin;
      i += 1 + 6;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::vector<std::string> split_path_list(const std::string& list, const char* separators) {
  std::vector<std::string> out;
  if (list.empty()) return out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t colon = list.find_first_of(separators, start);
    if (colon == std::string::npos) colon = list.size();
    out.push_back(list.substr(start, colon - start));
    start = colon + 1;
  }
  return out;
}

}  // namespace gpulock::probe::detail
