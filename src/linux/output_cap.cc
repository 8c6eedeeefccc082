// Output caps, supervisor side. With a cap the workload's stdout (stderr) is the write end of a pipe
// made here: cage's init puts it on fd 1 (2) before anything else, so neither init nor the workload
// ever holds the real stream. A thread of the supervisor reads the pipe in 1 MiB pieces, hashes
// them, writes up to the cap to the real stream and drops the rest, so a command never blocks on a
// full pipe past the cap. On a terminal the stream is such a pipe too (cage(1), OUTPUT CAPS).
// Proved by tests/integration/output_cap.sh.
#include "linux/output_cap.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/sha256.h"

namespace cage::lx::output_cap {

struct Stream {
  StreamStats stats;
  int dst = -1;     // the real stream: 1 or 2 (cage's own, never the workload's)
  UniqueFd src;     // the pipe's read end, non-blocking
  UniqueFd child;   // its write end, until start()
  Sha256 hash;
  bool hashing = true;  // only for a record that keeps the digest (--result)
  char last = '\n';  // the last byte passed through: the marker starts a line of its own
  bool eof = false;
};

namespace {

constexpr size_t kChunk = 1 << 20;
const char* const kNames[] = {"stdin", "stdout", "stderr"};

// All of it, or false when the real stream refuses (EPIPE: its reader left; EBADF: it was closed).
// A caller's stream may be non-blocking (a shared terminal or pipe): then wait until it takes more.
bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w > 0) {
      p += w, n -= static_cast<size_t>(w);
    } else if (w < 0 && errno == EAGAIN) {
      struct pollfd out = {fd, POLLOUT, 0};
      ::poll(&out, 1, -1);
    } else if (w < 0 && errno != EINTR) {
      return false;
    }
  }
  return true;
}

// One read: hashed, passed through up to the cap, the rest counted and dropped. False when the
// pipe had nothing to give yet.
bool copy_once(Stream& s, char* buf) {
  ssize_t n = ::read(s.src.get(), buf, kChunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return false;
  if (n <= 0) {
    s.eof = true;
    return true;
  }
  StreamStats& st = s.stats;
  const auto got = static_cast<uint64_t>(n);
  if (s.hashing) s.hash.update(buf, got);
  const uint64_t pass = std::min(got, st.cap - st.written);
  if (pass > 0) {
    if (!write_all(s.dst, buf, pass)) {
      // As without a cap: the command's next write fails with EPIPE (or SIGPIPE) once nobody reads.
      st.broken = true;
      s.eof = true;
      s.src.reset();
      return true;
    }
    st.written += pass;
    s.last = buf[pass - 1];
  }
  st.dropped += got - pass;
  return true;
}

std::string cap_text(uint64_t b) {
  for (auto [unit, shift] : {std::pair{"G", 30}, std::pair{"M", 20}, std::pair{"K", 10}})
    if (b != 0 && b % (1ULL << shift) == 0) return std::to_string(b >> shift) + unit;
  return std::to_string(b) + "-byte";
}

}  // namespace

std::string marker_line(const StreamStats& s) {
  return "cage: " + s.name + " truncated: " + std::to_string(s.dropped) + " bytes dropped past the " +
         cap_text(s.cap) + " cap\n";
}

Result<std::unique_ptr<Pump>> Pump::prepare(const policy::Limits& limits, bool hash) {
  auto pump = std::make_unique<Pump>();
  const std::optional<uint64_t> caps[3] = {std::nullopt, limits.max_stdout, limits.max_stderr};
  struct stat st[3];
  bool open[3];
  for (int fd = 0; fd < 3; ++fd) open[fd] = ::fstat(fd, &st[fd]) == 0;
  // A terminal, /dev/null: character devices are shared by design (stdin and stdout one terminal);
  // a terminal stays the command's (cage(1)). A file, pipe or socket must be the cap's alone.
  for (int c = 1; c < 3; ++c) {
    if (!caps[c] || !open[c] || S_ISCHR(st[c].st_mode)) continue;
    for (int o = 0; o < 3; ++o)
      if (o != c && !caps[o] && open[o] && st[o].st_dev == st[c].st_dev && st[o].st_ino == st[c].st_ino)
        return unavailable(limits.output_origin,
                           std::string(kNames[o]) + " is the same file as the capped " + kNames[c] +
                               ": the command could write past the cap through it",
                           "cap both streams (--max-output), or give " + std::string(kNames[o]) +
                               " another file");
  }
  for (int c = 1; c < 3; ++c) {
    if (!caps[c]) continue;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      return Error{ErrorClass::internal_error, "cannot create the output pipe", {}, limits.output_origin, errno};
    auto s = std::make_unique<Stream>();
    s->src.reset(fds[0]);
    s->child.reset(fds[1]);
    s->dst = c;
    s->stats.name = kNames[c];
    s->stats.cap = *caps[c];
    s->hashing = hash;
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    ::fcntl(fds[0], F_SETPIPE_SZ, static_cast<int>(kChunk));  // fewer wake-ups; the default 64K also works
    pump->streams_.push_back(std::move(s));
  }
  pump->stop_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!pump->stop_.valid())
    return Error{ErrorClass::internal_error, "cannot create an eventfd", {}, limits.output_origin, errno};
  return pump;
}

Pump::~Pump() {
  if (thread_.joinable()) finish();
}

int Pump::child_fd(int stream) const {
  for (const auto& s : streams_)
    if (s->dst == stream) return s->child.get();
  return -1;
}

void Pump::close_in_child() const {
  for (const auto& s : streams_) ::close(s->src.get());
  ::close(stop_.get());
}

void Pump::start() {
  for (auto& s : streams_) s->child.reset();
  thread_ = std::thread([this] { run(); });
}

void Pump::run() {
  std::unique_ptr<char[]> buf(new char[kChunk]);
  for (bool stopping = false;;) {
    struct pollfd fds[3];
    Stream* of[3] = {};
    nfds_t n = 0;
    for (auto& s : streams_)
      if (!s->eof) of[n] = s.get(), fds[n++] = {s->src.get(), POLLIN, 0};
    if (n == 0) break;
    if (stopping) {  // the run is over: every writer is gone, so what is left ends in EOF
      for (nfds_t i = 0; i < n; ++i)
        while (!of[i]->eof)
          if (!copy_once(*of[i], buf.get())) of[i]->eof = true;  // a writer outlived the run: stop here
      break;
    }
    fds[n] = {stop_.get(), POLLIN, 0};
    if (::poll(fds, n + 1, -1) < 0) continue;
    for (nfds_t i = 0; i < n; ++i)
      if (fds[i].revents) copy_once(*of[i], buf.get());
    if (fds[n].revents) stopping = true;
  }
  for (auto& s : streams_) {
    StreamStats& st = s->stats;
    if (s->hashing) st.sha256 = s->hash.hex();
    if (st.dropped == 0 || st.broken) continue;
    std::string line(s->last == '\n' ? 0 : 1, '\n');
    line += marker_line(st);
    write_all(s->dst, line.data(), line.size());
  }
}

std::vector<StreamStats> Pump::finish() {
  uint64_t one = 1;
  if (::write(stop_.get(), &one, sizeof one) < 0) {
  }
  if (thread_.joinable()) thread_.join();
  std::vector<StreamStats> out;
  for (auto& s : streams_) out.push_back(s->stats);
  return out;
}

}  // namespace cage::lx::output_cap
