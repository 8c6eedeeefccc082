// Attack on egress hand-off (src/linux/handoff.h) through the 32-bit entry point of x86_64
// (int 0x80), which --seccomp relaxed and none let 32-bit programs use. Run by
// tests/escape/net_handoff_compat.sh inside cage with --net 127.0.0.1:ALLOWED; any connection at
// 127.0.0.1:FORBIDDEN (counted outside) is an escape, so is a host socket put in listen.
//   handoff_compat ALLOWED FORBIDDEN
// On a socket connected to ALLOWED (the host's, when cage handed it off): i386 connect (362) with
// AF_UNSPEC then to FORBIDDEN; the same through socketcall(SYS_CONNECT); i386 connect(AF_UNSPEC),
// bind (361) and listen (363). Prints "handoffs N" (sockets seen to be the host's) and "listened N".
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

enum { kSocketcall = 102, kBind = 361, kConnect = 362, kListen = 363, kSysConnect = 3 };

// A 32-bit system call from this 64-bit process: the kernel takes the i386 table and arch value;
// pointers are truncated to 32 bits, so every argument lives in a MAP_32BIT page.
static long int80(long nr, long a, long b, long c) {
  long ret;
  __asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
  return ret;
}
static uint64_t cookie(int s) {
  uint64_t c = 0;
  socklen_t l = sizeof c;
  getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, &c, &l);
  return c;
}
static struct sockaddr_in allowed;
static uint64_t own_cookie;
static int handoffs;
// A socket connected to the allowed destination; counted when it is the host's (handed off).
static int handed(void) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0 || connect(s, (struct sockaddr*)&allowed, sizeof allowed) != 0) {
    if (s >= 0) close(s);
    return -1;
  }
  if (cookie(s) != own_cookie) ++handoffs;
  return s;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  allowed = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(atoi(argv[1]))};
  allowed.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int own = socket(AF_INET, SOCK_DGRAM, 0);
  own_cookie = cookie(own);
  char* low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  if (low == MAP_FAILED) return 2;
  struct sockaddr_in* unspec = (struct sockaddr_in*)low;
  unspec->sin_family = AF_UNSPEC;
  struct sockaddr_in* forbidden = (struct sockaddr_in*)(low + 64);
  *forbidden = allowed;
  forbidden->sin_port = htons(atoi(argv[2]));
  struct sockaddr_in* any = (struct sockaddr_in*)(low + 128);
  any->sin_family = AF_INET;  // 0.0.0.0, a port the kernel picks
  uint32_t* args = (uint32_t*)(low + 256);
  const long n = sizeof(struct sockaddr_in);

  int s = handed();
  if (s >= 0) {
    long a = int80(kConnect, s, (long)unspec, n), b = int80(kConnect, s, (long)forbidden, n);
    printf("i386 connect: AF_UNSPEC %ld, forbidden %ld\n", a, b);
    close(s);
  }
  if ((s = handed()) >= 0) {
    args[0] = (uint32_t)s, args[1] = (uint32_t)(uintptr_t)unspec, args[2] = (uint32_t)n;
    long a = int80(kSocketcall, kSysConnect, (long)args, 0);
    args[1] = (uint32_t)(uintptr_t)forbidden;
    long b = int80(kSocketcall, kSysConnect, (long)args, 0);
    printf("socketcall connect: AF_UNSPEC %ld, forbidden %ld\n", a, b);
    close(s);
  }
  int listened = 0;
  if ((s = handed()) >= 0) {
    long a = int80(kConnect, s, (long)unspec, n), b = int80(kBind, s, (long)any, n);
    long c = int80(kListen, s, 1, 0);
    int acc = 0;
    socklen_t l = sizeof acc;
    if (getsockopt(s, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) == 0 && acc && cookie(s) != own_cookie) ++listened;
    printf("i386 AF_UNSPEC %ld, bind %ld, listen %ld\n", a, b, c);
    close(s);
  }
  printf("handoffs %d\nlistened %d\n", handoffs, listened);
  return 0;
}
