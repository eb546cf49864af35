#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "enclab_signals.h"

static int pipe_fds[2] = {-1, -1};
static volatile sig_atomic_t first_signal = 0;
static volatile sig_atomic_t installed = 0;

/* Only async-signal-safe work (signal-safety(7)): a store to a sig_atomic_t and write(2), errno kept. */
static void on_signal(int signo) {
    int saved = errno;
    if (first_signal == 0) first_signal = signo;
    unsigned char byte = (unsigned char)signo;
    /* Non-blocking: with the pipe full (thousands of signals unread) the byte is dropped, never waited for. */
    ssize_t written = write(pipe_fds[1], &byte, 1);
    (void)written;
    errno = saved;
}

int enclab_signals_install(void) {
    if (installed) return 0;
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
    if (fcntl(pipe_fds[1], F_SETFL, O_NONBLOCK) != 0) return -1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    /* Interrupted reads and writes restart, as they would without a handler. */
    action.sa_flags = SA_RESTART;
    if (sigaction(SIGINT, &action, NULL) != 0 || sigaction(SIGTERM, &action, NULL) != 0) return -1;
    /* A parent that spawned the process from a thread blocking them (a libdispatch worker blocks every signal) leaves
       them blocked across exec(2): unblocked here, in the calling thread (the main thread, which every later thread
       copies its mask from), so they reach the handler rather than waiting unseen. */
    sigset_t ours;
    sigemptyset(&ours);
    sigaddset(&ours, SIGINT);
    sigaddset(&ours, SIGTERM);
    if (pthread_sigmask(SIG_UNBLOCK, &ours, NULL) != 0) return -1;
    installed = 1;
    return 0;
}

int enclab_signals_fd(void) { return pipe_fds[0]; }

int enclab_signals_first(void) { return first_signal; }
