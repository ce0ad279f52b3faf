/*
 * sweep.h: a config expanded into a plan: its cases and variant instances.
 *
 * Cases: the cross product of the axes (the first axis varies slowest, as the
 * seed notebook's nested loops), filtered by the config's `where` constraints,
 * then, if the config asks for a sample, `count` of them drawn without
 * replacement by a generator seeded with the config's seed (same seed, same
 * cases, on every machine), kept in enumeration order.
 *
 * Variants: each spec's defines with several values are crossed (first define
 * slowest); instances whose `where` constraints use only defines and are false
 * are dropped here; constraints that need the case are checked per case at run
 * time (the row is then `skipped`).
 */
#ifndef HN_SWEEP_H
#define HN_SWEEP_H

#include "config.h"

/* Upper limits: the combinations of the axes enumerated before sampling; the
 * combinations of one variant's defines; the variant instances of a plan. (The
 * fuzzing build lowers the first two, so that one input cannot take minutes.) */
#ifndef HN_SWEEP_MAX_COMBINATIONS
#define HN_SWEEP_MAX_COMBINATIONS 20000000LL
#endif
#ifndef HN_SWEEP_MAX_DEFINE_COMBINATIONS
#define HN_SWEEP_MAX_DEFINE_COMBINATIONS 100000LL
#endif
#define HN_SWEEP_MAX_VARIANTS 100000

/* Loads a config (hn_config_load) and expands it: the variant instances, the
 * cases, and every case checked to be a problem the operator can pose. On
 * error -1 with a message naming the file, the JSON path and the problem. */
int hn_plan_load(const char *path, int64_t seed_override, hn_plan **out, hn_err *err);
/* Prints the plan's notice (hn_plan.notice), a line each, "harness: note: ..." to stderr. */
void hn_plan_print_notice(const hn_plan *p);
/* Same, from text. */
int hn_plan_parse(const char *text, const char *path, int64_t seed_override, hn_plan **out, hn_err *err);

int hn_sweep_enumerate(hn_plan *p, hn_err *err);
int hn_sweep_expand_variants(hn_plan *p, hn_err *err);

/* Evaluates a variant's where constraints for a case (params: the case's op
 * parameters). Returns 1 if all hold, 0 if one fails (its text in *failed), -1 on
 * an evaluation error. */
/* For a compile error: where one of v's define values is the name of an axis or
 * of an operator parameter ("WIDTH": "n") and the compiler's message names it,
 * a sentence saying a define cannot take a case's value and what to write
 * instead, in buf; else "". (A define may name something of the kernel's
 * source, so such a value is not refused: only explained when it fails.) */
const char *hn_define_value_hint(const hn_plan *p, const hn_variant *v, const char *message, char *buf, size_t size);

int hn_sweep_variant_applies(const hn_plan *p, const hn_variant *v, const hn_case *c,
                             const double *params, const char **failed, hn_err *err);

#endif
