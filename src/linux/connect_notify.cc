// connect(2) mediation for Mechanism::landlock_only with --net, and the one seccomp listener it
// shares with chmod/utimes mediation (metadata_notify.h): see connect_notify.h.
#include "linux/connect_notify.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/send_fd.h"
#include "linux/handoff.h"
#include "linux/metadata_notify.h"
#include "linux/performer.h"
#include "linux/seccomp_observe.h"
#include "linux/seccomp_profiles.h"
#include "proxy/server.h"
#include "proxy/socket_compat.h"
#include "proxy/synthetic.h"
#include "linux/workload_access.h"

namespace cage::lx::connect_notify {
namespace {

constexpr uint32_t kArch = seccomp::kNativeArch;
constexpr uint32_t kX32Bit = seccomp::kForeignNrBit;  // x32 calls: refused, they would bypass the nr check

constexpr int kPending = -1;   // answered later, from the proxy's thread (dialled)
constexpr int kContinue = -2;  // the kernel runs the call as it stands

// Linux 6.6: the kernel wakes the waiting side of a notification on the current CPU (the notifying
// thread's for the mediator, the mediator's for the answer), as a synchronous wake-up. gVisor asked
// for it to cut a round trip's latency; older kernels refuse the ioctl, which changes nothing else.
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

// The thread group of a notifying thread: pidfd_open takes a thread directly since Linux 6.9.
int open_pidfd(pid_t tid) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, tid, PIDFD_THREAD));
  if (fd >= 0 || errno != EINVAL) return fd;
  char path[64], buf[1024];
  std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(tid));
  int s = ::open(path, O_RDONLY | O_CLOEXEC);
  if (s < 0) return -1;
  ssize_t n = ::read(s, buf, sizeof buf - 1);
  ::close(s);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* t = std::strstr(buf, "\nTgid:");
  if (!t) return -1;
  return static_cast<int>(::syscall(SYS_pidfd_open, std::atoi(t + 6), 0));
}

// The descriptor flags of the workload's fd (fdinfo's octal "flags:"), or 0.
unsigned long fd_flags(pid_t pid, int fd) {
  char path[64], info[512] = {};
  std::snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", static_cast<int>(pid), fd);
  UniqueFd fdinfo(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fdinfo.valid() || ::read(fdinfo.get(), info, sizeof info - 1) <= 0) return 0;
  const char* f = std::strstr(info, "flags:");
  return f ? std::strtoul(f + 6, nullptr, 8) : 0;
}

// The thread's umask (/proc/TID/status, Linux 4.7), or -1.
int thread_umask(pid_t tid) {
  char path[64], buf[2048] = {};
  std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(tid));
  UniqueFd status(::open(path, O_RDONLY | O_CLOEXEC));
  if (!status.valid() || ::read(status.get(), buf, sizeof buf - 1) <= 0) return -1;
  const char* u = std::strstr(buf, "\nUmask:");
  if (!u) return -1;
  char* end = nullptr;
  const long m = std::strtol(u + 7, &end, 8);
  return end != u + 7 && m >= 0 && m <= 0777 ? static_cast<int>(m) : -1;
}

class Impl final : public Mediator {
 public:
  Impl(UniqueFd channel, uint16_t port, std::vector<std::string> writable, bool explain, Refusals refusals,
       const NetPlan* handoff)
      : channel_(std::move(channel)), stop_(::eventfd(0, EFD_CLOEXEC)), port_(port),
        writable_(std::move(writable)), explain_(explain), refusals_(std::move(refusals)), net_(handoff) {}
  ~Impl() override { stop(); }
  explain_notify::Log finish() override {
    stop();  // joined: the log is this thread's alone now
    return std::move(log_);
  }
  int begin() {
    seccomp_notif_sizes sizes{};
    if (!stop_.valid() || ::syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) return errno ? errno : EMFILE;
    req_.resize(std::max<size_t>(sizes.seccomp_notif, sizeof(seccomp_notif)));
    resp_.resize(std::max<size_t>(sizes.seccomp_notif_resp, sizeof(seccomp_notif_resp)));
    performed_.resize(resp_.size());
    thread_ = std::thread([this] { run(); });
    return 0;
  }

 private:
  struct Pending {  // a hand-off's notification, waiting for its dial
    int fd = -1;
    bool cloexec = false;
    UniqueFd sock;  // the workload's socket: its options go to the one handed over
  };

  // Waits for `fd` or the stop signal; true when fd is readable. For the listener a hang-up (every
  // process under the filter gone) ends the wait for good; the channel's message is read even when
  // init has already closed its end.
  bool wait_for(int fd, bool hangup_ends) {
    pollfd p[2] = {{fd, POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    while (::poll(p, 2, -1) < 0)
      if (errno != EINTR) return false;
    if ((p[1].revents & POLLIN) || (p[0].revents & POLLNVAL)) return false;
    if (hangup_ends && (p[0].revents & (POLLHUP | POLLERR))) return false;
    return (p[0].revents & POLLIN) != 0;
  }

  void run() {
    // This thread changes files for the workload (metadata_notify.h): with no effective capability
    // the kernel applies the workload's ownership rules. Without that it answers nothing.
    if (metadata_notify::drop_effective_capabilities() != 0) return;
    if (!wait_for(channel_.get(), false)) return;
    char tag = 0;
    if (net_) {  // the performer's channel comes first (init sends it before the workload starts)
      performer_.reset(recv_fd(channel_.get(), &tag));
      if (!performer_.valid() || tag != 'p') return;
      // A performer that stops reading (stopped, or killed) fails the calls; it never holds this thread.
      timeval limit{1, 0};
      if (::setsockopt(performer_.get(), SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit) != 0) return;
      if (!wait_for(channel_.get(), false)) return;
    }
    listener_.reset(recv_fd(channel_.get(), &tag));
    if (!listener_.valid() || tag != 'n') return;
    ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
    if (net_) {  // a socket init made in the sandbox's namespace: its cookie tells the sandbox's sockets
      UniqueFd own(recv_fd(channel_.get(), &tag));
      auto cookie = own.valid() && tag == 'k' ? handoff::netns_cookie(own.get()) : std::nullopt;
      handoff_ok_ = cookie.has_value();
      sandbox_cookie_ = cookie.value_or(0);
    }
    serve();
  }

  // Notifications, the performer's answers and the direct dials' completions, until the listener
  // hangs up or stop() is called.
  void serve() {
    std::vector<pollfd> p;
    for (;;) {
      p.assign({{listener_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}, {performer_.get(), POLLIN, 0}});
      for (const auto& d : dialling_) p.push_back({d.dial.sock.get(), POLLOUT, 0});
      if (::poll(p.data(), p.size(), dial_timeout()) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if ((p[1].revents & POLLIN) || (p[0].revents & POLLNVAL)) return;
      if (performer_.valid() && p[2].revents) performed(p[2].revents);
      if (!dialling_.empty()) dials_done(p.data() + 3, p.size() - 3);
      if (p[0].revents & POLLIN) {
        if (!answer()) return;
      } else if (p[0].revents & (POLLHUP | POLLERR)) {
        return;
      }
    }
  }

  // The performer's answers: each to a call it was sent, or it is treated as gone.
  void performed(short revents) {
    performer::Reply a;
    int got;
    while ((got = performer::receive(performer_.get(), &a)) > 0) {
      if (performing_.erase(a.id) == 0) break;  // an answer to nothing asked: misbehaving
      reply(a.id, a.err);
    }
    if (got != 0 || (revents & (POLLHUP | POLLERR))) performer_gone();
  }

  // The performer is dead or misbehaves: its calls, and every later one, fail (to_performer).
  void performer_gone() {
    performer_.reset();
    for (uint64_t id : performing_) reply(id, EACCES);
    performing_.clear();
  }

  // An answer of the performer's, or EACCES for it: its own buffer, since answer() may be filling resp_.
  void reply(uint64_t id, int err) {
    std::fill(performed_.begin(), performed_.end(), 0);
    auto* resp = reinterpret_cast<seccomp_notif_resp*>(performed_.data());
    resp->id = id;
    resp->error = -err;
    ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, resp);  // ENOENT: the caller was interrupted or died
  }

  // Sends the call to the performer (performer.h) on the open file `sock` taken from the workload,
  // with the address read once; answered later (performed). A unix path goes with the thread's cwd,
  // root and umask, all read while the notification is still valid (the tid is still that thread).
  int to_performer(const seccomp_notif& req, long nr, int sock, int type, const sockaddr_storage& sa,
                   size_t len, bool unix_path) {
    if (!performer_.valid()) return EACCES;
    performer::Request r;
    r.id = req.id;
    r.nr = static_cast<int32_t>(nr);
    r.backlog = nr == SYS_listen ? static_cast<int32_t>(req.data.args[1]) : 0;
    r.len = static_cast<uint32_t>(len);
    r.sa = sa;
    const int fl = ::fcntl(sock, F_GETFL);
    if (fl < 0) return EACCES;
    // Only a connection-oriented connect can wait (for the peer's backlog, or TCP's handshake). Also
    // on a socket that is non-blocking now: the kernel reads O_NONBLOCK when the performer's connect
    // runs, and a thread of the workload can clear it by then, which in the performer's own loop
    // would stop it for good (tests/escape/net_handoff_wedge.sh).
    r.blocking = nr == SYS_connect && (type == SOCK_STREAM || type == SOCK_SEQPACKET);
    UniqueFd cwd, root;
    int fds[3] = {sock, -1, -1};
    if (unix_path) {
      const auto tid = static_cast<pid_t>(req.pid);
      char path[64];
      std::snprintf(path, sizeof path, "/proc/%d/cwd", static_cast<int>(tid));
      cwd.reset(::open(path, O_PATH | O_DIRECTORY | O_CLOEXEC));
      std::snprintf(path, sizeof path, "/proc/%d/root", static_cast<int>(tid));
      root.reset(::open(path, O_PATH | O_DIRECTORY | O_CLOEXEC));
      r.umask = thread_umask(tid);
      if (!cwd.valid() || !root.valid() || r.umask < 0 || !valid(req.id)) return EACCES;
      r.unix_path = 1;
      fds[1] = cwd.get();
      fds[2] = root.get();
    }
    if (performer::send(performer_.get(), r, fds, unix_path ? 3 : 1) != 0) {
      performer_gone();
      return EACCES;
    }
    performing_.insert(req.id);
    return kPending;
  }

  // One notification; false when the listener is finished (every filtered process is gone).
  bool answer() {
    std::fill(req_.begin(), req_.end(), 0);
    auto* req = reinterpret_cast<seccomp_notif*>(req_.data());
    if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, req) != 0) return errno == EINTR || errno == ENOENT;
    std::fill(resp_.begin(), resp_.end(), 0);
    auto* resp = reinterpret_cast<seccomp_notif_resp*>(resp_.data());
    resp->id = req->id;
    if (explain_ && log_.tasks.size() < explain::kMaxDistinct) log_.tasks.insert(static_cast<int>(req->pid));
    const bool mediated = net_ && handoff::mediates(req->data.nr);
    if (int e = refused(*req); e != 0) {
      resp->error = -e;
    } else if (explain_ && !mediated && explain_notify::observes(req->data.nr)) {
      observe(*req, resp);
    } else {
      int r = mediated ? decide_handoff(*req) : decide(*req);
      if (r == kPending) return true;
      if (r == kContinue) resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      else resp->error = -r;
    }
    ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, resp);  // ENOENT: the caller was interrupted or died
    return true;
  }

  bool valid(uint64_t id) { return ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0; }

  void stop() {
    uint64_t one = 1;
    if (::write(stop_.get(), &one, sizeof one) < 0) { /* the thread also ends when the listener does */ }
    if (thread_.joinable()) thread_.join();
  }

  // An observed call (--explain): recorded, then continued. CONTINUE lets the kernel run the call
  // as if no notification had happened, so mounts, Landlock and the other filters judge it as
  // ever; the kernel's warning about CONTINUE (a racing thread may change the arguments after the
  // check) concerns decisions, and none is made here.
  void observe(const seccomp_notif& req, seccomp_notif_resp* resp) {
    struct Check {
      Impl* self;
      uint64_t id;
    } check{this, req.id};
    explain_notify::observe(req, [](void* c) {
      auto* k = static_cast<Check*>(c);
      return k->self->valid(k->id);
    }, &check, log_);
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  }

  // A call the profile refuses with an errno or kills for (seccomp_observe.h): recorded, and
  // answered with that errno, or its process killed; never continued. The original filter judges
  // every notification, so even a call the listener notifies for its own reasons is never run or
  // decided here if the profile refuses it.
  int refused(const seccomp_notif& req) {
    if (refusals_.filter.empty()) return 0;
    const uint32_t action = seccomp::evaluate(refusals_.filter, req.data);
    if (seccomp::is_kill(action)) return kill_caller(req);
    if ((action & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO) return 0;
    // The kernel caps a filter's errno at MAX_ERRNO (4095) and refuses a larger answer, which would
    // leave the call waiting: the profiles use EPERM and ENOSYS.
    const int e = std::min(static_cast<int>(action & SECCOMP_RET_DATA), 4095);
    // ENOSYS says "this kernel lacks the call", which programs handle by design (libc falls back from
    // clone3 to clone): answered, not listed.
    if (e != ENOSYS) {
      std::string name(seccomp::call_name(req.data.nr));
      if (name.empty()) name = "call " + std::to_string(req.data.nr);
      explain_notify::refused(req, std::move(name), e, remedy(req.data), log_);
    }
    return e ? e : EPERM;
  }

  // A call the profile kills for: the kernel would end the caller's process with SIGSYS before the
  // call ran. Here the caller's thread group gets SIGKILL, which wakes the thread from its wait into
  // death without a return to the program (a fatal signal ends the whole group even when the pidfd
  // names a thread); SIGSYS could be caught. The answer returned (ENOSYS) reaches no one unless the
  // kill failed: the process is gone already, or its pidfd could not be had; then the call fails.
  int kill_caller(const seccomp_notif& req) {
    std::string name(seccomp::call_name(req.data.nr));
    if (name.empty()) name = "call " + std::to_string(req.data.nr);
    const bool waiting = valid(req.id);
    UniqueFd pidfd(open_pidfd(static_cast<pid_t>(req.pid)));
    // Still waiting after pidfd_open: the pidfd names the caller's process, not a reused pid.
    if (waiting && pidfd.valid() && valid(req.id)) {
      explain_notify::refused(req, std::move(name), 0, remedy(req.data), log_, true);
      ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
    }
    return ENOSYS;
  }

  // The first looser profile that allows the call, if any.
  std::string remedy(const seccomp_data& d) const {
    using P = policy::SeccompProfile;
    bool looser = false;
    for (P p : {P::default_profile, P::relaxed, P::none}) {
      if (looser && seccomp::evaluate(seccomp::embedded_filter(p), d) == SECCOMP_RET_ALLOW)
        return "--seccomp " + std::string(policy::to_string(p));
      looser = looser || p == refusals_.profile;
    }
    return "";
  }

  int decide(const seccomp_notif& req) {
    if (req.data.nr == SYS_connect && port_ != 0) return decide_connect(req);
    if (!metadata_notify::mediates(req.data.nr) || writable_.empty()) return ENOSYS;
    UniqueFd pidfd(open_pidfd(static_cast<pid_t>(req.pid)));
    if (!pidfd.valid()) return EACCES;
    struct Check {
      Impl* self;
      uint64_t id;
    } check{this, req.id};
    return metadata_notify::decide(req, pidfd.get(), writable_, [](void* c) {
      auto* k = static_cast<Check*>(c);
      return k->self->valid(k->id);
    }, &check);
  }

  // Hand-off mode's connect, bind and listen (handoff.h): never continued once a host socket can be
  // in the workload, except a unix path bind. 0, an errno, kPending or kContinue.
  int decide_handoff(const seccomp_notif& req) {
    // Without the sandbox's cookie, or where pidfd_getfd is refused before any hand-off began, no
    // host socket ever reaches this sandbox: the calls run as they would without hand-off (relay).
    if (!handoff_ok_) return kContinue;
    const long nr = static_cast<long>(req.data.nr);
    const int fd = static_cast<int>(req.data.args[0]);
    sockaddr_storage sa{};
    size_t len = 0;
    if (nr != SYS_listen) {
      const auto ulen = static_cast<int32_t>(req.data.args[2]);  // the kernel reads an int
      if (ulen < 0 || static_cast<size_t>(ulen) > sizeof sa) return EINVAL;
      len = static_cast<size_t>(ulen);
      if (len > 0 && read_workload_memory(static_cast<pid_t>(req.pid), req.data.args[1], &sa, len) !=
                         static_cast<ssize_t>(len))
        return errno == EPERM ? EACCES : EFAULT;
    }
    // From here only this copy of the address is used, never the workload's memory again.
    UniqueFd pidfd(open_pidfd(static_cast<pid_t>(req.pid)));
    if (!pidfd.valid() || !valid(req.id)) return EACCES;
    UniqueFd sock(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
    if (!sock.valid()) {
      if (errno == EBADF) return EBADF;
      if ((errno == EPERM || errno == ENOSYS) && submitted_ == 0) {
        handoff_ok_ = false;  // for good: the relay carries this sandbox's connections
        return kContinue;
      }
      return EACCES;
    }
    // The open file just taken is judged and used; the number may name another one by now.
    const auto kind = handoff::kind_of(sock.get(), sandbox_cookie_);
    int domain = 0, type = 0;
    socklen_t l = sizeof domain;
    ::getsockopt(sock.get(), SOL_SOCKET, SO_DOMAIN, &domain, &l);
    l = sizeof type;
    ::getsockopt(sock.get(), SOL_SOCKET, SO_TYPE, &type, &l);
    auto v = handoff::classify(*net_, nr, kind, domain, type, sa, len);
    switch (v.action) {
      case handoff::Action::refuse: return v.err;
      case handoff::Action::perform: return to_performer(req, nr, sock.get(), type, sa, len, false);
      case handoff::Action::perform_unix_path: return to_performer(req, nr, sock.get(), type, sa, len, true);
      case handoff::Action::refuse_reported:
        if (proxy::Server* direct = direct_) direct->refuse_uncarried(v.host, v.port);
        return v.err;
      case handoff::Action::hand_off: break;
    }
    sockaddr_storage peer{};
    socklen_t plen = sizeof peer;
    if (::getpeername(sock.get(), reinterpret_cast<sockaddr*>(&peer), &plen) == 0) return EISCONN;
    std::unique_lock<std::mutex> lock(mu_);
    if (!dialer_) {  // no proxy: its listener relays
      lock.unlock();
      return to_performer(req, nr, sock.get(), type, sa, len, false);
    }
    const bool cloexec = (fd_flags(static_cast<pid_t>(req.pid), fd) & O_CLOEXEC) != 0;
    ++submitted_;
    if (proxy::Server* direct = direct_) {
      lock.unlock();  // dial_direct takes the server's own lock
      if (auto d = direct->dial_direct(v.addr, v.port)) {
        if (d->err != 0) return d->err;
        dialling_.push_back(Dialling{req.id, direct, Pending{fd, cloexec, std::move(sock)}, std::move(*d)});
        return kPending;  // answered by dials_done
      }
      lock.lock();
    }
    pending_[req.id] = Pending{fd, cloexec, std::move(sock)};
    dialer_(req.id, proxy::ipv4_text(v.addr), v.port);
    return kPending;
  }

  // The direct path (proxy/server_direct.cc): a literal IPv4 destination is decided and dialled on
  // this thread, without the hop to the proxy's loop and back (one thread wake-up of three). The
  // connect is non-blocking and the notification stays unanswered until the socket is writable: its
  // socket joins serve()'s poll, so this thread goes on answering every other call of the sandbox
  // meanwhile, as it would while the proxy dialled. On loopback the handshake has completed by the
  // time connect() returns, so the next poll finds it writable at once. Bounded as the loop's dial:
  // the proxy's connect timeout (ETIMEDOUT), one entry per workload thread waiting in connect(): a
  // dial whose caller is gone (SIGKILLed while it waited; the wait is killable only) is dropped at
  // the next look (waiting()), at most kSweep later, not at its deadline; else a workload that
  // forks, connects to a slow destination and kills the child, over and over, piled up two
  // descriptors of this process per dead caller for 10 s each, until every mediated call of the
  // sandbox failed with EACCES (tests/escape/net_handoff_dead_callers.sh). The loop's dials are
  // looked at as often, on its tick (Server::set_handoff).
  static constexpr int64_t kSweep = proxy::Server::kTick.count();  // ms
  int dial_timeout() const {
    if (dialling_.empty()) return -1;
    auto soonest = dialling_.front().dial.deadline;
    for (const auto& d : dialling_) soonest = std::min(soonest, d.dial.deadline);
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(soonest - std::chrono::steady_clock::now());
    return static_cast<int>(std::clamp<int64_t>(left.count(), 0, kSweep));
  }

  // p: the poll results of the first n entries of dialling_ (those polled; later ones wait).
  void dials_done(const pollfd* p, size_t n) {
    const auto now = std::chrono::steady_clock::now();
    size_t kept = 0;
    for (size_t i = 0; i < dialling_.size(); ++i) {
      Dialling& d = dialling_[i];
      int err = -1;  // -1: still under way
      if (i < n && p[i].revents) {
        // Connected as the loop's poll_attempts would accept it: no pending error, and a peer. A
        // socket that polls ready with neither (TCP reports POLLOUT only once established) fails
        // rather than being polled again at once until the deadline.
        err = proxy::pending_socket_error(d.dial.sock.get());
        sockaddr_storage peer{};
        socklen_t plen = sizeof peer;
        if (err == 0 && ::getpeername(d.dial.sock.get(), reinterpret_cast<sockaddr*>(&peer), &plen) != 0)
          err = ECONNREFUSED;
      }
      if (err < 0 && now >= d.dial.deadline) err = ETIMEDOUT;
      if (err < 0 && !waiting(d.id)) err = ECANCELED;  // the caller is gone: nothing waits for this dial
      if (err < 0) {
        if (kept != i) dialling_[kept] = std::move(d);
        ++kept;
        continue;
      }
      int answer = err == ECANCELED ? -1 : err;
      if (err == 0) {
        const int put = install(d.id, d.pending, d.dial.sock.get());
        answer = put == ENOENT ? -1 : put;  // ENOENT: the caller was interrupted or died
        // Not reported as handed off: the workload does not hold this connection.
        if (put == ENOENT) err = ECANCELED;
      }
      if (answer >= 0) reply(d.id, answer);
      // Reported after the answer, off the path of the workload's connect(); the socket is still
      // open here (ours), so sock_diag finds the connection for its byte counts.
      d.server->direct_done(d.dial, err);
    }
    dialling_.resize(kept);
  }

  // Puts `fresh`, connected to the checked destination, in the place of the workload's descriptor
  // number: 0, ENOENT (the caller was interrupted or died: nothing to answer) or EACCES.
  int install(uint64_t id, const Pending& p, int fresh) {
    handoff::copy_settings(p.sock.get(), fresh);
    // SETFD replaces the number as dup2 would; without FLAG_SEND the answer stays to be sent.
    seccomp_notif_addfd add{};
    add.id = id;
    add.flags = SECCOMP_ADDFD_FLAG_SETFD;
    add.srcfd = static_cast<uint32_t>(fresh);
    add.newfd = static_cast<uint32_t>(p.fd);
    add.newfd_flags = p.cloexec ? O_CLOEXEC : 0;
    if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ADDFD, &add) >= 0) return 0;
    return errno == ENOENT ? ENOENT : EACCES;
  }

  void set_dialer(Dialer dialer, proxy::Server* direct) override {
    std::lock_guard<std::mutex> lock(mu_);
    dialer_ = std::move(dialer);
    direct_ = direct;
  }

  // The proxy's answer to a hand-off (its thread): the connected socket goes in the place of the
  // workload's descriptor number, or connect() fails with the errno; ECANCELED (the loop found the
  // caller gone) only drops the workload's socket held here.
  int dialled(uint64_t ticket, int fd, int err) override {
    UniqueFd fresh(fd);
    Pending p;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = pending_.find(ticket);
      if (it == pending_.end()) return ECANCELED;
      p = std::move(it->second);
      pending_.erase(it);
    }
    if (err == ECANCELED) return ECANCELED;
    std::vector<char> buf(resp_.size());
    auto* resp = reinterpret_cast<seccomp_notif_resp*>(buf.data());
    resp->id = ticket;
    int ended = err ? err : ECONNREFUSED;
    if (err == 0 && fresh.valid()) ended = install(ticket, p, fresh.get());
    if (ended == ENOENT) return ECANCELED;  // the caller was interrupted or died: nothing to answer
    resp->error = -ended;
    ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, resp);
    return ended;
  }

  bool waiting(uint64_t ticket) override { return valid(ticket); }

  // 0 when the workload's socket is now connected to the proxy (or in progress), else an errno.
  int decide_connect(const seccomp_notif& req) {
    const int fd = static_cast<int>(req.data.args[0]);
    const size_t len = std::min<uint64_t>(req.data.args[2], sizeof(sockaddr_storage));
    sockaddr_storage sa{};
    if (len < sizeof(sa_family_t)) return EINVAL;
    if (read_workload_memory(static_cast<pid_t>(req.pid), req.data.args[1], &sa, len) != static_cast<ssize_t>(len))
      return errno == EPERM ? EACCES : EFAULT;
    // The address was read once, into our memory; only this copy is judged, and the connect below
    // uses cage's own constant address, never the workload's again.
    bool to_proxy = false;
    if (sa.ss_family == AF_INET && len >= sizeof(sockaddr_in)) {
      auto* in = reinterpret_cast<const sockaddr_in*>(&sa);
      to_proxy = in->sin_addr.s_addr == htonl(INADDR_LOOPBACK) && ntohs(in->sin_port) == port_;
    } else if (sa.ss_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
      auto* in6 = reinterpret_cast<const sockaddr_in6*>(&sa);
      static const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
      to_proxy = std::memcmp(&in6->sin6_addr, mapped, 16) == 0 && ntohs(in6->sin6_port) == port_;
    }
    if (!to_proxy) {
      if (explain_) record_direct(req, sa);
      return EACCES;
    }
    UniqueFd pidfd(open_pidfd(static_cast<pid_t>(req.pid)));
    // Still waiting in connect() after pidfd_open: the pid names that thread, not a reused one.
    if (!pidfd.valid() || !valid(req.id)) return EACCES;
    UniqueFd sock(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
    if (!sock.valid() && (errno == EPERM || errno == ENOSYS)) return substitute(req, fd, sa.ss_family);
    if (!sock.valid()) return errno == EBADF ? EBADF : EACCES;
    int domain = 0, type = 0, proto = 0;
    socklen_t l = sizeof domain;
    ::getsockopt(sock.get(), SOL_SOCKET, SO_DOMAIN, &domain, &l);
    l = sizeof type;
    ::getsockopt(sock.get(), SOL_SOCKET, SO_TYPE, &type, &l);
    l = sizeof proto;
    ::getsockopt(sock.get(), SOL_SOCKET, SO_PROTOCOL, &proto, &l);
    if (type != SOCK_STREAM || proto != IPPROTO_TCP || (domain != AF_INET && domain != AF_INET6)) return EACCES;
    return connect_to_proxy(sock.get(), domain);
  }

  // --explain: a TCP or UDP connect that did not go to the proxy, named by the address cage judged
  // (its own copy); refused above whatever is recorded here.
  void record_direct(const seccomp_notif& req, const sockaddr_storage& sa) {
    char text[INET6_ADDRSTRLEN] = {};
    uint16_t port = 0;
    if (sa.ss_family == AF_INET) {
      auto* in = reinterpret_cast<const sockaddr_in*>(&sa);
      ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
      port = ntohs(in->sin_port);
    } else if (sa.ss_family == AF_INET6) {
      auto* in6 = reinterpret_cast<const sockaddr_in6*>(&sa);
      ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
      port = ntohs(in6->sin6_port);
    } else {
      return;  // a unix or netlink socket: not a destination --net or the proxy would name
    }
    std::string where;
    if (sa.ss_family == AF_INET6) where += '[';
    where += text;
    if (sa.ss_family == AF_INET6) where += ']';
    where += ':';
    where += std::to_string(port);
    explain_notify::direct(req, std::move(where), log_);
  }

  // Where an outer filter refuses pidfd_getfd (Docker's default profile, without CAP_SYS_PTRACE), the
  // workload's socket cannot be reached: cage connects a TCP socket of its own to the proxy and puts it
  // in the workload's place with SECCOMP_IOCTL_NOTIF_ADDFD (SETFD replaces the descriptor number, as
  // dup2 would), keeping its O_NONBLOCK and close-on-exec flags. Options set on the old socket are lost.
  int substitute(const seccomp_notif& req, int fd, int family) {
    char path[64], link[64] = {}, info[512] = {};
    std::snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(req.pid), fd);
    if (::readlink(path, link, sizeof link - 1) < 0) return EBADF;
    if (std::strncmp(link, "socket:[", 8) != 0) return ENOTSOCK;
    std::snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", static_cast<int>(req.pid), fd);
    UniqueFd fdinfo(::open(path, O_RDONLY | O_CLOEXEC));
    if (!fdinfo.valid() || ::read(fdinfo.get(), info, sizeof info - 1) <= 0) return EBADF;
    const char* f = std::strstr(info, "flags:");
    const unsigned long flags = f ? std::strtoul(f + 6, nullptr, 8) : 0;
    // A non-blocking socket connects as the workload's would (EINPROGRESS is its answer too): the
    // mediator thread never waits on the proxy's accept queue.
    UniqueFd sock(::socket(family, SOCK_STREAM | SOCK_CLOEXEC | ((flags & O_NONBLOCK) ? SOCK_NONBLOCK : 0), IPPROTO_TCP));
    if (!sock.valid()) return errno;
    const int connected = connect_to_proxy(sock.get(), family);
    if (connected != 0 && connected != EINPROGRESS) return connected;
    seccomp_notif_addfd add{};
    add.id = req.id;
    add.flags = SECCOMP_ADDFD_FLAG_SETFD;
    add.srcfd = static_cast<uint32_t>(sock.get());
    add.newfd = static_cast<uint32_t>(fd);
    add.newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
    return ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ADDFD, &add) >= 0 ? connected : EACCES;
  }

  // Connects sock (family AF_INET or AF_INET6) to the proxy: cage's own constant address.
  int connect_to_proxy(int sock, int family) {
    int rc;
    if (family == AF_INET) {
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(port_);
      to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      rc = ::connect(sock, reinterpret_cast<sockaddr*>(&to), sizeof to);
    } else {
      sockaddr_in6 to{};
      to.sin6_family = AF_INET6;
      to.sin6_port = htons(port_);
      static const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
      std::memcpy(&to.sin6_addr, mapped, 16);
      rc = ::connect(sock, reinterpret_cast<sockaddr*>(&to), sizeof to);
    }
    return rc == 0 ? 0 : errno;
  }

  UniqueFd channel_, stop_, listener_;
  uint16_t port_;
  std::vector<std::string> writable_;
  bool explain_;
  Refusals refusals_;
  const NetPlan* net_;              // hand-off mode when set
  bool handoff_ok_ = false;         // mediator thread only
  UniqueFd performer_;              // mediator thread only: the performer's channel, or gone
  std::unordered_set<uint64_t> performing_;  // the notifications the performer is to answer
  uint64_t sandbox_cookie_ = 0;
  std::mutex mu_;                   // dialer_, direct_, pending_, submitted_
  Dialer dialer_;
  proxy::Server* direct_ = nullptr;  // the direct path's decisions; outlives this thread (execute.cc)
  struct Dialling {  // mediator thread only: a direct dial under way, its notification unanswered
    uint64_t id;
    proxy::Server* server;
    Pending pending;
    proxy::Server::Direct dial;
  };
  std::vector<Dialling> dialling_;
  std::unordered_map<uint64_t, Pending> pending_;
  uint64_t submitted_ = 0;
  explain_notify::Log log_;
  std::vector<char> req_, resp_, performed_;
  std::thread thread_;
};

// Hand-off's refusals, reached with the syscall number in A (handoff.h): a send with MSG_FASTOPEN
// connects past connect(), and a source route (IP_OPTIONS' LSRR/SSRR, an IPv6 routing header) sends a
// connected socket's packets by way of another host. Flags and option words are compared on their
// low 32 bits, all the kernel reads of them.
void handoff_rules(std::vector<sock_filter>& f) {
  constexpr uint32_t kRefuse = SECCOMP_RET_ERRNO | EPERM;
  auto low = [](int i) { return static_cast<uint32_t>(offsetof(seccomp_data, args) + 8 * i); };
  std::vector<size_t> done;  // jumps to the end of these rules, patched below
  f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));  // the ioctl check used A
  auto flags_block = [&](int nr, int arg) {
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 4));  // else: the next block
    f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, low(arg)));
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MSG_FASTOPEN, 0, 1));
    f.push_back(BPF_STMT(BPF_RET | BPF_K, kRefuse));
    done.push_back(f.size());
    f.push_back(BPF_STMT(BPF_JMP | BPF_JA, 0));
  };
  flags_block(SYS_sendto, 3);
  flags_block(SYS_sendmsg, 2);
  flags_block(SYS_sendmmsg, 3);
  // setsockopt(fd, level, name): level IPPROTO_IP with IP_OPTIONS, or IPPROTO_IPV6 with a routing
  // header (RFC 2292's forms included: IPV6_2292PKTOPTIONS can carry one).
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setsockopt, 0, 10));
  f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, low(1)));
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_IP, 0, 2));
  f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, low(2)));
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IP_OPTIONS, 5, 6));
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_IPV6, 0, 5));
  f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, low(2)));
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPV6_RTHDR, 2, 0));
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPV6_2292RTHDR, 1, 0));
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPV6_2292PKTOPTIONS, 0, 1));
  f.push_back(BPF_STMT(BPF_RET | BPF_K, kRefuse));
  // The end, where the filter goes on (A is clobbered; what follows loads what it needs).
  for (size_t at : done) f[at].k = static_cast<uint32_t>(f.size() - at - 1);
}

}  // namespace

namespace {

// The calls filter() notifies by number alone.
std::vector<int> notified_by_number(bool connect, bool metadata, bool explain, bool handoff) {
  std::vector<int> nrs;
  if (connect || handoff) nrs.push_back(SYS_connect);
  if (handoff) nrs.insert(nrs.end(), {SYS_bind, SYS_listen});
  if (metadata) nrs.insert(nrs.end(), metadata_notify::calls().begin(), metadata_notify::calls().end());
  if (explain) nrs.insert(nrs.end(), explain_notify::calls().begin(), explain_notify::calls().end());
  return nrs;
}

}  // namespace

std::vector<int> notified_calls(bool connect, bool metadata, bool explain, bool handoff) {
  auto nrs = notified_by_number(connect, metadata, explain, handoff);
  if (metadata) nrs.push_back(SYS_ioctl);  // for some of its commands
  // The hand-off's own refusals in the filter (MSG_FASTOPEN, source routes) come before the tail.
  if (handoff) nrs.insert(nrs.end(), {SYS_sendto, SYS_sendmsg, SYS_sendmmsg, SYS_setsockopt});
  return nrs;
}

std::vector<sock_filter> filter(bool connect, bool metadata, bool explain, bool handoff,
                                std::span<const sock_filter> tail) {
  // Another architecture's entry points would bypass the numbers below: refused where this filter
  // mediates, merely not observed where it only observes (the main profile decides them, as it would
  // without --explain).
  // The hand-off is planned only under a profile that kills those entry points (handoff.h); refused
  // here as well, so that a 32-bit connect() can never reach a handed-off host socket.
  const uint32_t foreign = connect || metadata || handoff ? SECCOMP_RET_ERRNO | EPERM : SECCOMP_RET_ALLOW;
  std::vector<sock_filter> f = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, foreign),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, kX32Bit ? kX32Bit : 0xffffffffu, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, foreign),
  };
  for (int nr : notified_by_number(connect, metadata, explain, handoff)) {
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 1));
    f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
  }
  if (metadata) {
    // ioctl only for the inode-changing commands (metadata_notify.h), compared on the low 32 bits of
    // the argument, which is all the kernel reads of it (little-endian: the first word).
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "args[1]'s low word is its first");
    const auto& cmds = metadata_notify::ioctls();
    const auto n = static_cast<uint8_t>(cmds.size());
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, static_cast<uint8_t>(n + 3)));
    f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[1])));
    for (uint8_t i = 0; i < n; ++i) f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, cmds[i], static_cast<uint8_t>(n - i), 0));
    f.push_back(BPF_STMT(BPF_JMP | BPF_JA, 1));  // another command: to the end
    f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
  }
  if (handoff) handoff_rules(f);
  // The end: every other call is allowed here (the main filter judges it), or judged by the tail of
  // --explain's errno observer (seccomp_observe.h), which starts from the call's architecture again.
  if (tail.empty()) f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  f.insert(f.end(), tail.begin(), tail.end());
  return f;
}

int install(int channel, const std::vector<sock_filter>& filter, bool netns_socket) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  sock_fprog prog{static_cast<unsigned short>(filter.size()), const_cast<sock_filter*>(filter.data())};
  long fd = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                      SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
  if (fd < 0 && errno == EINVAL)  // before Linux 5.19: a signal may interrupt a call being answered
    fd = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  if (fd < 0) return errno;
  int e = send_fd(channel, static_cast<int>(fd), 'n');
  ::close(static_cast<int>(fd));
  if (e != 0 || !netns_socket) return e;
  int own = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (own < 0) return errno;
  e = send_fd(channel, own, 'k');
  ::close(own);
  return e;
}

Result<std::unique_ptr<Mediator>> start(UniqueFd channel, uint16_t proxy_port,
                                        std::vector<std::string> writable, bool explain, Refusals refusals,
                                        const NetPlan* handoff) {
  auto m = std::make_unique<Impl>(std::move(channel), proxy_port, std::move(writable), explain,
                                  std::move(refusals), handoff);
  if (int e = m->begin(); e != 0)
    return unavailable("--net", "cannot mediate the workload's connections (seccomp user notification)",
                       "allow user namespaces, or drop --net", e);
  return std::unique_ptr<Mediator>(std::move(m));
}

}  // namespace cage::lx::connect_notify
