// Attacks on egress hand-off (src/linux/handoff.h), run for a given number of seconds by
// tests/escape/net_handoff_*.sh inside cage with --net 127.0.0.1:ALLOWED. Each tries to make a
// socket of the host's network namespace (one cage handed over) reach 127.0.0.1:FORBIDDEN, where a
// listener outside the sandbox counts connections (`serve`): any connection there is an escape.
// Prints "handoffs N" (sockets seen to be the host's) and "listened N" (a host socket in listen):
//   handoff_race serve COUNTFILE PORTFILE      (outside: accept, count, close; COUNTFILE - : none)
//   handoff_race MODE ALLOWED FORBIDDEN SECS   MODE: unspec bindlisten fastopen swap passed unixbind nested
// unixbind takes a free port of the host's loopback for FORBIDDEN and prints "hostbound N" (a host
// socket bound there) and "unixbound N" (the sandbox's own unix binds that worked).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif
#ifndef TCP_FASTOPEN_CONNECT
#define TCP_FASTOPEN_CONNECT 30
#endif

static struct sockaddr_in allowed, forbidden;
static uint64_t own_cookie;
static atomic_int stop_flag, handoffs, listened, hostbound, unixbound;
static double until;
static int tricks = 7;  // 1 disconnect and connect elsewhere, 2 bind and listen, 4 Fast Open and options

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
static uint64_t cookie(int s) {
  uint64_t c = 0;
  socklen_t l = sizeof c;
  getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, &c, &l);
  return c;
}
static struct sockaddr_in at(int port) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}
// Every socket here gives up a blocked connect or send after 200 ms (SO_SNDTIMEO), so a full
// accept queue cannot hold a thread past the deadline.
static int tcp_socket(void) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct timeval tv = {0, 200000};
  if (s >= 0) setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return s;
}
// A socket connected to the allowed destination; counted when it is the host's (handed off).
static int handed(void) {
  int s = tcp_socket();
  if (s < 0) return -1;
  if (connect(s, (struct sockaddr*)&allowed, sizeof allowed) != 0) {
    close(s);
    return -1;
  }
  if (cookie(s) != own_cookie) atomic_fetch_add(&handoffs, 1);
  return s;
}
// Every way this file knows to re-aim or re-use a socket: disconnect and connect elsewhere, bind and
// listen, Fast Open sends with an address, TCP_FASTOPEN_CONNECT, a source route.
static void abuse(int s) {
  struct sockaddr unspec = {.sa_family = AF_UNSPEC};
  connect(s, &unspec, sizeof unspec);
  if (tricks & 1) connect(s, (struct sockaddr*)&forbidden, sizeof forbidden);
  if (tricks & 2) {
    struct sockaddr_in any = at(0);
    any.sin_addr.s_addr = 0;
    bind(s, (struct sockaddr*)&any, sizeof any);
    // Judged on one file (a dup: the number may name another file by the next call, a fresh
    // hand-off in place of the sandbox socket that did listen): listening and the host's.
    if (listen(s, 1) == 0) {
      int one = dup(s), acc = 0;
      socklen_t l = sizeof acc;
      if (one >= 0 && getsockopt(one, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) == 0 && acc &&
          cookie(one) != own_cookie)
        atomic_fetch_add(&listened, 1);
      if (one >= 0) close(one);
    }
  }
  if (!(tricks & 4)) return;
  sendto(s, "x", 1, MSG_FASTOPEN | MSG_NOSIGNAL, (struct sockaddr*)&forbidden, sizeof forbidden);
  struct msghdr m = {.msg_name = &forbidden, .msg_namelen = sizeof forbidden};
  struct iovec v = {"y", 1};
  m.msg_iov = &v;
  m.msg_iovlen = 1;
  sendmsg(s, &m, MSG_FASTOPEN | MSG_NOSIGNAL);
  struct mmsghdr mm = {.msg_hdr = m};
  sendmmsg(s, &mm, 1, MSG_FASTOPEN | MSG_NOSIGNAL);
  int one = 1;
  setsockopt(s, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof one);
  connect(s, (struct sockaddr*)&forbidden, sizeof forbidden);
  // LSRR through the forbidden port's host: 3 bytes of header, one address, padded to a word.
  unsigned char lsrr[8] = {1 /* NOP */, 0x83 /* LSRR */, 7, 4, 127, 0, 0, 1};
  setsockopt(s, IPPROTO_IP, IP_OPTIONS, lsrr, sizeof lsrr);
}

static int shared_fd = -1;
static void* abuser(void* arg) {
  (void)arg;
  while (!atomic_load(&stop_flag)) {
    int s = shared_fd;
    if (s >= 0) abuse(s);
  }
  return NULL;
}

// swap: one thread puts a host socket and a fresh sandbox socket in turn at one number, another
// connects that number to an address a third flips between the allowed one, a unix path, AF_UNSPEC
// and the forbidden one (the memory the supervisor reads once, the kernel would read again).
static int swap_fd = 500;
static struct sockaddr_storage flip;
static void* swapper(void* arg) {
  (void)arg;
  while (!atomic_load(&stop_flag)) {
    int h = handed(), f = tcp_socket();
    for (int i = 0; i < 200 && h >= 0 && f >= 0; ++i) {
      dup2(h, swap_fd);
      dup2(f, swap_fd);
    }
    if (h >= 0) close(h);
    if (f >= 0) close(f);
  }
  return NULL;
}
static void* flipper(void* arg) {
  (void)arg;
  struct sockaddr_un un = {.sun_family = AF_UNIX};
  strcpy(un.sun_path, "/tmp/handoff-race.sock");
  struct sockaddr unspec = {.sa_family = AF_UNSPEC};
  for (unsigned i = 0; !atomic_load(&stop_flag); ++i) {
    switch (i % 4) {
      case 0: memcpy(&flip, &allowed, sizeof allowed); break;
      case 1: memcpy(&flip, &un, sizeof un); break;
      case 2: memcpy(&flip, &unspec, sizeof unspec); break;
      default: memcpy(&flip, &forbidden, sizeof forbidden); break;
    }
  }
  return NULL;
}
static void* swap_connector(void* arg) {
  (void)arg;
  while (!atomic_load(&stop_flag)) {
    connect(swap_fd, (struct sockaddr*)&flip, sizeof(struct sockaddr_un));
    bind(swap_fd, (struct sockaddr*)&flip, sizeof(struct sockaddr_un));
    listen(swap_fd, 1);
  }
  return NULL;
}

// unixbind: one thread puts a host socket whose connection has ended (a hand-off the server closed,
// shut down here: no port, so bind() works on it) and a fresh sandbox unix socket in turn at one
// number; another binds that number to the address a third flips between a unix path and the
// host's 127.0.0.1:FORBIDDEN. Were a unix path bind continued, the kernel would read the number and
// the address again and could bind the host socket to a port of the host.
static const char* kBindPath = "/tmp/handoff-race-bind.sock";
static int closed_host(void) {
  int s = handed();
  if (s < 0) return -1;
  char b[64];
  struct pollfd p = {s, POLLIN, 0};
  while (poll(&p, 1, 200) == 1 && recv(s, b, sizeof b, 0) > 0) {
  }
  shutdown(s, SHUT_RDWR);
  for (int i = 0; i < 100; ++i) {
    struct tcp_info ti;
    socklen_t l = sizeof ti;
    if (getsockopt(s, IPPROTO_TCP, TCP_INFO, &ti, &l) == 0 && ti.tcpi_state == TCP_CLOSE) return s;
    usleep(1000);
  }
  close(s);
  return -1;
}
static void* bind_swapper(void* arg) {
  (void)arg;
  while (!atomic_load(&stop_flag)) {
    int h = closed_host();
    // 50 ms per host socket (making one, a dial, the server's close and the shutdown, takes a while),
    // each time against a fresh unix socket (a bound one cannot bind again).
    for (double end = now() + 0.05; now() < end && h >= 0;) {
      int f = socket(AF_UNIX, SOCK_STREAM, 0);
      dup2(h, swap_fd);
      if (f >= 0) dup2(f, swap_fd), close(f);
    }
    if (h >= 0) close(h);
  }
  return NULL;
}
static void* bind_flipper(void* arg) {
  (void)arg;
  struct sockaddr_un un = {.sun_family = AF_UNIX};
  strcpy(un.sun_path, kBindPath);
  for (unsigned i = 0; !atomic_load(&stop_flag); ++i) {
    if (i % 2) memcpy(&flip, &forbidden, sizeof forbidden);
    else memcpy(&flip, &un, sizeof un);
  }
  return NULL;
}
static void* binder(void* arg) {
  (void)arg;
  while (!atomic_load(&stop_flag)) {
    if (bind(swap_fd, (struct sockaddr*)&flip, sizeof(struct sockaddr_un)) != 0) continue;
    // A bind that worked: a unix socket's (the path is removed for the next), or a host socket's. Judged
    // on one file (a dup: the number may name another file by now, so only a host socket that holds
    // the very port counts; the host's own look at the port does not depend on this).
    unlink(kBindPath);
    int one = dup(swap_fd);
    struct sockaddr_storage a;
    socklen_t l = sizeof a;
    if (one >= 0 && getsockname(one, (struct sockaddr*)&a, &l) == 0 && a.ss_family == AF_INET &&
        ((struct sockaddr_in*)&a)->sin_port == forbidden.sin_port && cookie(one) != own_cookie) {
      atomic_fetch_add(&hostbound, 1);  // kept open: the host sees the port held for the run
      continue;
    }
    atomic_fetch_add(&unixbound, 1);
    if (one >= 0) close(one);
  }
  return NULL;
}

// nested: the workload's own seccomp filter (filters stack; its listener is its own) turns connect,
// bind and listen into notifications that a thread of its own answers with CONTINUE. Of two filters
// that both answer SECCOMP_RET_USER_NOTIF the newest one's listener gets the notification, so cage's
// mediator would never see these calls, and the kernel would run them on the handed-off host sockets.
static int own_listener = -1;
static void* continuer(void* arg) {
  (void)arg;
  while (!atomic_load(&stop_flag)) {
    struct pollfd p = {own_listener, POLLIN, 0};
    if (poll(&p, 1, 100) != 1) continue;
    struct seccomp_notif req;
    memset(&req, 0, sizeof req);
    if (ioctl(own_listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) continue;
    struct seccomp_notif_resp resp;
    memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ioctl(own_listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }
  return NULL;
}
static int own_filter(void) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_connect, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_bind, 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_listen, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof f / sizeof f[0], f};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);  // cage's is set already; without cage it is needed
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}
static int nested(void) {
  int hosts[32], n = 0;
  while (n < 32 && now() < until) {  // handed off while cage's mediator still sees connect()
    int s = handed();
    if (s >= 0) hosts[n++] = s;
  }
  own_listener = own_filter();
  if (own_listener < 0) {
    printf("own filter: %s\n", strerror(errno));
    return 0;
  }
  pthread_t t;
  pthread_create(&t, NULL, continuer, NULL);
  for (int i = 0; i < n; ++i) {
    tricks = i % 2 ? 2 : 1;  // half of them re-aimed at FORBIDDEN, half bound and put in listen
    abuse(hosts[i]);
  }
  atomic_store(&stop_flag, 1);
  pthread_join(t, NULL);
  return 0;
}

static void run_threads(void* (*fns[])(void*), int n) {
  pthread_t t[8];
  for (int i = 0; i < n; ++i) pthread_create(&t[i], NULL, fns[i], NULL);
  while (now() < until) usleep(20000);
  atomic_store(&stop_flag, 1);
  for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
}

// Listens on a port the kernel picks (never one in use), written to portfile once it accepts.
static int serve(const char* file, const char* portfile) {
  int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = at(0);
  socklen_t al = sizeof a;
  if (bind(l, (struct sockaddr*)&a, sizeof a) != 0 || listen(l, 4096) != 0 ||
      getsockname(l, (struct sockaddr*)&a, &al) != 0)
    return perror("serve"), 1;
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", portfile);
  FILE* pf = fopen(tmp, "w");
  if (!pf || fprintf(pf, "%d\n", ntohs(a.sin_port)) < 0 || fclose(pf) != 0 || rename(tmp, portfile) != 0) return 1;
  int out = file[0] == '-' ? -1 : open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  for (long n = 1;; ++n) {
    int c = accept(l, NULL, NULL);
    if (c < 0) continue;
    close(c);
    char text[32];
    int len = snprintf(text, sizeof text, "%020ld\n", n);
    if (out >= 0 && pwrite(out, text, len, 0) != len) return 1;
  }
}

int main(int argc, char** argv) {
  if (argc == 4 && !strcmp(argv[1], "serve")) return serve(argv[2], argv[3]);
  if (argc != 5) return fprintf(stderr, "usage: see the file\n"), 2;
  allowed = at(atoi(argv[2]));
  forbidden = at(atoi(argv[3]));
  until = now() + atof(argv[4]);
  alarm((unsigned)atof(argv[4]) + 30);  // a hang is a failure with a cause, not the test's timeout
  int own = socket(AF_INET, SOCK_STREAM, 0);
  own_cookie = cookie(own);
  close(own);
  const char* mode = argv[1];
  tricks = !strcmp(mode, "unspec") ? 1 : !strcmp(mode, "bindlisten") ? 3 : !strcmp(mode, "fastopen") ? 5 : 7;
  if (!strcmp(mode, "unspec") || !strcmp(mode, "bindlisten") || !strcmp(mode, "fastopen")) {
    // A fresh hand-off every round, abused by two threads at once and by this one.
    void* (*fns[])(void*) = {abuser, abuser};
    pthread_t t[2];
    for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, fns[i], NULL);
    while (now() < until) {
      int s = handed();
      if (s < 0) continue;
      shared_fd = s;
      for (int i = 0; i < 20; ++i) abuse(s);
      shared_fd = -1;
      close(s);
    }
    atomic_store(&stop_flag, 1);
    for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  } else if (!strcmp(mode, "nested")) {
    nested();
  } else if (!strcmp(mode, "swap")) {
    int u = socket(AF_UNIX, SOCK_STREAM, 0);  // a unix listener the flipped path names
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    strcpy(un.sun_path, "/tmp/handoff-race.sock");
    unlink(un.sun_path);
    bind(u, (struct sockaddr*)&un, sizeof un);
    listen(u, 4096);
    fcntl(u, F_SETFL, O_NONBLOCK);
    void* (*fns[])(void*) = {swapper, flipper, swap_connector, swap_connector};
    run_threads(fns, 4);
  } else if (!strcmp(mode, "unixbind")) {
    unlink(kBindPath);
    void* (*fns[])(void*) = {bind_swapper, bind_flipper, binder, binder};
    run_threads(fns, 4);
    printf("hostbound %d\nunixbound %d\n", atomic_load(&hostbound), atomic_load(&unixbound));
  } else if (!strcmp(mode, "passed")) {
    // Host sockets passed over SCM_RIGHTS to another process of the sandbox, which abuses them.
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    pid_t pid = fork();
    if (pid == 0) {
      close(sv[0]);
      for (;;) {
        char b;
        char cbuf[CMSG_SPACE(sizeof(int))];
        struct iovec v = {&b, 1};
        struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        if (recvmsg(sv[1], &m, 0) <= 0) break;
        struct cmsghdr* c = CMSG_FIRSTHDR(&m);
        if (!c) continue;
        int s;
        memcpy(&s, CMSG_DATA(c), sizeof s);
        for (int i = 0; i < 20; ++i) abuse(s);
        close(s);
      }
      printf("listened %d\n", atomic_load(&listened));
      _exit(0);
    }
    close(sv[1]);
    while (now() < until) {
      int s = handed();
      if (s < 0) continue;
      char b = 0, cbuf[CMSG_SPACE(sizeof(int))] = {0};
      struct iovec v = {&b, 1};
      struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
      struct cmsghdr* c = CMSG_FIRSTHDR(&m);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      memcpy(CMSG_DATA(c), &s, sizeof s);
      sendmsg(sv[0], &m, 0);
      close(s);
    }
    close(sv[0]);
    waitpid(pid, NULL, 0);
  } else {
    return fprintf(stderr, "unknown mode %s\n", mode), 2;
  }
  printf("handoffs %d\nlistened %d\n", atomic_load(&handoffs), atomic_load(&listened));
  return 0;
}
