// Attack on egress hand-off's performer (src/linux/performer.h), run inside cage with --net by
// tests/escape/pending/net_handoff_nested_landlock.sh: a process of the sandbox confines itself further
// with a Landlock domain of its own (as a nested sandbox does: a browser's, a build tool's, cage run
// inside cage, which has no user namespace there and uses Landlock alone) and then makes the calls its
// domain forbids. The performer runs connect, bind and listen with the rights it got when the sandbox
// started, not the caller's: each would pass.
//   performer_nested DIR   prints "makesock X", "abstract X", "tcp X" (X: ok or the errno's name)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

struct ruleset_attr {
  uint64_t handled_access_fs, handled_access_net, scoped;
};
// A domain with nothing allowed of what it handles; 0 or an errno.
static int confine(uint64_t fs, uint64_t net, uint64_t scoped) {
  struct ruleset_attr a = {fs, net, scoped};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);  // cage's is set already; without cage it is needed
  int rs = (int)syscall(444 /* landlock_create_ruleset */, &a, sizeof a, 0);
  if (rs < 0) return errno;
  int rc = (int)syscall(446 /* landlock_restrict_self */, rs, 0);
  close(rs);
  return rc == 0 ? 0 : errno;
}
// Runs fn in a child under the given domain and prints NAME and its result.
static void in_child(const char* name, uint64_t fs, uint64_t net, uint64_t scoped, int (*fn)(void)) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int e = confine(fs, net, scoped);
    if (e) printf("%s no-landlock(%s)\n", name, strerrorname_np(e));
    else if ((e = fn()) == 0) printf("%s ok\n", name);
    else printf("%s %s\n", name, strerrorname_np(e));
    fflush(stdout);
    _exit(0);
  }
  waitpid(pid, NULL, 0);
}

static char dir[80];
static struct sockaddr_un abstract;
static struct sockaddr_in tcp;

static int make_sock(void) {  // LANDLOCK_ACCESS_FS_MAKE_SOCK handled, no rule
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s/nested.sock", dir);
  unlink(a.sun_path);
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  return bind(s, (struct sockaddr*)&a, sizeof a) == 0 ? 0 : errno;
}
static int abstract_connect(void) {  // LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET: the parent's listener
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  return connect(s, (struct sockaddr*)&abstract, sizeof abstract) == 0 ? 0 : errno;
}
static int tcp_connect(void) {  // LANDLOCK_ACCESS_NET_CONNECT_TCP handled, no port
  int s = socket(AF_INET, SOCK_STREAM, 0);
  return connect(s, (struct sockaddr*)&tcp, sizeof tcp) == 0 ? 0 : errno;
}

int main(int argc, char** argv) {
  if (argc != 2) return fprintf(stderr, "usage: performer_nested DIR\n"), 2;
  alarm(30);
  snprintf(dir, sizeof dir, "%s", argv[1]);
  // The parent's own listeners: an abstract unix one, a TCP one on this namespace's loopback.
  abstract.sun_family = AF_UNIX;
  snprintf(abstract.sun_path + 1, sizeof abstract.sun_path - 1, "cage-nested-%d", getpid());
  int a = socket(AF_UNIX, SOCK_STREAM, 0);
  if (bind(a, (struct sockaddr*)&abstract, sizeof abstract) != 0 || listen(a, 8) != 0)
    return perror("abstract listener"), 1;
  int t = socket(AF_INET, SOCK_STREAM, 0);
  tcp.sin_family = AF_INET;
  tcp.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t l = sizeof tcp;
  if (bind(t, (struct sockaddr*)&tcp, sizeof tcp) != 0 || listen(t, 8) != 0 ||
      getsockname(t, (struct sockaddr*)&tcp, &l) != 0)
    return perror("tcp listener"), 1;
  // The twins, unconfined: each works.
  printf("twin-makesock %s\n", make_sock() == 0 ? "ok" : "failed");
  printf("twin-abstract %s\n", abstract_connect() == 0 ? "ok" : "failed");
  printf("twin-tcp %s\n", tcp_connect() == 0 ? "ok" : "failed");
  in_child("makesock", 1ULL << 9 /* MAKE_SOCK */, 0, 0, make_sock);
  in_child("abstract", 0, 0, 1ULL << 0 /* SCOPE_ABSTRACT_UNIX_SOCKET */, abstract_connect);
  in_child("tcp", 0, 1ULL << 1 /* NET_CONNECT_TCP */, 0, tcp_connect);
  return 0;
}
