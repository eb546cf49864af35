#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
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

int enclab_write_within(int fd, const void *bytes, size_t count, int timeout_ms, size_t *done) {
    sigset_t pipe_only, old, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    *done = 0;
    int masked = pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    if (masked != 0) return masked;
    int was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    const unsigned char *next = bytes;
    size_t left = count;
    int failure = 0;
    while (left > 0) {
        ssize_t written = write(fd, next, left);
        if (written < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                /* Full: wait for room, at most timeout_ms; no room by then hands control back to the caller. */
                struct pollfd room = {fd, POLLOUT, 0};
                int ready = poll(&room, 1, timeout_ms);
                if (ready < 0 && errno == EINTR) continue;
                if (ready < 0) { failure = errno; break; }
                if (ready == 0) { failure = EAGAIN; break; }
                /* Room, or POLLERR (the reader has gone): the next write says which. */
                continue;
            }
            failure = errno;
            break;
        }
        /* A pipe never takes 0 of a nonzero count; were it to, failing beats spinning. */
        if (written == 0) { failure = EIO; break; }
        next += written;
        left -= (size_t)written;
    }
    *done = count - left;
    if (failure == EPIPE && !was_pending) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR) {}
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return failure;
}

int enclab_child_ended(int pid, int *signaled, int *status) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    /* WNOWAIT: the child stays a zombie for Foundation's Process to reap and report as it would. */
    while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
        if (errno != EINTR) return -1;
    }
    if (info.si_pid == 0) return 0;
    *signaled = info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED;
    *status = info.si_status;
    return 1;
}
