/* For finding hangs where no debugger is installed (the GPU machine): preload it
 *   LD_PRELOAD=libstackdump.so python3 ...
 * and every thread's native backtrace goes to stderr, one thread after another:
 *   - on SIGUSR1 (e.g. `timeout -s USR1 ...`, or kill -USR1 PID), after which the process goes on;
 *   - when a deadline set with stackdump_arm(seconds) passes before stackdump_disarm(), after
 *     which the process exits with status 3. tests/python/conftest.py arms it per test
 *     (STOKER_HANG_DUMP_S). The deadline is kept by a thread of its own, so a hang that holds
 *     Python's GIL is caught too.
 * Frames of libraries without exported names come out as lib(+0xOFFSET); resolve_stack.py names
 * them from the library's symbol table. Not part of stoker: nothing links it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void dump_this_thread(int sig) {
  (void)sig;
  void* frames[64];
  int n = backtrace(frames, 64);
  char line[64];
  int len = snprintf(line, sizeof line, "--- thread %ld\n", (long)syscall(SYS_gettid));
  if (write(2, line, len) < 0) return;
  backtrace_symbols_fd(frames, n, 2);
}

static void dump_all_threads(int sig) {
  long me = syscall(SYS_gettid);
  DIR* d = opendir("/proc/self/task");
  struct dirent* e;
  while (d && (e = readdir(d))) {
    long tid = atol(e->d_name);
    if (tid <= 0 || tid == me) continue;
    syscall(SYS_tgkill, getpid(), tid, SIGUSR2);
    usleep(30000); /* one thread's frames at a time */
  }
  if (d) closedir(d);
  dump_this_thread(sig);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int armed = 0, started = 0;
static struct timespec deadline;

static void* watchdog(void* arg) {
  (void)arg;
  pthread_mutex_lock(&mu);
  for (;;) {
    while (!armed) pthread_cond_wait(&cv, &mu);
    if (pthread_cond_timedwait(&cv, &mu, &deadline) == 0 || !armed) continue;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (now.tv_sec < deadline.tv_sec ||
        (now.tv_sec == deadline.tv_sec && now.tv_nsec < deadline.tv_nsec))
      continue;
    pthread_mutex_unlock(&mu);
    static const char msg[] = "=== stackdump: deadline passed; every thread's stack ===\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(3);
    dump_all_threads(0);
    _exit(3);
  }
  return NULL;
}

void stackdump_arm(double seconds) {
  pthread_mutex_lock(&mu);
  if (!started) {
    pthread_t t;
    started = pthread_create(&t, NULL, watchdog, NULL) == 0;
    if (started) pthread_detach(t);
  }
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += (time_t)seconds;
  deadline.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
  if (deadline.tv_nsec >= 1000000000L) deadline.tv_sec++, deadline.tv_nsec -= 1000000000L;
  armed = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

void stackdump_disarm(void) {
  pthread_mutex_lock(&mu);
  armed = 0;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

__attribute__((constructor)) static void install(void) {
  struct sigaction a = {0};
  a.sa_flags = SA_RESTART;
  a.sa_handler = dump_all_threads;
  sigaction(SIGUSR1, &a, NULL);
  a.sa_handler = dump_this_thread;
  sigaction(SIGUSR2, &a, NULL);
}
