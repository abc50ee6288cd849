/* The first process of every sandboxed run (bubblewrap's --as-pid-1), root in the run's own PID
 * namespace: sets the run's limits, starts the command, then kills and reaps every other process
 * of the namespace, also when the command's time is up, so that the CPU time of every process
 * reaches the grader through bwrap's exit (bwrap's own pid 1 leaves the reaping to the kernel,
 * which does not count it). The limits and why: exercises/INSTRUCTORS.md, "The sandbox".
 *
 *   sandbox_init STATUS_FD SECONDS DATA_MIB -- COMMAND...   (DATA_MIB 0: no RLIMIT_DATA)
 *
 * Writes "exit N", "signal N" or "timeout" to STATUS_FD, which the command never sees. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t timed_out = 0;

static void on_alarm(int sig) {
  (void)sig;
  timed_out = 1;
}

static void limit(int what, rlim_t value) {
  struct rlimit r = {value, value};
  setrlimit(what, &r);
}

int main(int argc, char** argv) {
  if (argc < 6 || strcmp(argv[4], "--") != 0) {
    fprintf(stderr, "usage: sandbox_init STATUS_FD SECONDS DATA_MIB -- COMMAND...\n");
    return 125;
  }
  const int status_fd = atoi(argv[1]);
  const double seconds = atof(argv[2]);
  const rlim_t data_mib = (rlim_t)strtoull(argv[3], NULL, 10);
  const pid_t child = fork();
  if (child < 0) return 125;
  if (child == 0) {
    close(status_fd);
    limit(RLIMIT_CORE, 0);
    limit(RLIMIT_NPROC, 1024);               /* counted per user: no fork bomb */
    limit(RLIMIT_FSIZE, (rlim_t)2 << 30);     /* no file past 2 GiB */
    if (data_mib) limit(RLIMIT_DATA, data_mib << 20); /* no process takes the host's memory */
    FILE* oom = fopen("/proc/self/oom_score_adj", "w");  /* out of memory: this run goes first */
    if (oom) {
      fputs("1000", oom);
      fclose(oom);
    }
    execvp(argv[5], argv + 5);
    fprintf(stderr, "sandbox: cannot run %s: %s\n", argv[5], strerror(errno));
    _exit(127);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: the alarm interrupts wait() */
  sigaction(SIGALRM, &sa, NULL);
  const time_t whole = (time_t)seconds;
  const struct itimerval when = {{0, 0}, {whole, (suseconds_t)((seconds - whole) * 1e6)}};
  setitimer(ITIMER_REAL, &when, NULL);
  int status = 0;
  while (!timed_out) {
    int st;
    const pid_t done = wait(&st);
    if (done == child) {
      status = st;
      break;
    }
    if (done < 0 && errno != EINTR) break;
  }
  setitimer(ITIMER_REAL, &(struct itimerval){{0, 0}, {0, 0}}, NULL);
  kill(-1, SIGKILL); /* pid 1 of the namespace: every other process in it */
  while (wait(NULL) > 0 || errno == EINTR) {
  }
  char line[32];
  int n;
  if (timed_out) {
    n = snprintf(line, sizeof line, "timeout 0\n");
  } else if (WIFSIGNALED(status)) {
    n = snprintf(line, sizeof line, "signal %d\n", WTERMSIG(status));
  } else {
    n = snprintf(line, sizeof line, "exit %d\n", WEXITSTATUS(status));
  }
  if (write(status_fd, line, (size_t)n) != n) return 125;
  return timed_out ? 124 : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}
