// See etc_view.h.
#include "linux/etc_view.h"

#include <optional>
#include <string>
#include <unordered_map>

#include "linux/compile.h"
#include "policy/policy.h"

namespace cage::lx {

using policy::is_beneath;

namespace {

// Files and directories of /etc that programs need to start, resolve names, verify TLS and print
// dates; nothing that holds a secret (no shadow, gshadow, sudoers, ssh keys, machine-id).
const char* const kEtcEntries[] = {
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "ld.so.preload", "ssl", "ca-certificates",
    "ca-certificates.conf", "pki", "crypto-policies", "localtime", "timezone", "resolv.conf", "hosts",
    "host.conf", "nsswitch.conf", "gai.conf", "services", "protocols", "networks", "mime.types",
    "alternatives", "os-release", "lsb-release", "debian_version", "issue", "locale.alias", "locale.conf",
    "default", "environment", "profile", "profile.d", "bash.bashrc", "inputrc", "terminfo", "vim",
    "python3", "perl", "gitconfig", "manpath.config", "magic", "mime", "xdg", "fonts", "java-17-openjdk",
    "login.defs", "shells", "mtab", nullptr};

// /etc is a snapshot, not a bind: regular files are copied into cage's tmpfs and symlinks
// recreated, so the view cannot show what the curation leaves out. A directory too large to copy is
// bound read-only instead, and so is a directory whose copy would equal a bind (below).
constexpr size_t kEtcCopyBudget = 8u << 20;  // bytes copied in all
constexpr size_t kEtcFileMax = 2u << 20;
// A directory holding more than this many entries is bound, not copied (alternatives, ssl/certs).
constexpr size_t kMostCopied = 64;
// A directory whose copy would equal a bind is bound once its subtree holds this many entries: each
// copied entry is read by the supervisor, created by the child and torn down at the end, ~15 us in
// all; a bind mount costs a few of them (binding fontconfig's ~50 entries saved ~0.8 ms a run;
// binding directories of 4 to 7 entries as well changed nothing measurable: bench/README).
constexpr size_t kBindFrom = 8;

// A link the copy recreates as its text: it resolves inside as well (into /usr, /proc or /etc
// itself), judged on its text, which is cheap (/etc/alternatives alone holds hundreds). Any other
// target (resolv.conf into /run) is shown by its content.
bool etc_link_as_is(const std::string& path, const std::string& target) {
  std::string lexical =
      policy::lexically_clean(target[0] == '/' ? target : path.substr(0, path.rfind('/')) + "/" + target);
  return is_beneath(lexical, "/usr") || is_beneath(lexical, "/proc") || is_beneath(lexical, "/etc");
}
// Directories bound without being listed: hundreds of links, or the JDK's half a megabyte.
bool etc_bound_unlisted(const std::string& path, int depth) {
  return path == "/etc/alternatives" || path.rfind("/etc/java-", 0) == 0 || depth > 4;
}

// Each directory is scanned once (copy_is_bind looks at a directory again for each level above it,
// and entry() once more) and each file's readability asked once: the host's answers are kept for
// the walk, and every decision below is made on them as it was on the repeated questions (a dry
// run's syscalls 706 -> 514 on the development host: bench/README).
struct Scanned {
  std::optional<std::vector<DirEntry>> entries;
  std::vector<signed char> readable;  // per entry: -1 not asked yet
};

struct EtcWalk {
  const HostView& host;
  std::vector<MountStep> out;
  size_t budget = kEtcCopyBudget;
  std::unordered_map<std::string, Scanned> scans;

  Scanned& scan(const std::string& path);
  bool readable(Scanned& dir, size_t i, const std::string& path);
  void entry(const std::string& path, const FileInfo& li, const std::string& link, const std::string& why,
             int depth);
  std::optional<size_t> copy_is_bind(const std::string& path, int depth, size_t most, size_t& bytes);
};

Scanned& EtcWalk::scan(const std::string& path) {
  auto [it, fresh] = scans.try_emplace(path);
  if (fresh) {
    it->second.entries = host.scan_dir_upto(path, kMostCopied);
    if (it->second.entries) it->second.readable.assign(it->second.entries->size(), -1);
  }
  return it->second;
}

bool EtcWalk::readable(Scanned& dir, size_t i, const std::string& path) {
  if (dir.readable[i] < 0) dir.readable[i] = host.readable(path) ? 1 : 0;
  return dir.readable[i] == 1;
}

// The number of entries below `path` when copying it would show exactly what a read-only bind of it
// shows (every file world-readable, readable by cage and small enough to copy within what is left of
// the copy budget, every link recreated as its text, every directory world-listable or itself bound,
// nothing else), so that it can be bound instead; nullopt as soon as one entry would differ or the
// count passes `most`. `bytes` adds up the files' sizes: what the copy would have taken from the
// budget, which the bind takes too, so that every entry after it is shown as the copy would show it.
// (Found by an attack review: a bound directory showed the files the copy drops past the 8 MiB
// budget, and the names of files cage itself may not read, e.g. mode 0604 with the caller's group;
// tests/escape/etc_bind.sh.) A bind shows the host's modes and owners where the copy shows
// 0644/0755, and later changes of the host's /etc: a file the host adds to a bound directory during
// the run is seen inside as the caller could see it on the host (a root caller's workload, uid 0,
// reads even a 0600 one), where the snapshot had none (tests/escape/pending/etc_bind_live.sh). The
// large directories were bound, and so live, before; this extends it to directories whose every
// entry was public at the start, and is accepted for the ~0.8 ms a run it saves (bench/README).
std::optional<size_t> EtcWalk::copy_is_bind(const std::string& path, int depth, size_t most, size_t& bytes) {
  Scanned& dir = scan(path);
  if (!dir.entries || dir.entries->size() > kMostCopied) return std::nullopt;
  size_t count = 0;
  for (size_t i = 0; i < dir.entries->size(); ++i) {
    const DirEntry& e = (*dir.entries)[i];
    const std::string child = path + "/" + e.name;
    if (++count > most || child == "/etc/ssl/private") return std::nullopt;
    const FileInfo& li = e.info;
    switch (li.kind) {
      case FileKind::file:
        if (!(li.mode & 0004) || li.size > kEtcFileMax || li.size > budget - bytes || !readable(dir, i, child))
          return std::nullopt;
        bytes += li.size;
        break;
      case FileKind::symlink:
        if (e.link.empty() || !etc_link_as_is(child, e.link)) return std::nullopt;
        break;
      case FileKind::dir: {
        if ((li.mode & 0005) != 0005) return std::nullopt;
        if (etc_bound_unlisted(child, depth + 1)) break;
        auto below = copy_is_bind(child, depth + 1, most - count, bytes);
        if (!below) return std::nullopt;
        count += *below;
        break;
      }
      case FileKind::missing:  // gone since the listing
      case FileKind::socket:
      case FileKind::fifo:
      case FileKind::device:
        return std::nullopt;
    }
  }
  return count;
}

// `li` is path's lstat and `link` its text when it is a link (from the scan of its directory, or
// asked for a top-level entry).
void EtcWalk::entry(const std::string& path, const FileInfo& li, const std::string& link, const std::string& why,
                    int depth) {
  if (li.kind == FileKind::missing || path == "/etc/ssl/private") return;  // private TLS keys stay out
  if (li.kind == FileKind::symlink) {
    if (link.empty()) return;
    if (etc_link_as_is(path, link)) {
      out.push_back(MountStep{MountKind::symlink, link, path, "", false, false, why});
      return;
    }
    auto real = host.realpath(path);
    if (!real) return;  // dangling: nothing to show
    FileInfo ri = host.stat(*real);
    if (ri.kind == FileKind::file) {
      auto content = ri.mode & 0004 || host.uid() == 0 ? host.read_file(*real) : std::nullopt;
      if (content && content->size() <= kEtcFileMax && content->size() <= budget) {
        budget -= content->size();
        out.push_back(MountStep{MountKind::file, "", path, std::move(*content), false, false, why});
      }
    } else if (ri.kind == FileKind::dir) {
      out.push_back(MountStep{MountKind::bind_ro, *real, path, "", true, false, why});
    }
    return;
  }
  if (li.kind == FileKind::file) {
    if (!(li.mode & 0004)) return;  // not world-readable: not for the sandbox
    auto content = host.read_regular(path, li.size);
    if (content && content->size() <= kEtcFileMax && content->size() <= budget) {
      budget -= content->size();
      out.push_back(MountStep{MountKind::file, "", path, std::move(*content), false, false, why});
    }
    return;
  }
  if (li.kind != FileKind::dir) return;
  bool bind = etc_bound_unlisted(path, depth);
  if (!bind && (li.mode & 0005) == 0005) {
    size_t bytes = 0;
    auto same = copy_is_bind(path, depth, 4 * kMostCopied, bytes);
    bind = same && *same >= kBindFrom;
    if (bind) budget -= bytes;  // what the copy would have taken (copy_is_bind kept it within)
  }
  const Scanned* dir = bind ? nullptr : &scan(path);
  if (bind || !dir->entries || dir->entries->size() > kMostCopied) {
    if (li.mode & 0005) out.push_back(MountStep{MountKind::bind_ro, path, path, "", true, false, why});
    return;
  }
  out.push_back(MountStep{MountKind::dir, "", path, "", true, false, why});
  for (const DirEntry& e : *dir->entries) entry(path + "/" + e.name, e.info, e.link, why, depth + 1);
}

}  // namespace

const char* const* default_etc_entries() { return kEtcEntries; }

std::vector<MountStep> curated_etc(const HostView& host) {
  EtcWalk w{host, {}, kEtcCopyBudget, {}};
  for (const char* const* e = kEtcEntries; *e; ++e) {
    const std::string path = std::string("/etc/") + *e;
    FileInfo li = host.lstat(path);
    std::string link = li.kind == FileKind::symlink ? host.readlink(path).value_or("") : "";
    w.entry(path, li, link, std::string("default view: /etc/") + *e, 0);
  }
  return std::move(w.out);
}

}  // namespace cage::lx
