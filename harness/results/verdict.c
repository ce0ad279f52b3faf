/* verdict.c: the summary and verdict of a run (see verdict.h). */
#define _GNU_SOURCE
#include "verdict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "run.h"
#include "sweep.h"
#include "tuned.h"

int hn_verdict_within_noise(double ms_a, double noise_a, double ms_b, double noise_b) {
    if (!(ms_a > 0) || !isfinite(ms_b)) return 0;
    double spread = fmax(isfinite(noise_a) ? noise_a : 0, isfinite(noise_b) ? noise_b : 0);
    if (!isfinite(noise_a) && !isfinite(noise_b)) return 0;
    return (ms_b - ms_a) / ms_a < spread;
}

static double geomean(const double *x, int64_t n, int64_t stride) {
    double s = 0;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = x[i * stride];
        if (v > 0 && isfinite(v)) s += log(v), k++;
    }
    return k ? exp(s / (double)k) : NAN;
}

/* The fastest and second fastest correct variant of case c (-1 if none). */
static void best_two(const hn_verdict_in *in, int64_t c, int *best, int *second) {
    int nv = in->plan->n_variants;
    const double *t = &in->median_ms[c * in->n_slots];
    *best = *second = -1;
    for (int v = 0; v < nv; v++) {
        if (!in->selected[v] || !isfinite(t[v]) || in->status[c * in->n_slots + v] != HN_ST_OK) continue;
        if (*best < 0 || t[v] < t[*best]) *second = *best, *best = v;
        else if (*second < 0 || t[v] < t[*second]) *second = v;
    }
}

static void case_label(const hn_plan *p, int64_t c, char *out, size_t size) {
    hn_workload w;
    hn_err err;
    out[0] = '\0';
    if (hn_workload_shape(&w, p, &p->cases[c], &err) == 0) snprintf(out, size, "%s", w.label);
}

void hn_verdict_print(const hn_verdict_in *in, FILE *f) {
    const hn_plan *p = in->plan;
    int nv = p->n_variants;
    int *wins = xcalloc((size_t)nv, sizeof *wins);
    double *times = xmalloc((size_t)(in->n_cases ? in->n_cases : 1) * (size_t)nv * sizeof *times);
    for (int64_t c = 0; c < in->n_cases; c++) {
        int best, second;
        best_two(in, c, &best, &second);
        if (best >= 0) wins[best]++;
        for (int v = 0; v < nv; v++) {
            int ok = in->status[c * in->n_slots + v] == HN_ST_OK;
            times[c * nv + v] = ok ? in->median_ms[c * in->n_slots + v] : NAN;
        }
    }
    int sanitized = 0; /* rows the sanitizer judged: a column of their own */
    for (int64_t i = 0; i < in->n_cases * in->n_slots; i++)
        sanitized |= in->status[i] >= HN_ST_RACE && in->status[i] < HN_ST_COUNT;
    fprintf(f, "\n%-48s %5s %8s %7s %6s %5s %7s %7s", "variant", "ok", "mismatch", "compile", "launch", "fault",
            "timeout", "skipped");
    if (sanitized) fprintf(f, " %6s %8s %9s %9s", "race", "memcheck", "initcheck", "synccheck");
    if (in->untimed) fprintf(f, "\n");
    else fprintf(f, " %12s %5s\n", "geomean ms", "wins");
    double *group_times = xmalloc((size_t)(in->n_cases ? in->n_cases : 1) * sizeof *group_times);
    for (int v = 0; v < nv; v++) {
        if (!in->selected[v]) continue;
        /* a --tuned variant's instances (one per configuration, each running
         * its cases) are one line */
        const hn_tuned_group *tg = hn_tuned_group_of(p, v);
        int lo = tg ? tg->first : v, hi = tg ? tg->first + tg->n : v + 1, first = 1;
        for (int u = lo; u < v && first; u++) first = !in->selected[u];
        if (!first) continue;
        int n[HN_ST_COUNT] = {0}, group_wins = 0;
        for (int64_t c = 0; c < in->n_cases; c++) group_times[c] = NAN;
        for (int u = lo; u < hi; u++) {
            if (!in->selected[u]) continue;
            group_wins += wins[u];
            for (int64_t c = 0; c < in->n_cases; c++) {
                int st = in->status[c * in->n_slots + u];
                if (st >= 0 && st < HN_ST_COUNT) n[st]++;
                if (isfinite(times[c * nv + u])) group_times[c] = times[c * nv + u];
            }
        }
        fprintf(f, "%-48s %5d %8d %7d %6d %5d %7d %7d", p->variants[v].label, n[HN_ST_OK], n[HN_ST_MISMATCH],
                n[HN_ST_COMPILE], n[HN_ST_LAUNCH], n[HN_ST_FAULT], n[HN_ST_TIMEOUT], n[HN_ST_SKIPPED]);
        if (sanitized)
            fprintf(f, " %6d %8d %9d %9d", n[HN_ST_RACE], n[HN_ST_MEMCHECK], n[HN_ST_INITCHECK], n[HN_ST_SYNCCHECK]);
        if (in->untimed) fprintf(f, "\n");
        else fprintf(f, " %12.4g %5d\n", geomean(group_times, in->n_cases, 1), group_wins);
    }
    free(group_times);
    if (in->untimed) {
        free(times);
        free(wins);
        return;
    }
    fprintf(f, "\nfastest correct variant per case%s:\n", in->is_emu ? " (CPU-emulated times: not GPU speed)" : "");
    int shown = 0, within = 0;
    for (int64_t c = 0; c < in->n_cases; c++) {
        int best, second;
        best_two(in, c, &best, &second);
        if (best < 0) continue;
        char label[128];
        case_label(p, c, label, sizeof label);
        const double *t = &in->median_ms[c * in->n_slots];
        const double *z = &in->noise[c * in->n_slots];
        if (second >= 0) {
            int wn = hn_verdict_within_noise(t[best], z[best], t[second], z[second]);
            within += wn;
            char noise[64] = "";
            if (wn)
                snprintf(noise, sizeof noise, " (within noise: rows vary by %.3g%%)",
                         100.0 * fmax(isfinite(z[best]) ? z[best] : 0, isfinite(z[second]) ? z[second] : 0));
            fprintf(f, "  case %-4lld %-28s %-44s %10.4g ms  %.2fx faster than %s%s\n", (long long)c, label,
                    p->variants[best].label, t[best], t[second] / t[best], p->variants[second].label, noise);
        } else {
            fprintf(f, "  case %-4lld %-28s %-44s %10.4g ms\n", (long long)c, label, p->variants[best].label, t[best]);
        }
        shown++;
    }
    if (!shown) fprintf(f, "  none (no variant ran correctly)\n");
    int top = -1;
    for (int v = 0; v < nv; v++)
        if (wins[v] && (top < 0 || wins[v] > wins[top])) top = v;
    if (top >= 0) fprintf(f, "overall: %s is fastest in %d of %d cases\n", p->variants[top].label, wins[top], shown);
    if (within)
        fprintf(f, "%d of those margins are within the rows' measured noise: the order there is not settled\n",
                within);
    free(times);
    free(wins);
}

char *hn_verdict_best_path(const char *out_path) {
    size_t len = strlen(out_path);
    return len > 4 && strcmp(out_path + len - 4, ".csv") == 0 ? xasprintf("%.*s.best.csv", (int)(len - 4), out_path)
                                                              : xasprintf("%s.best.csv", out_path);
}

int hn_verdict_write_best(const hn_verdict_in *in, const char *path, hn_err *err) {
    const hn_plan *p = in->plan;
    const char **cols = xcalloc((size_t)(p->n_axes + p->n_define_names + 9), sizeof *cols);
    int n = 0;
    cols[n++] = "case";
    for (int a = 0; a < p->n_axes; a++) cols[n++] = p->axes[a].name;
    cols[n++] = "label";
    cols[n++] = "best_variant";
    cols[n++] = "kernel";
    for (int d = 0; d < p->n_define_names; d++) cols[n++] = p->define_names[d];
    cols[n++] = "time_median_ms";
    cols[n++] = "runner_up";
    cols[n++] = "margin";
    cols[n++] = "within_noise";
    hn_csv *csv = NULL;
    int rc = hn_csv_open(path, cols, n, &csv, err);
    free(cols);
    for (int64_t c = 0; rc == 0 && c < in->n_cases; c++) {
        int best, second;
        best_two(in, c, &best, &second);
        if (best < 0) continue;
        const hn_variant *v = &p->variants[best];
        const double *t = &in->median_ms[c * in->n_slots];
        const double *z = &in->noise[c * in->n_slots];
        char label[128];
        case_label(p, c, label, sizeof label);
        hn_csv_setf_named(csv, "case", "%lld", (long long)c);
        for (int a = 0; a < p->n_axes; a++) {
            char buf[64];
            hn_value_format(&p->cases[c].values[a], buf, sizeof buf);
            hn_csv_set_named(csv, p->axes[a].name, buf);
        }
        hn_csv_set_named(csv, "label", label);
        hn_csv_set_named(csv, "best_variant", v->label);
        hn_csv_set_named(csv, "kernel", p->specs[v->spec].kernels_text);
        for (int d = 0; d < p->n_define_names; d++)
            hn_csv_set_named(csv, p->define_names[d], hn_variant_define(p, v, p->define_names[d]));
        hn_csv_setf_named(csv, "time_median_ms", "%.6g", t[best]);
        if (second >= 0) {
            hn_csv_set_named(csv, "runner_up", p->variants[second].label);
            hn_csv_setf_named(csv, "margin", "%.4g", t[second] / t[best]);
            hn_csv_set_named(csv, "within_noise",
                             hn_verdict_within_noise(t[best], z[best], t[second], z[second]) ? "yes" : "no");
        }
        rc = hn_csv_write_row(csv, err);
    }
    hn_csv_close(csv);
    if (rc != 0) hn_err_prefix(err, "%s", path);
    return rc;
}
