#ifndef ENCLAB_CLINUX_SHIM_H
#define ENCLAB_CLINUX_SHIM_H
/* Linux calls that Swift's Glibc module does not import: renameat2 and gettid are declared only under _GNU_SOURCE. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

/* rename(2) that never replaces: fails with EEXIST when `to` exists (renameat2(2), RENAME_NOREPLACE, Linux 3.15).
   Returns 0, or -1 with errno set. */
static inline int enclab_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

/* Swaps two paths atomically (renameat2(2), RENAME_EXCHANGE, Linux 3.15): both must exist.
   Returns 0, or -1 with errno set. */
static inline int enclab_rename_exchange(const char *a, const char *b) {
    return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}

/* Lowers the calling thread's priority: its nice value raised by `by` (at most to 19), with getpriority(2) and
   setpriority(2) given the thread's own id (on Linux a nice value belongs to a thread, not the whole process).
   Relative, so a process started with `nice -n 10` keeps its verify thread below its other threads.
   Returns 0, or -1 with errno set. */
static inline int enclab_lower_thread_priority(int by) {
    id_t tid = (id_t)gettid();
    errno = 0;
    int now = getpriority(PRIO_PROCESS, tid);
    if (now == -1 && errno != 0) return -1;
    int want = now + by > 19 ? 19 : now + by;
    return setpriority(PRIO_PROCESS, tid, want);
}

/* The calling thread's id (gettid(2)), as /proc/self/task/ names it. */
static inline int enclab_thread_id(void) {
    return (int)gettid();
}
#endif
