/*
 * export.h: what `harness tune` writes for other programs.
 *
 * A C header (<out>.h) a user includes to build a kernel with its tuned
 * configuration: #define blocks selected by the GPU (HN_TARGET_<DEVICE NAME>,
 * like Kernel Tuner's create_device_targets) and, for a per-case tune, by the
 * problem size (the case's axes given as macros HN_CASE_<AXIS>). One tune gives
 * one device; --with-best adds the best.json of tunes on other devices.
 *
 * T4 files (<out>.t4/case<N>.json): every evaluation of a case in the
 * auto-tuning community's results format (schema 1.0.0, as Kernel Tuner and
 * KTT write it), so existing analysis tools read our tunes.
 */
#ifndef HN_EXPORT_H
#define HN_EXPORT_H

#include <cjson/cJSON.h>

#include "journal.h"

/* Writes the header from best.json documents (the first is this tune's; all of
 * the same variant). guard_name: the variant's name. */
int hn_tune_write_header(const char *path, const char *variant, cJSON *const *docs, int n_docs, hn_err *err);

/* "HN_TARGET_NVIDIA_H200" for "NVIDIA H200" into out. */
void hn_tune_target_macro(const char *device, char *out, size_t size);

/* Writes dir/case<N>.json for each case: the journal's search evaluations of
 * variant on (device, backend) whose case values are case_values[i]. Returns the
 * number of files written, or -1 with err. */
int hn_tune_write_t4(const char *dir, const hn_journal *j, const char *variant, const char *device,
                     const char *backend, const long long *case_ids, char *const *case_values, int n_cases,
                     hn_err *err);

#endif
