// Audit log writer and the compact JSON the audit log and the result share. The writer thread holds
// every signal blocked, so a reader that went away gives EPIPE here instead of killing cage.
// Proved by tests/unit/report_test.cc and tests/integration/limits_audit.sh.
#include "common/audit.h"

#include <sys/stat.h>

#include "common/json.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/eventfd.h>
#include <sys/random.h>
#else
#include <stdlib.h>  // arc4random_buf
#endif

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>

namespace cage::audit {

namespace {

constexpr size_t kMaxQueued = 16u << 20;  // beyond this the destination is not keeping up: a failure

// A JSON string of any bytes: each byte outside a valid UTF-8 sequence becomes U+FFFD (so the line
// stays valid JSON for every parser, whatever a DNS name or a path held), and every terminal control
// (C0, DEL, C1, bidi overrides) is escaped, so `cat audit.jsonl` cannot drive the reader's terminal.
void put_string(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    long cp = next_code_point(s, i);
    switch (cp) {
      case -1: out += "\\ufffd"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (is_terminal_control(cp) || cp == 0x2028 || cp == 0x2029) {
          char buf[16];
          std::snprintf(buf, sizeof buf, "\\u%04lx", cp);
          out += buf;
        } else {
          out.append(s.substr(start, i - start));
        }
    }
  }
  out += '"';
}

void put_node(std::string& out, const toml::node& n) {
  if (auto* t = n.as_table()) {
    out += '{';
    bool first = true;
    for (const auto& [k, v] : *t) {
      if (!first) out += ',';
      first = false;
      put_string(out, k.str());
      out += ':';
      put_node(out, v);
    }
    out += '}';
  } else if (auto* a = n.as_array()) {
    out += '[';
    for (size_t i = 0; i < a->size(); ++i) {
      if (i) out += ',';
      put_node(out, *a->get(i));
    }
    out += ']';
  } else if (auto* s = n.as_string()) {
    put_string(out, s->get());
  } else if (auto* i = n.as_integer()) {
    out += std::to_string(i->get());
  } else if (auto* f = n.as_floating_point()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", f->get());
    out += buf;
  } else if (auto* b = n.as_boolean()) {
    out += b->get() ? "true" : "false";
  } else {
    out += "null";
  }
}

}  // namespace

std::string to_json_line(const toml::table& t) {
  std::string out;
  put_node(out, t);
  return out;
}

std::string timestamp_now() {
  struct timespec ts {};
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm {};
  gmtime_r(&ts.tv_sec, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ts.tv_nsec / 1000000) % 1000);
  return buf;
}

std::string new_run_id() {
  unsigned char b[16] = {};
#if defined(__linux__)
  if (::getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) {
#else
  ::arc4random_buf(b, sizeof b);  // macOS: never fails, never blocks
  if (false) {
#endif
    struct timespec ts {};
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t v = static_cast<uint64_t>(ts.tv_nsec) ^ (static_cast<uint64_t>(::getpid()) << 32);
    std::memcpy(b, &v, sizeof v);
  }
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (unsigned char c : b) {
    s += hex[c >> 4];
    s += hex[c & 15];
  }
  return s;
}

Result<UniqueFd> open_destination(const std::string& spec, const std::string& flag, bool append) {
  if (spec.rfind("fd:", 0) == 0) {
    char* end = nullptr;
    long n = std::strtol(spec.c_str() + 3, &end, 10);
    if (spec.size() == 3 || *end != '\0' || n < 0 || n > 65535)
      return usage(flag + " " + spec, "not a file descriptor number", "use fd:N, e.g. fd:3");
    // Our own copy, close-on-exec: the sandbox never inherits it, and closing ours leaves the caller's.
    int fd = ::fcntl(static_cast<int>(n), F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
      return Error{ErrorClass::invalid_policy, "file descriptor " + std::to_string(n) + " is not open",
                   "open it for writing before starting cage (e.g. 3>file)", flag + " " + spec, errno};
    return UniqueFd(fd);
  }
  if (spec.empty()) return usage(flag, "expected FILE or fd:N");
  int fd = ::open(spec.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | (append ? O_APPEND : O_TRUNC), 0600);
  if (fd < 0)
    return Error{ErrorClass::invalid_policy, std::string("cannot open for writing: ") + std::strerror(errno),
                 "check the path and its permissions", flag + " " + spec, errno};
  return UniqueFd(fd);
}

int write_all(int fd, const std::string& text) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  int err = 0;
  for (size_t off = 0; off < text.size();) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    off += static_cast<size_t>(n);
  }
  if (err == EPIPE && !sigismember(&old, SIGPIPE)) {
#if defined(__linux__)
    struct timespec zero {};
    sigtimedwait(&pipe_set, nullptr, &zero);  // consume the SIGPIPE this thread earned
#else
    // macOS has no sigtimedwait: consume it with sigwait, only when it is pending (never blocks).
    sigset_t pending;
    int sig = 0;
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) sigwait(&pipe_set, &sig);
#endif
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return err;
}

std::optional<Held> held_by(const std::string& path, const Grants& grants) {
  char* file = ::realpath(path.c_str(), nullptr);
  if (!file) return std::nullopt;
  std::string real = file;
  std::free(file);
  for (const auto& [grant, origin] : grants) {
    char* dir = ::realpath(grant.c_str(), nullptr);
    const std::string d = dir ? dir : "";
    std::free(dir);
    // d is real, or beneath it (policy::is_beneath's rule, here without the policy layer)
    bool inside = !d.empty() && (d == "/" || (real.compare(0, d.size(), d) == 0 &&
                                              (real.size() == d.size() || real[d.size()] == '/')));
    if (inside) return Held{real, origin};
  }
  return std::nullopt;
}

std::string record_inside(const Grants& grants, const std::string& audit, const std::string& result) {
  for (const auto& [flag, spec] : {std::pair<const char*, const std::string&>{"--audit", audit},
                                   std::pair<const char*, const std::string&>{"--result", result}}) {
    if (spec.empty() || spec.rfind("fd:", 0) == 0) continue;
    if (auto held = held_by(spec, grants)) return std::string(flag) + " " + spec + " lies beneath " + held->origin;
  }
  return {};
}

namespace {
// The failure signal's two ends: one eventfd on Linux; elsewhere a pipe (read end, write end).
std::pair<UniqueFd, UniqueFd> failure_event() {
#if defined(__linux__)
  return {UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), UniqueFd()};
#else
  int p[2] = {-1, -1};
  if (::pipe(p) != 0) return {};
  for (int fd : p) {
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
  }
  return {UniqueFd(p[0]), UniqueFd(p[1])};
#endif
}
}  // namespace

Log::Log(UniqueFd fd, std::string run_id) : fd_(std::move(fd)), run_id_(std::move(run_id)) {
  auto [read_end, write_end] = failure_event();
  failure_event_ = std::move(read_end);
  failure_write_ = std::move(write_end);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);  // the thread inherits this mask
  thread_ = std::thread([this] { writer(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

Log::~Log() { close(2000); }

void Log::emit(const std::string& type, toml::table fields) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_locked(type, std::move(fields));
}

void Log::emit_coalesced(const std::string& type, const std::string& key, toml::table fields) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_ || stop_) return;
  switch (coalescer_.offer(type, key, fields, Coalescer::Clock::now())) {
    case Coalescer::Offer::write: queue_locked(type, std::move(fields)); break;
    case Coalescer::Offer::held: break;
    case Coalescer::Offer::held_new: cv_.notify_one(); break;  // the writer's next wake-up is sooner
  }
}

void Log::flush_repeats() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& l : coalescer_.due(Coalescer::Clock::now(), true)) queue_locked(l.type, std::move(l.fields));
}

void Log::queue_locked(const std::string& type, toml::table fields) {
  if (failed_ || stop_) return;
  fields.insert_or_assign("schema", kAuditSchema);
  fields.insert_or_assign("type", type);
  fields.insert_or_assign("time", timestamp_now());
  fields.insert_or_assign("run_id", run_id_);
  if (!labels_.empty()) fields.insert_or_assign("labels", labels_);
  std::string line = to_json_line(fields) + "\n";
  if (queued_bytes_ + line.size() > kMaxQueued) {
    failed_ = true;
    failure_ = "the destination is not keeping up (more than 16 MiB queued)";
    signal_failure();
    return;
  }
  queued_bytes_ += line.size();
  queue_.push_back(std::move(line));
  cv_.notify_one();
}

void Log::fail(const std::string& why) {
  failed_ = true;
  failure_ = why;
  queue_.clear();
  queued_bytes_ = 0;
  signal_failure();
}

void Log::signal_failure() {
  uint64_t one = 1;  // an eventfd takes 8 bytes; a pipe's reader only needs it readable
  (void)!::write(failure_write_.valid() ? failure_write_.get() : failure_event_.get(), &one, sizeof one);
}

void Log::writer() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Asleep until a line is queued, the run ends, or a coalesced window closes (its count is due).
    auto ready = [this] { return stop_ || !queue_.empty(); };
    if (auto when = coalescer_.next_due())
      cv_.wait_until(lock, *when, ready);
    else
      cv_.wait(lock, ready);
    if (!stop_)
      for (auto& l : coalescer_.due(Coalescer::Clock::now(), false)) queue_locked(l.type, std::move(l.fields));
    if (queue_.empty()) {
      if (stop_) break;
      continue;
    }
    std::string line = std::move(queue_.front());
    queue_.pop_front();
    queued_bytes_ -= line.size();
    busy_ = true;
    lock.unlock();
    int err = write_all(fd_.get(), line);
    lock.lock();
    busy_ = false;
    if (err && !failed_) fail(std::string("write: ") + std::strerror(err));
    if (queue_.empty()) drained_.notify_all();
  }
  drained_.notify_all();
}

bool Log::close(int timeout_ms) {
  if (!thread_.joinable()) return true;
  flush_repeats();  // no count is left behind with the writer
  {
    std::unique_lock<std::mutex> lock(mu_);
    drained_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return queue_.empty() && !busy_; });
    if (!queue_.empty() || busy_) {
      if (!failed_) fail("the destination did not take the last events within " + std::to_string(timeout_ms) + " ms");
    }
    stop_ = true;
    cv_.notify_one();
  }
  // A writer stuck in write() on a pipe nobody reads would keep join() waiting: detach it instead.
  std::unique_lock<std::mutex> lock(mu_);
  if (busy_) {
    lock.unlock();
    thread_.detach();
    return false;
  }
  lock.unlock();
  thread_.join();
  return true;
}

bool Log::sync(int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  drained_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return queue_.empty() && !busy_; });
  if (failed_) return false;
  if (!queue_.empty() || busy_) {
    fail("the destination did not take the spawn event within " + std::to_string(timeout_ms) + " ms");
    return false;
  }
  struct stat st {};
  if (::fstat(fd_.get(), &st) == 0 && S_ISREG(st.st_mode) && ::fsync(fd_.get()) != 0) {
    fail(std::string("fsync: ") + std::strerror(errno));
    return false;
  }
  return true;
}

void Log::set_labels(toml::table labels) {
  std::lock_guard<std::mutex> lock(mu_);
  labels_ = std::move(labels);
}

bool Log::failed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

std::string Log::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

Result<Sinks> open_sinks(const ReportOptions& opts, const std::string& run_id) {
  Sinks s;
  if (!opts.result.empty()) {
    auto fd = open_destination(opts.result, "--result", false);
    if (!fd) return fd.error();
    s.result = std::move(*fd);
  }
  if (opts.audit.empty()) {
    if (opts.audit_required) return usage("--audit-required", "needs --audit FILE|fd:N", "add --audit");
    return s;
  }
  auto fd = open_destination(opts.audit, "--audit", true);
  if (fd) {
    s.log = std::make_unique<Log>(std::move(*fd), run_id);
  } else {
    if (opts.audit_required) return fd.error();
    s.audit_ok = false;
    s.audit_error = fd.error().reason;
    std::cerr << "cage: warning: the audit log cannot be written ("
              << printable(fd.error().input + ": " + fd.error().reason) << "); running without it\n";
  }
  return s;
}

}  // namespace cage::audit
