/*
 * interrupt.h: Ctrl-C and SIGTERM for the long commands (run, tune, train).
 *
 * The handlers only count: the command looks at the counts where it can stop
 * cleanly (between rows, configurations, training steps) and decides. The
 * convention the three share:
 *   - the first SIGINT: finish what is in progress, keep everything done, print
 *     the summary marked as interrupted and how to resume, exit 130;
 *   - a second SIGINT: stop at once (hn_interrupt_now); SIGTERM too, exit 143;
 *   - a command that runs kernels in its own process (train), where "at once"
 *     cannot abandon a launch cleanly, installs HN_INTERRUPT_IN_PROCESS: SIGTERM
 *     then stops as the first SIGINT does, and a second signal of either kind
 *     ends the process with the signal's default action.
 * Worker processes ignore SIGINT (exec/worker.c): the parent decides, and kills
 * them when it stops at once.
 */
#ifndef HN_INTERRUPT_H
#define HN_INTERRUPT_H

#include <signal.h>

/* The handlers that were there before, put back by hn_interrupt_restore. */
typedef struct {
    struct sigaction old_int, old_term;
    int installed;
} hn_interrupt_saved;

/* How a command takes interrupts. */
typedef enum {
    /* Its kernels run in worker processes (run, tune): a second SIGINT or a
     * SIGTERM asks to stop at once (the command kills the workers). Blocking
     * calls (poll, waitpid) return EINTR at a signal, so a loop waiting on the
     * workers notices it at once. */
    HN_INTERRUPT_WORKERS,
    /* Its kernels run in this process, on the emulator's threads too (train):
     * interrupted calls restart (SA_RESTART), so a launch in progress is not
     * failed by an EINTR, and the second signal ends the process. */
    HN_INTERRUPT_IN_PROCESS
} hn_interrupt_mode;

/* Installs the counting handlers for SIGINT and SIGTERM and clears the counts. */
void hn_interrupt_install(hn_interrupt_saved *saved, hn_interrupt_mode mode);

/* Puts the earlier handlers back (NULL-safe, and a no-op when not installed). */
void hn_interrupt_restore(hn_interrupt_saved *saved);

/* SIGINTs received since hn_interrupt_install. */
int hn_interrupt_count(void);

/* Whether SIGTERM was received. */
int hn_interrupt_term(void);

/* Any interrupt: stop after what is in progress. */
int hn_interrupted(void);

/* Stop at once: a second SIGINT, or SIGTERM (never in HN_INTERRUPT_IN_PROCESS). */
int hn_interrupt_now(void);

/* The exit code of an interrupted command: 143 after SIGTERM, 130 after
 * SIGINT, 0 when neither came. */
int hn_interrupt_exit_code(void);

#endif
