/*
 * worker.h: the process that runs the kernels of `harness run`, and the
 * parent's side of it.
 *
 * The parent forks a worker, which creates the backend and runs hn_runner_run;
 * the worker reports over a pipe (frames: type, length, payload) and shares an
 * hn_run_shared block with the parent. The parent never touches the device, so a
 * kernel that crashes the process, leaves a sticky CUDA error, never returns, or
 * gets the worker OOM-killed costs one worker, never the results file: the
 * parent writes the row in progress as `fault` or `timeout` and starts another
 * worker for the rest.
 *
 * Rules for the parent: no threads and no CUDA driver use before hn_worker_start
 * (fork keeps only the calling thread, and a CUDA context does not survive
 * fork); flush stdio first (the worker inherits unflushed buffers).
 *
 * The worker ignores SIGINT (the parent decides what an interrupt means, through
 * hn_run_shared.stop) and dies with its parent. It leads a process group of its
 * own, which its compilers join, so killing it kills them too.
 */
#ifndef HN_WORKER_H
#define HN_WORKER_H

#include "runner.h"

typedef enum { HN_MSG_DEVICE = 1, HN_MSG_CASE, HN_MSG_ROW_BEGIN, HN_MSG_ROW, HN_MSG_STATS } hn_msg_type;

/* One message from the worker, decoded. Strings are owned by the message. */
typedef struct {
    int type;
    hn_run_device device;   /* DEVICE */
    char **keys;            /* DEVICE: one compile key per variant */
    int n_keys;
    int64_t case_id;        /* CASE, ROW_BEGIN, ROW */
    int helping;            /* CASE: the lane helps with a case another lane set up */
    int slot;               /* ROW_BEGIN, ROW */
    char *label;            /* CASE */
    hn_run_row row;         /* ROW (row.line owned) */
    hn_run_stats stats;     /* STATS */
} hn_msg;

void hn_msg_free(hn_msg *m);

typedef struct hn_worker hn_worker;

/* Forks a worker as lane `lane` of sh (its device and emulator threads are
 * sh->lane[lane]'s) for the rows of the selected variants in the cases of the
 * run (sh->in_run) that no other lane takes first. Returns -1 with err when the
 * process cannot be started. */
int hn_worker_start(const hn_cli *cli, const hn_plan *p, const unsigned char *selected, hn_run_shared *sh, int lane,
                    hn_worker **out, hn_err *err);

/* The same for serve mode (harness tune): the worker evaluates the requests
 * sent with hn_worker_request (after answering its DEVICE message). */
int hn_worker_start_serve(const hn_cli *cli, const hn_plan *p, hn_run_shared *sh, int lane, hn_worker **out,
                          hn_err *err);
int hn_worker_request(hn_worker *w, const hn_run_request *req);

/* Waits up to `timeout` seconds for the next message: 1 with it in *m, 0 when
 * none came (or a signal interrupted the wait), -1 when the worker is gone. */
int hn_worker_next(hn_worker *w, double timeout, hn_msg *m);

/* Waits up to `timeout` seconds until one of the n workers (NULL entries are
 * skipped) has a message or has gone: 1 then (hn_worker_next with no wait
 * takes it), 0 when the time passed. */
int hn_worker_wait_any(hn_worker *const *ws, int n, double timeout);

/* Answers the DEVICE message: go (after the parent has marked in the shared
 * block what is done) or stop. */
int hn_worker_go(hn_worker *w, int go);

/* Kills the worker and its process group (SIGKILL); hn_worker_next then
 * returns -1. */
void hn_worker_kill(hn_worker *w);

/* Reaps the worker once hn_worker_next returned -1: *code gets its exit code
 * (-1 if it did not exit) and *sig the signal that ended it (0 if none). */
void hn_worker_wait(hn_worker *w, int *code, int *sig);

/* Kills (if still running), reaps and frees; NULL-safe. */
void hn_worker_destroy(hn_worker *w);

#endif
