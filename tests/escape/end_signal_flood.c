// Helper of end_signal_flood.sh.
//   end_signal_flood hide-landlock CMD...: runs CMD with landlock_create_ruleset answering ENOSYS, as
//     on a kernel without Landlock (or, for what matters here, without ABI 6's signal scoping), where
//     the namespaces mechanism still runs (its minimum is 5.12).
//   end_signal_flood flood N: inside the sandbox, N children send SIGPWR (cage's kEndRunSignal) to
//     pid 1 in a loop; all ignore SIGTERM and stay until killed. pid 1 is first put on SCHED_IDLE
//     (the same uid: allowed), so that it seldom runs while the senders do and one of their SIGPWRs
//     is nearly always pending.
//   end_signal_flood idle N: the same processes without the signals (the twin).
//   end_signal_flood forge: forges the supervisor's signal itself. pid 1's RLIMIT_SIGPENDING is set
//     to 0 (the same uid: prlimit allows it), then SIGPWR is queued to pid 1 with rt_sigqueueinfo
//     (SI_QUEUE): the kernel cannot queue the info, sets the legacy signal pending without it, and
//     pid 1's sigwaitinfo reads si_code SI_USER, si_pid 0 (collect_signal), the supervisor's mark.
//     Then exits 7 after 2 s, if still alive.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
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
  if (argc == 2 && !strcmp(argv[1], "forge")) {
    struct rlimit none = {0, 0};
    if (prlimit(1, RLIMIT_SIGPENDING, &none, NULL) != 0) perror("prlimit");
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGPWR;
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = getuid();
    if (syscall(SYS_rt_sigqueueinfo, 1, SIGPWR, &si) != 0) perror("rt_sigqueueinfo");
    sleep(2);
    return 7;
  }
  if (argc < 3) return 2;
  const int flood = !strcmp(argv[1], "flood");
  const int n = atoi(argv[2]);
  struct sched_param idle = {0};
  if (flood && sched_setscheduler(1, SCHED_IDLE, &idle) != 0) perror("sched_setscheduler");
  signal(SIGTERM, SIG_IGN);
  for (int i = 0; i < n; i++)
    if (fork() == 0)
      for (;;)
        if (flood) kill(1, SIGPWR);
        else pause();
  for (;;) pause();
}
