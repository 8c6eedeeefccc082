// Helper of read_head_swap.sh.
//   swap A B SECONDS: exchanges the names A and B (renameat2 RENAME_EXCHANGE) as fast as it can.
//   feed FIFO LINE SECONDS: holds FIFO open (read and write, so no open waits) and keeps LINE in it.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE 2
#endif

int main(int argc, char** argv) {
  if (argc == 5 && !strcmp(argv[1], "swap")) {
    time_t end = time(NULL) + atoi(argv[4]);
    while (time(NULL) < end)
      for (int i = 0; i < 1000; i++)
        if (syscall(SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD, argv[3], RENAME_EXCHANGE) != 0) {
          perror("renameat2");
          return 1;
        }
    return 0;
  }
  if (argc == 5 && !strcmp(argv[1], "feed")) {
    int fd = open(argv[2], O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      perror(argv[2]);
      return 1;
    }
    time_t end = time(NULL) + atoi(argv[4]);
    size_t n = strlen(argv[3]);
    while (time(NULL) < end) {
      while (write(fd, argv[3], n) == (ssize_t)n) {}
      usleep(2000);
    }
    return 0;
  }
  return 2;
}
