/*
 * tuned.h: `--tuned BEST.json` (harness run, list, check, profile): a tune's
 * result as a variant of a sweep.
 *
 * The best.json names the config it tuned and the variant; that variant (its
 * file, kernel, launch geometry and arguments, as the tuned config gives them,
 * its other defines at the tuned values) is added to the sweep as
 * `<variant>@tuned` (`@tuned2`, ... where the name is taken), one instance per
 * distinct winning configuration. Each case of the sweep runs exactly one of
 * them: the configuration tuned for a case with the same operator parameters,
 * else that of the nearest tuned case (choices such as a layout or a transpose
 * equal first, then the smallest sum over the numeric parameters of
 * |asinh(a) - asinh(b)|, a log scale that takes 0 and negative values), or the
 * one configuration of a tune across cases. hn_tuned_group says which instance
 * runs which case and why (the results' "tuned" column).
 *
 * Errors (exit 2 for the commands) name the best.json and what is wrong: not
 * JSON or not a tune's output, no configuration, a config or kernel file that
 * is not there, another operator, a variant the tuned config no longer has, or
 * a tuned variant the sweep cannot take (a define named as one of its axes or
 * parameters, an expression naming an axis it does not have).
 */
#ifndef HN_TUNED_H
#define HN_TUNED_H

#include "config.h"

/* hn_plan_load (sweep.h) with the variants of the n_files best.json files
 * added; with none, exactly hn_plan_load. */
int hn_plan_load_tuned(const char *path, int64_t seed_override, const char *const *files, int n_files,
                       hn_plan **out, hn_err *err);

/* The --tuned group variant v belongs to, or NULL. */
const hn_tuned_group *hn_tuned_group_of(const hn_plan *p, int v);

/* Whether variant v has a row in case c: every variant does, but a --tuned
 * instance only in the cases it runs. */
int hn_tuned_runs(const hn_plan *p, int v, int64_t c);

/* Variant v's label, with its tuned configuration where it is a --tuned
 * instance ("unroll@tuned[BLOCK=64,ITEMS=2]"), for lists of instances. */
void hn_tuned_label(const hn_plan *p, int v, char *out, size_t size);

/* The selected variants as the results show them: a --tuned group counts once
 * (selected NULL: all). */
int hn_tuned_distinct(const hn_plan *p, const unsigned char *selected);

#endif
