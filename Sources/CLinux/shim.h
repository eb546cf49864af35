#ifndef ENCLAB_CLINUX_SHIM_H
#define ENCLAB_CLINUX_SHIM_H
/* Linux calls that Swift's Glibc module does not import: renameat2, gettid, pipe2 and F_SETPIPE_SZ are declared only
   under _GNU_SOURCE. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <errno.h>
#include <unistd.h>
/* Not <sys/resource.h>: under _GNU_SOURCE it defines enum __rusage_who (and the __priority_which_t typedef)
   otherwise than Swift's Glibc module does, and a Swift file importing both fails to compile ("'__rusage_who' has
   different definitions in different modules") on a fresh build's module cache. getpriority(2)/setpriority(2)
   are called from Swift through Glibc instead (SerialWorker.lowerCurrentThreadPriority(by:)). */

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

/* A pipe for a child's standard input (pipe2(2), O_CLOEXEC on both ends, so no other child inherits either end and
   the reader sees the end of its input when the lab closes its end), its capacity raised to `size` bytes where the
   system allows (F_SETPIPE_SZ, Linux 2.6.35; up to /proc/sys/fs/pipe-max-size, else the default 64 KiB is kept).
   Returns 0 with fds[0] the read end and fds[1] the write end, or -1 with errno set. */
static inline int enclab_pipe_cloexec(int fds[2], int size) {
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    (void)fcntl(fds[1], F_SETPIPE_SZ, size);
    return 0;
}

/* The calling thread's id (gettid(2)), as /proc/self/task/ names it. */
static inline int enclab_thread_id(void) {
    return (int)gettid();
}
#endif
