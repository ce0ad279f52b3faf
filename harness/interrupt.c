/*
 * interrupt.c: the counting SIGINT / SIGTERM handlers of interrupt.h.
 */
#define _GNU_SOURCE
#include "interrupt.h"

#include <string.h>

static volatile sig_atomic_t n_int, got_term, die_second;

static void on_signal(int sig) {
    if (die_second && (n_int || got_term)) {
        /* the second: the default action, once this handler returns (the
         * signal is blocked until then) */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    if (sig == SIGINT) n_int++;
    else got_term = 1;
}

void hn_interrupt_install(hn_interrupt_saved *saved, hn_interrupt_mode mode) {
    n_int = got_term = 0;
    die_second = mode == HN_INTERRUPT_IN_PROCESS;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = die_second ? SA_RESTART : 0;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &saved->old_int);
    sigaction(SIGTERM, &sa, &saved->old_term);
    saved->installed = 1;
}

void hn_interrupt_restore(hn_interrupt_saved *saved) {
    if (!saved || !saved->installed) return;
    sigaction(SIGINT, &saved->old_int, NULL);
    sigaction(SIGTERM, &saved->old_term, NULL);
    saved->installed = 0;
}

int hn_interrupt_count(void) {
    return n_int;
}

int hn_interrupt_term(void) {
    return got_term;
}

int hn_interrupted(void) {
    return n_int || got_term;
}

int hn_interrupt_now(void) {
    return !die_second && (n_int >= 2 || got_term);
}

int hn_interrupt_exit_code(void) {
    return got_term ? 143 : n_int ? 130 : 0;
}
