// The transient scope (systemd_scope.h): SASL EXTERNAL on the user manager's private socket, one
// StartTransientUnit call and the JobRemoved signal that ends its job. Only the types that call
// and its answers use are marshalled; every length read from the peer is checked against the
// bytes present and against kMaxMessage. What others do, and what cage learned from it:
//  - systemd-run --user --scope (src/run/run.c, start_transient_scope): PIDs=[its own pid], mode
//    "fail", then waits for the job's JobRemoved before it execs; it reaches the user manager over
//    $XDG_RUNTIME_DIR/systemd/private first (bus_connect_user_systemd), as cage does here.
//  - runc's systemd cgroup driver (libcontainer/cgroups/systemd, startUnit): PIDs=[container init]
//    plus Delegate=true, and a timeout on the job; crun and podman's rootless scopes do the same.
//  - On the private socket systemd sends signals to every direct connection unconditionally
//    (bus_foreach_bus in src/core/dbus.c), so no Subscribe/AddMatch is needed.
// cage passes its init's pid: init is cage's unreaped child, so the pid cannot be reused before
// systemd moves it, and the limits are applied by systemd before the pid moves in.
#include "linux/systemd_scope.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/unique_fd.h"

namespace cage::lx::dbus {

namespace {

constexpr uint32_t kMaxFields = 64 * 1024;

// Little-endian marshalling (the message says 'l'); alignment is relative to the start of the
// header or body, both of which start 8-aligned in the message.
struct Writer {
  std::string b;
  void pad(size_t n) {
    while (b.size() % n) b.push_back('\0');
  }
  void u8(uint8_t v) { b.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) {
    pad(4);
    for (int i = 0; i < 4; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    pad(8);
    for (int i = 0; i < 8; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void str(std::string_view s) {  // "s" and "o"
    u32(static_cast<uint32_t>(s.size()));
    b.append(s);
    b.push_back('\0');
  }
  void sig(std::string_view s) {  // "g"
    u8(static_cast<uint8_t>(s.size()));
    b.append(s);
    b.push_back('\0');
  }
  // An array's length counts from its first element (after the padding to the element's alignment).
  std::pair<size_t, size_t> begin_array(size_t align) {
    u32(0);
    size_t at = b.size() - 4;
    pad(align);
    return {at, b.size()};
  }
  void end_array(std::pair<size_t, size_t> a) {
    auto len = static_cast<uint32_t>(b.size() - a.second);
    for (int i = 0; i < 4; ++i) b[a.first + i] = static_cast<char>(len >> (8 * i));
  }
};

struct Reader {
  std::string_view b;
  bool big = false;
  size_t pos = 0;
  bool ok = true;
  bool need(size_t n) { return ok = ok && n <= b.size() - pos; }
  void align(size_t n) {
    size_t p = (pos + n - 1) / n * n;
    if (!need(p - pos)) return;
    for (; pos < p; ++pos) ok = ok && b[pos] == '\0';  // padding must be zero (the spec)
  }
  uint64_t num(size_t n) {
    align(n);
    if (!need(n)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
      auto byte = static_cast<uint8_t>(b[pos + (big ? i : n - 1 - i)]);
      v = v << 8 | byte;
    }
    pos += n;
    return v;
  }
  uint8_t u8() { return need(1) ? static_cast<uint8_t>(b[pos++]) : 0; }
  std::string text(size_t n) {  // n bytes, then a NUL; none inside
    if (!need(n) || !need(n + 1)) return {};
    std::string s(b.substr(pos, n));
    ok = ok && b[pos + n] == '\0' && s.find('\0') == std::string::npos;
    pos += n + 1;
    return s;
  }
  std::string str() { return text(static_cast<size_t>(num(4))); }
  std::string sig() { return text(u8()); }
};

void read_field(Reader& r, Message& m) {
  r.align(8);
  uint8_t code = r.u8();
  std::string type = r.sig();
  if (!r.ok || type.size() != 1) {
    r.ok = false;
    return;
  }
  std::string text;
  uint32_t number = 0;
  switch (type[0]) {
    case 's': case 'o': text = r.str(); break;
    case 'g': text = r.sig(); break;
    case 'u': number = static_cast<uint32_t>(r.num(4)); break;
    default: r.ok = false; return;  // no header field cage needs has another type
  }
  switch (code) {
    case 1: m.path = text; break;
    case 2: m.interface = text; break;
    case 3: m.member = text; break;
    case 4: m.error_name = text; break;
    case 5: m.reply_serial = number; break;
    case 8: m.signature = text; break;
    default: break;  // destination, sender, unix_fds: not needed
  }
}

}  // namespace

long parse_message(std::string_view buf, Message& out) {
  if (buf.size() < 16) return 0;
  if ((buf[0] != 'l' && buf[0] != 'B') || buf[3] != 1) return -1;
  Reader head{buf.substr(0, 16), buf[0] == 'B'};
  head.pos = 4;
  uint64_t body_len = head.num(4), serial = head.num(4), fields_len = head.num(4);
  if (fields_len > kMaxFields || body_len > kMaxMessage) return -1;
  uint64_t body_at = (16 + fields_len + 7) / 8 * 8, total = body_at + body_len;
  if (total > kMaxMessage) return -1;
  if (buf.size() < total) return 0;
  Message m;
  m.type = static_cast<uint8_t>(buf[1]);
  m.serial = static_cast<uint32_t>(serial);
  Reader r{buf.substr(0, 16 + fields_len), head.big, 16};
  while (r.ok && r.pos < r.b.size()) read_field(r, m);
  if (!r.ok || m.serial == 0 || m.type < 1 || m.type > 4) return -1;
  // The body's leading string-like arguments; the rest of the body is not needed.
  Reader body{buf.substr(body_at, body_len), head.big, 0};
  for (char c : m.signature) {
    if (m.args.size() == 8) break;
    if (c == 's' || c == 'o') m.args.push_back(body.str());
    else if (c == 'u') m.args.push_back(std::to_string(body.num(4)));
    else break;
    if (!body.ok) return -1;
  }
  out = std::move(m);
  return static_cast<long>(total);
}

std::string start_transient_unit(uint32_t serial, const std::string& unit, const std::vector<uint32_t>& pids,
                                 const std::vector<ScopeProperty>& props) {
  Writer w;
  w.str(unit);
  w.str("fail");  // an existing unit of this name is an error, never joined
  auto all = w.begin_array(8);
  auto text = [&](const char* name, const char* value) {
    w.pad(8);
    w.str(name);
    w.sig("s");
    w.str(value);
  };
  text("Description", "cage sandbox");
  w.pad(8);
  w.str("PIDs");
  w.sig("au");
  auto list = w.begin_array(4);
  for (uint32_t pid : pids) w.u32(pid);
  w.end_array(list);
  w.pad(8);
  w.str("Delegate");
  w.sig("b");
  w.u32(1);
  // A scope that ends "failed" (a member was OOM-killed) is still unloaded, not kept for inspection.
  text("CollectMode", "inactive-or-failed");
  for (const auto& p : props) {
    w.pad(8);
    w.str(p.name);
    w.sig("t");
    w.u64(p.value);
  }
  w.end_array(all);
  w.end_array(w.begin_array(8));  // no auxiliary units
  Writer h;
  for (char c : {'l', '\1', '\0', '\1'}) h.u8(static_cast<uint8_t>(c));
  h.u32(static_cast<uint32_t>(w.b.size()));
  h.u32(serial);
  auto fields = h.begin_array(8);
  auto field = [&](uint8_t code, const char* type, const char* value) {
    h.pad(8);
    h.u8(code);
    h.sig(type);
    if (type[0] == 'g') h.sig(value);
    else h.str(value);
  };
  field(1, "o", "/org/freedesktop/systemd1");
  field(2, "s", "org.freedesktop.systemd1.Manager");
  field(3, "s", "StartTransientUnit");
  field(6, "s", "org.freedesktop.systemd1");
  field(8, "g", "ssa(sv)a(sa(sv))");
  h.end_array(fields);
  h.pad(8);
  return h.b + w.b;
}

std::string sasl_external(uint32_t uid) {
  static const char hex[] = "0123456789abcdef";
  std::string out = "AUTH EXTERNAL ";
  for (char c : std::to_string(uid)) {
    out.push_back(hex[static_cast<unsigned char>(c) >> 4]);
    out.push_back(hex[c & 0xf]);
  }
  return out + "\r\n";
}

}  // namespace cage::lx::dbus

namespace cage::lx {

namespace {

using Clock = std::chrono::steady_clock;

struct Conn {
  UniqueFd fd;
  Clock::time_point deadline;
  std::string in;  // bytes received and not yet consumed

  int wait(short events) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ETIMEDOUT;
    struct pollfd p = {fd.get(), events, 0};
    int n = ::poll(&p, 1, static_cast<int>(left));
    return n > 0 ? 0 : n == 0 ? ETIMEDOUT : errno;
  }
  int send(const std::string& s) {
    for (size_t done = 0; done < s.size();) {
      if (int e = wait(POLLOUT)) return e;
      ssize_t n = ::send(fd.get(), s.data() + done, s.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno != EINTR && errno != EAGAIN) return errno;
      if (n > 0) done += static_cast<size_t>(n);
    }
    return 0;
  }
  int receive() {
    if (in.size() > dbus::kMaxMessage) return EMSGSIZE;
    if (int e = wait(POLLIN)) return e;
    char buf[16384];
    ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n == 0) return ECONNRESET;
    if (n < 0) return errno == EINTR || errno == EAGAIN ? 0 : errno;
    in.append(buf, static_cast<size_t>(n));
    return 0;
  }
};

Error refused(const std::string& reason, int err = 0) {
  return Error{ErrorClass::spawn_sandbox_unavailable, reason, "see cage --check", "cgroup", err};
}

Result<UniqueFd> connect_manager(const std::string& socket) {
  struct sockaddr_un sa {};
  sa.sun_family = AF_UNIX;
  if (socket.size() >= sizeof sa.sun_path) return refused("the user manager's socket path is too long");
  std::memcpy(sa.sun_path, socket.c_str(), socket.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return refused("cannot create a socket", errno);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 && errno != EINPROGRESS)
    return refused("cannot connect to the user manager at " + socket, errno);
  // Only the caller's own manager may place the sandbox: a socket someone else listens on is refused.
  struct ucred peer {};
  socklen_t len = sizeof peer;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.uid != ::getuid())
    return refused("the process at " + socket + " is not this user's (uid " + std::to_string(peer.uid) + ")");
  return fd;
}

// SASL EXTERNAL: the manager reads our uid from the socket's credentials; "OK <guid>" accepts.
Status authenticate(Conn& c) {
  if (int e = c.send(std::string(1, '\0') + dbus::sasl_external(::getuid())))
    return refused("the user manager did not take the authentication", e);
  while (c.in.find("\r\n") == std::string::npos) {
    if (c.in.size() > 512) return refused("the user manager's authentication answer is too long");
    if (int e = c.receive()) return refused("no authentication answer from the user manager", e);
  }
  size_t end = c.in.find("\r\n");
  if (c.in.compare(0, 3, "OK ") != 0) return refused("the user manager refused authentication: " + c.in.substr(0, end));
  c.in.erase(0, end + 2);
  return Ok{};
}

// Reads messages until the call's reply and its job's JobRemoved have both arrived.
Status await_job(Conn& c, const std::string& unit) {
  std::string job;
  std::vector<std::pair<std::string, std::string>> removed;  // seen before the reply named the job
  for (;;) {
    dbus::Message m;
    long n = dbus::parse_message(c.in, m);
    if (n < 0) return refused("the user manager sent a malformed message");
    if (n == 0) {
      if (int e = c.receive()) return refused("no answer from the user manager for " + unit, e);
      continue;
    }
    c.in.erase(0, static_cast<size_t>(n));
    if (m.type == 3 && m.reply_serial == 1)
      return refused("the user manager refused " + unit + ": " + m.error_name + (m.args.empty() ? "" : ": " + m.args[0]));
    if (m.type == 2 && m.reply_serial == 1) {
      if (m.args.empty() || m.signature != "o") return refused("unexpected reply to StartTransientUnit");
      job = m.args[0];
    } else if (m.type == 4 && m.member == "JobRemoved" && m.interface == "org.freedesktop.systemd1.Manager" &&
               m.args.size() == 4) {
      if (removed.size() < 64) removed.emplace_back(m.args[1], m.args[3]);
    }
    if (job.empty()) continue;
    for (const auto& [path, result] : removed)
      if (path == job) {
        if (result == "done") return Ok{};
        return refused("the user manager's job for " + unit + " ended \"" + result + "\"");
      }
    removed.clear();
  }
}

// The unified hierarchy's path of pid, as this process's cgroup namespace names it.
std::string cgroup_of(int pid) {
  UniqueFd fd(::open(("/proc/" + std::to_string(pid) + "/cgroup").c_str(), O_RDONLY | O_CLOEXEC));
  char buf[4096];
  ssize_t n = fd.valid() ? ::read(fd.get(), buf, sizeof buf - 1) : -1;
  if (n <= 0) return "";
  std::string text(buf, static_cast<size_t>(n));
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, 3, "0::") == 0) return text.substr(at + 3, end - at - 3);
    at = end + 1;
  }
  return "";
}

}  // namespace

Result<std::string> start_user_scope(const std::string& socket, const std::string& unit, std::vector<int> pids,
                                     const std::vector<ScopeProperty>& props, int timeout_ms) {
  auto fd = connect_manager(socket);
  if (!fd) return fd.error();
  Conn c{std::move(*fd), Clock::now() + std::chrono::milliseconds(timeout_ms), {}};
  if (int e = c.wait(POLLOUT)) return refused("cannot connect to the user manager at " + socket, e);
  if (auto s = authenticate(c); !s) return s.error();
  std::vector<uint32_t> ids;
  for (int p : pids)
    if (p > 0) ids.push_back(static_cast<uint32_t>(p));
  if (ids.empty()) return refused("no process to place in " + unit);
  if (int e = c.send("BEGIN\r\n" + dbus::start_transient_unit(1, unit, ids, props)))
    return refused("cannot send StartTransientUnit to the user manager", e);
  if (auto s = await_job(c, unit); !s) return s.error();
  // The job is done: the pid must now be in the scope, or something else moved it.
  std::string cg = cgroup_of(pids.front());
  if (cg.size() <= unit.size() || cg.compare(cg.size() - unit.size() - 1, std::string::npos, "/" + unit) != 0)
    return refused("the sandbox is not in " + unit + " after the user manager's job (cgroup \"" + cg + "\")");
  return cg;
}

}  // namespace cage::lx
