/*
 * journal.h: every evaluation of a tuning, one JSON object per line, appended
 * and flushed as soon as it finishes, so a tuning killed at any point (even
 * kill -9) resumes without repeating one.
 *
 * An entry is keyed by content, never by names alone: the compile key (a hash
 * of the kernel's source tree and headers, its defines including the
 * configuration, the compile options, the architecture and the compiler), the
 * device and backend, the case's parameter values, and the sampling phase
 * ("search" or "final"). An edited kernel changes the compile key of exactly the
 * configurations whose source changed, so only their entries go stale.
 *
 * A line:
 *   {"key":"...","variant":"conv2d_igemm","config":"BM=64,BN=32,...","case":3,
 *    "case_values":"in_ch=3,out_ch=8,...","label":"...","compile_key":"...",
 *    "device":"NVIDIA H200","backend":"cuda","phase":"search","status":"ok",
 *    "time_ms":0.123,"noise":0.004,"compile_s":0.8,"reason":"",
 *    "timestamp":"2026-11-30T16:00:00Z"}
 *
 * Replay (harness tune --replay) looks entries up by (variant, config, case
 * values) only, so a journal recorded on one machine drives strategies anywhere.
 */
#ifndef HN_JOURNAL_H
#define HN_JOURNAL_H

#include <stdio.h>

#include "util.h"

typedef struct {
    char *key, *variant, *config, *case_values, *label, *compile_key, *device, *backend, *phase, *status, *reason;
    char *timestamp;   /* when it finished, UTC, ISO 8601 ("" in older journals) */
    char *row;         /* its row of <out>.csv, harness run's columns ("" in older journals) */
    long long case_id;
    double time_ms;    /* NAN when the evaluation did not run correctly */
    double noise;
    double compile_s;  /* the compile's wall time (0 from the cache); NAN unknown */
} hn_journal_entry;

typedef struct hn_journal hn_journal;

/* Opens path for appending, loading what it holds (a missing file is an empty
 * journal; a line that is not a complete entry, such as the last one of a
 * killed run, is skipped and counted). path NULL: in memory only. */
int hn_journal_open(const char *path, hn_journal **out, hn_err *err);
/* Loads path without opening it for writing (--replay). */
int hn_journal_load(const char *path, hn_journal **out, hn_err *err);
void hn_journal_close(hn_journal *j);
/* Lines skipped while loading. */
int hn_journal_skipped(const hn_journal *j);
int hn_journal_count(const hn_journal *j);
const hn_journal_entry *hn_journal_at(const hn_journal *j, int i);

/* The entry with this key, or NULL. */
const hn_journal_entry *hn_journal_find(const hn_journal *j, const char *key);
/* For replay: the entry of (variant, config, case_values, phase), or NULL. */
const hn_journal_entry *hn_journal_find_config(const hn_journal *j, const char *variant, const char *config,
                                               const char *case_values, const char *phase);

/* Whether entry e (one of j's) was loaded from the file, not appended since. */
int hn_journal_from_file(const hn_journal *j, const hn_journal_entry *e);

/* Whether e records the end of the worker process rather than a verdict on
 * its configuration: a failure whose reason is the one harness tune writes
 * when a worker ended without reporting the evaluation ("the worker process
 * exited with code 3": the restart after another configuration's fault, which
 * older versions blamed on the next configuration; or "died of" a signal that
 * stops a process from outside: SIGKILL, SIGTERM, SIGPIPE, SIGINT, SIGHUP, ...).
 * A worker that crashed while the configuration ran (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGABRT, SIGTRAP, SIGSYS) and every status a worker reported (ok,
 * mismatch, fault, compile, timeout, ...), the watchdog's time-outs included,
 * are verdicts. A resumed tune measures such an entry again (docs/tuning.md). */
int hn_journal_worker_ended(const hn_journal_entry *e);

/* Marks entry e (one of j's) as written to this tune's CSV; returns whether it
 * already was. */
int hn_journal_mark_written(hn_journal *j, const hn_journal_entry *e);

/* Appends e (and keeps it for lookups); -1 with err when the file cannot be
 * written. */
int hn_journal_append(hn_journal *j, const hn_journal_entry *e, hn_err *err);

/* The key of an evaluation (32 hex digits into key). */
void hn_journal_key(const char *compile_key, const char *device, const char *backend, const char *case_values,
                    const char *phase, char key[33]);

#endif
