// Helper of interp_hung_mount.sh. hung DIR: mounts at DIR a FUSE file system whose server never
// answers (not even the kernel's INIT), so any lookup beneath DIR waits, as on a hung network mount
// (the wait is killable). Prints "mounted" once it is, then waits until killed; its death aborts the
// connection (every waiting call fails then).
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    perror("/dev/fuse");
    return 77;
  }
  char opts[128];
  snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
  if (mount("cage-hung", argv[1], "fuse.cage-hung", MS_NOSUID | MS_NODEV, opts) != 0) {
    perror("mount");
    return 77;
  }
  printf("mounted\n");
  fflush(stdout);
  for (;;) pause();
}
