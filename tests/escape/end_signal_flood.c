// Helper of end_signal_flood.sh.
//   end_signal_flood hide-landlock CMD...: runs CMD with landlock_create_ruleset answering ENOSYS, as
//     on a kernel without Landlock (or, for what matters here, without ABI 6's signal scoping), where
//     the namespaces mechanism still runs (its minimum is 5.12).
//   end_signal_flood flood N: inside the sandbox, N children send SIGPWR (cage's kEndRunSignal) to
//     pid 1 in a loop; all ignore SIGTERM and stay until killed.
//   end_signal_flood idle N: the same processes without the signals (the twin).
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NR_LANDLOCK_CREATE_RULESET 444  // the same number on every architecture

int main(int argc, char** argv) {
  if (argc >= 3 && !strcmp(argv[1], "hide-landlock")) {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_LANDLOCK_CREATE_RULESET, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog p = {sizeof f / sizeof f[0], f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p)) {
      perror("seccomp");
      return 1;
    }
    execv(argv[2], argv + 2);
    perror("execv");
    return 1;
  }
  if (argc < 3) return 2;
  const int flood = !strcmp(argv[1], "flood");
  const int n = atoi(argv[2]);
  signal(SIGTERM, SIG_IGN);
  for (int i = 0; i < n; i++)
    if (fork() == 0)
      for (;;)
        if (flood) kill(1, SIGPWR);
        else pause();
  for (;;) pause();
}
