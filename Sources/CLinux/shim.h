#ifndef ENCLAB_CLINUX_SHIM_H
#define ENCLAB_CLINUX_SHIM_H
/* Linux calls that Swift's Glibc module does not import: renameat2 and gettid are declared only under _GNU_SOURCE. */
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

/* The calling thread's id (gettid(2)), as /proc/self/task/ names it. */
static inline int enclab_thread_id(void) {
    return (int)gettid();
}
#endif
