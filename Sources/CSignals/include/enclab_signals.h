#ifndef ENCLAB_SIGNALS_H
#define ENCLAB_SIGNALS_H
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
#endif
