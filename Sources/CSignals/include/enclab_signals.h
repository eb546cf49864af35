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

/* Writes all `count` bytes at `bytes` to `fd` (a pipe to a child), again after EINTR and after a short write, with
   SIGPIPE blocked in the calling thread only: a reader that has gone makes the write fail with EPIPE instead of
   ending the lab (SIGPIPE's default action), and the lab's other writes (its stdout to `head`) keep that default.
   The SIGPIPE this write raised is taken (sigtimedwait) before the thread's mask is restored, as libpq does; one
   that was pending before is left pending. Returns 0, or the errno of the write that failed. */
int enclab_write_all(int fd, const void *bytes, size_t count);
#endif
