#ifndef ENCLAB_SIGNALS_H
#define ENCLAB_SIGNALS_H
#include <stddef.h>
/* SIGINT and SIGTERM caught by one async-signal-safe handler (sigaction(2)) that notes the first signal and writes
   each signal's number as one byte to a pipe, which the lab's Swift code reads on a thread of its own
   (EncoderLab's Interruption). A C handler because a Swift function is not async-signal-safe, and sigaction
   because it takes effect at once: libdispatch's signal sources install their handler later, on their manager
   thread, so a signal in between was ignored (SIG_IGN) or ended the process (SIG_DFL). */

/* Installs the handler for SIGINT and SIGTERM and unblocks them in the calling thread (a mask inherited from the
   parent could hold them), once (later calls return 0 and do nothing).
   Returns 0, or -1 with errno set when the pipe cannot be made (the handlers are then not installed). */
int enclab_signals_install(void);

/* The read end of the pipe (close-on-exec): one byte per signal, its number. -1 before enclab_signals_install. */
int enclab_signals_fd(void);

/* The first signal that arrived since enclab_signals_install (SIGINT or SIGTERM), 0 before any. */
int enclab_signals_first(void);

/* Writes the `count` bytes at `bytes` to `fd` (the non-blocking write end of a pipe to a child), again after EINTR and
   after a short write, waiting for room with poll(2) at most `timeout_ms` each time the pipe is full, so the caller
   gets control back to look for an interruption or a child that has gone while a grandchild holds the pipe open.
   SIGPIPE is blocked in the calling thread only: a reader that has gone makes the write fail with EPIPE instead of
   ending the lab (SIGPIPE's default action), and the lab's other writes (its stdout to `head`) keep that default.
   The SIGPIPE this write raised is taken (sigtimedwait) before the thread's mask is restored, as libpq does; one
   that was pending before is left pending. Returns 0 when all was written, EAGAIN when the pipe stayed full for
   `timeout_ms`, or the errno of the write that failed; `*done` is the number of bytes written either way. */
int enclab_write_within(int fd, const void *bytes, size_t count, int timeout_ms, size_t *done);
/* Whether child `pid` has ended, without reaping it (waitid(2) with WNOWAIT, so Foundation's Process still reaps
   and reports it): Foundation's Process was seen not to report the exit of a wrapper script whose own child went on
   running with the descriptors it inherited. Returns 1 with `*signaled` (whether a signal ended it) and `*status` (its exit status
   or the signal's number) set, 0 while it runs, -1 with errno set (ECHILD once it has been reaped). */
int enclab_child_ended(int pid, int *signaled, int *status);
#endif
