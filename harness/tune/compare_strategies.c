/*
 * compare_strategies.c: `harness tune CONFIG --replay JOURNAL --compare-strategies`: every
 * strategy, many times with different seeds, on a recorded space, scored with
 * the methodology of Willemsen, van Nieuwpoort and van Werkhoven (FGCS 2024).
 *
 * For each unit (a case, or the cases together with --across) the recorded
 * journal gives every valid configuration's cost (its search time; across cases
 * the geometric mean; a configuration that failed or is missing costs the worst
 * recorded time, so it ranks last). Then:
 *
 *   baseline(k)   the expected best cost after k evaluations of random search
 *                 without replacement, calculated exactly from the recorded
 *                 distribution v_0 <= ... <= v_{N-1}:
 *                 E[min of k] = sum_i v_i C(N-1-i, k-1) / C(N, k)
 *   best_s(k)     a strategy's best cost after k evaluations, the mean over runs
 *   P_s(k)        (baseline(k) - best_s(k)) / (baseline(k) - optimum): 0 is
 *                 random search, 1 the optimum, negative worse than random;
 *                 points where the baseline is already at the optimum are left out
 *   score         the mean of P_s(k) over k = 1 .. budget (then over units)
 *   to 5%         the evaluations a run needed to come within 5 % of the optimum
 *                 (the median over runs; runs that never did are counted apart);
 *                 for random search also its exact expectation (N+1)/(M+1), M
 *                 the configurations within 5 %.
 *
 * The x axis is evaluations, not time: a replayed evaluation has no cost of its
 * own, and evaluations are what a budget counts. Writes <out>.strategies.csv,
 * <out>.strategies.dat and the chart <out>.strategies.png (plots/strategies.gp).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_strategies.h"
#include "csv.h"
#include "plot.h"

typedef struct {
    const double *cost; /* [n_valid] */
} table_ctx;

static double table_eval(void *ctx, const hn_space *s, int64_t pos, double *noise, int *fresh, hn_err *err) {
    (void)s, (void)err;
    *noise = NAN;
    *fresh = 1;
    return ((const table_ctx *)ctx)->cost[pos];
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Each valid position's cost from the journal; returns how many are missing. */
static int64_t unit_costs(const hn_tune_compare_in *in, int u, double *cost) {
    const hn_space *s = in->spaces[u];
    int n_cases = in->unit_n_cases[u];
    double *logsum = xcalloc((size_t)s->n_valid + 1, sizeof *logsum);
    int *seen = xcalloc((size_t)s->n_valid + 1, sizeof *seen);
    int *failed = xcalloc((size_t)s->n_valid + 1, sizeof *failed);
    int n = hn_journal_count(in->journal);
    for (int i = 0; i < n; i++) {
        const hn_journal_entry *e = hn_journal_at(in->journal, i);
        if (strcmp(e->variant, in->variant) != 0 || strcmp(e->phase, "search") != 0) continue;
        int c = 0;
        while (c < n_cases && strcmp(e->case_values, in->unit_case_values[u][c]) != 0) c++;
        if (c == n_cases) continue;
        int64_t raw = hn_space_parse(s, e->config);
        int64_t pos = raw < 0 ? -1 : hn_space_find(s, raw);
        if (pos < 0) continue;
        seen[pos]++;
        if (strcmp(e->status, "ok") == 0 && e->time_ms > 0) logsum[pos] += log(e->time_ms);
        else failed[pos] = 1;
    }
    int64_t missing = 0;
    for (int64_t p = 0; p < s->n_valid; p++) {
        if (seen[p] < n_cases) missing++;
        cost[p] = seen[p] >= n_cases && !failed[p] ? exp(logsum[p] / seen[p]) : INFINITY;
    }
    free(logsum);
    free(seen);
    free(failed);
    return missing;
}

/* baseline[k-1] for k = 1..B: the expected best of k random draws without
 * replacement from sorted v[0..N-1]. */
static void random_baseline(const double *v, int64_t N, int64_t B, double *baseline) {
    for (int64_t k = 1; k <= B; k++) {
        double p = (double)k / (double)N, e = 0;
        for (int64_t i = 0; i + k <= N && p > 0; i++) {
            e += v[i] * p;
            if (N - 1 - i > 0) p *= (double)(N - i - k) / (double)(N - 1 - i);
        }
        baseline[k - 1] = e;
    }
}

typedef struct {
    double score;       /* mean of P(k) */
    double to5_median;  /* evaluations to within 5 %; NAN: no run got there */
    int reached;        /* runs that got there */
    double final_ratio; /* mean over runs of best / optimum at the budget */
} strat_result;

static int cmp_int64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int hn_tune_compare(const hn_tune_compare_in *in, hn_err *err) {
    int n_strat = 0;
    while (hn_strategies[n_strat]) n_strat++;
    int repeats = in->repeats > 0 ? in->repeats : 100;
    int64_t max_b = 0;
    for (int u = 0; u < in->n_units; u++) {
        int64_t b = hn_tune_max_evals(in->budget, in->spaces[u]);
        if (b > max_b) max_b = b;
    }
    if (max_b > HN_TUNE_MAX_CURVE) max_b = HN_TUNE_MAX_CURVE;
    /* P(k) summed over units, and how many units reach k */
    double *agg = xcalloc((size_t)(n_strat * max_b) + 1, sizeof *agg);
    int *agg_n = xcalloc((size_t)(n_strat * max_b) + 1, sizeof *agg_n);
    strat_result *res = xcalloc((size_t)(n_strat * in->n_units) + 1, sizeof *res);
    double *rand_to5 = xcalloc((size_t)in->n_units + 1, sizeof *rand_to5);
    hn_tune_trace *trace = xmalloc(sizeof *trace);
    int rc = 0, n_scored = 0;

    printf("comparing %d strategies, %d runs each (seeds %llu..), on %s\n", n_strat, repeats,
           (unsigned long long)in->seed, in->journal_path);
    for (int u = 0; u < in->n_units; u++) {
        const hn_space *s = in->spaces[u];
        int64_t N = s->n_valid, B = hn_tune_max_evals(in->budget, s);
        if (B > max_b) B = max_b;
        double *cost = xcalloc((size_t)N + 1, sizeof *cost);
        int64_t missing = unit_costs(in, u, cost);
        double opt = INFINITY, worst = 0;
        int64_t within = 0;
        for (int64_t p = 0; p < N; p++) {
            if (cost[p] < opt) opt = cost[p];
            if (isfinite(cost[p]) && cost[p] > worst) worst = cost[p];
        }
        if (!isfinite(opt)) {
            printf("  %s: no configuration has a correct time in the journal: left out\n", in->unit_names[u]);
            free(cost);
            continue;
        }
        for (int64_t p = 0; p < N; p++) {
            if (!isfinite(cost[p])) cost[p] = worst; /* a failure ranks last */
            if (cost[p] <= 1.05 * opt) within++;
        }
        double *sorted = xmalloc((size_t)N * sizeof *sorted);
        memcpy(sorted, cost, (size_t)N * sizeof *sorted);
        qsort(sorted, (size_t)N, sizeof *sorted, cmp_double);
        double *baseline = xmalloc((size_t)B * sizeof *baseline);
        random_baseline(sorted, N, B, baseline);
        rand_to5[u] = (double)(N + 1) / (double)(within + 1);
        printf("  %s: %lld valid configurations (%lld not in the journal), optimum %.5g ms, %lld within 5 %%, "
               "budget %lld\n",
               in->unit_names[u], (long long)N, (long long)missing, opt, (long long)within, (long long)B);

        double *mean_best = xmalloc((size_t)B * sizeof *mean_best);
        int64_t *to5 = xmalloc((size_t)repeats * sizeof *to5);
        table_ctx tc = {cost};
        hn_tune_eval_fn ev = {table_eval, NULL, NULL, NULL};
        for (int si = 0; si < n_strat; si++) {
            strat_result *r = &res[si * in->n_units + u];
            memset(mean_best, 0, (size_t)B * sizeof *mean_best);
            int n_to5 = 0;
            double final_sum = 0;
            hn_tune_budget bud = {.evals = B};
            for (int run = 0; run < repeats; run++) {
                if (hn_tune_search(hn_strategies[si], s, in->seed + (uint64_t)run, &bud, ev, &tc, trace, err) != 0) {
                    rc = -1;
                    goto unit_done;
                }
                double last = trace->n_curve ? trace->curve[trace->n_curve - 1] : worst;
                int64_t hit = -1;
                for (int64_t k = 0; k < B; k++) {
                    double b = k < trace->n_curve ? trace->curve[k] : last; /* stopped early: stays */
                    mean_best[k] += b / repeats;
                    if (hit < 0 && b <= 1.05 * opt) hit = k + 1;
                }
                if (hit > 0) to5[n_to5++] = hit;
                final_sum += last / opt;
            }
            double score = 0;
            int points = 0;
            for (int64_t k = 0; k < B; k++) {
                double denom = baseline[k] - opt;
                if (!(denom > 1e-12 * opt)) continue;
                double pk = (baseline[k] - mean_best[k]) / denom;
                score += pk;
                points++;
                agg[si * max_b + k] += pk;
                agg_n[si * max_b + k]++;
            }
            r->score = points ? score / points : NAN;
            qsort(to5, (size_t)n_to5, sizeof *to5, cmp_int64);
            r->reached = n_to5;
            r->to5_median = n_to5 ? (double)to5[n_to5 / 2] : NAN;
            r->final_ratio = final_sum / repeats;
        }
        n_scored++;
    unit_done:
        free(mean_best);
        free(to5);
        free(baseline);
        free(sorted);
        free(cost);
        if (rc) goto out;
    }
    if (!n_scored) {
        rc = hn_errf(err, "%s: no unit has a correct time for any configuration of the space", in->journal_path);
        goto out;
    }

    /* the table, per strategy over the units, and the CSV per unit */
    {
        char *cpath = xasprintf("%s.strategies.csv", in->prefix);
        static const char *const cols[] = {"unit", "strategy", "runs", "budget", "score", "evals_to_5pct_median",
                                           "runs_within_5pct", "final_over_optimum"};
        hn_csv *csv = NULL;
        if (hn_csv_open(cpath, cols, (int)HN_ARRAY_LEN(cols), &csv, err) != 0) {
            free(cpath);
            rc = -1;
            goto out;
        }
        printf("\n%-16s %8s %14s %10s %12s\n", "strategy", "score", "evals to 5%", "runs there", "final/opt");
        int unscored = 0;
        double r_to5 = 0;
        int r_n = 0;
        for (int u = 0; u < in->n_units; u++)
            if (rand_to5[u] > 0) r_to5 += rand_to5[u], r_n++;
        printf("%-16s %8.3f %14.1f %10s %12s   (calculated: the expectation of random search)\n", "random (calc.)",
               0.0, r_n ? r_to5 / r_n : NAN, "-", "-");
        for (int si = 0; si < n_strat; si++) {
            double score = 0, to5 = 0, fin = 0;
            int ns = 0, nt = 0, reached = 0;
            for (int u = 0; u < in->n_units; u++) {
                const strat_result *r = &res[si * in->n_units + u];
                if (!(rand_to5[u] > 0)) continue;
                hn_csv_set_named(csv, "unit", in->unit_names[u]);
                hn_csv_set_named(csv, "strategy", hn_strategies[si]->name);
                hn_csv_setf_named(csv, "runs", "%d", repeats);
                hn_csv_setf_named(csv, "budget", "%lld", (long long)hn_tune_max_evals(in->budget, in->spaces[u]));
                if (isfinite(r->score)) hn_csv_setf_named(csv, "score", "%.4f", r->score);
                if (isfinite(r->to5_median)) hn_csv_setf_named(csv, "evals_to_5pct_median", "%.0f", r->to5_median);
                hn_csv_setf_named(csv, "runs_within_5pct", "%d", r->reached);
                hn_csv_setf_named(csv, "final_over_optimum", "%.4f", r->final_ratio);
                if (hn_csv_write_row(csv, err) != 0) rc = -1;
                if (isfinite(r->score)) score += r->score, ns++;
                if (isfinite(r->to5_median)) to5 += r->to5_median, nt++;
                reached += r->reached;
                fin += r->final_ratio;
            }
            char to5s[32] = "never", scores[32] = "-";
            if (nt) snprintf(to5s, sizeof to5s, "%.1f", to5 / nt);
            if (ns) snprintf(scores, sizeof scores, "%.3f", score / ns);
            else unscored = 1;
            printf("%-16s %8s %14s %9.0f%% %12.4f\n", hn_strategies[si]->name, scores, to5s,
                   100.0 * reached / ((double)repeats * n_scored), fin / n_scored);
        }
        hn_csv_close(csv);
        if (unscored)
            printf("\nscore -: random search's expected best is the optimum at every step of the budget here (a "
                   "space of one configuration, say), so there is nothing to score against\n");
        printf("\nscore: the mean over the budget of (random's expected best - the strategy's mean best) / (random's "
               "expected best - the optimum); 1 = the optimum at once, 0 = random search. evals to 5%%: the median "
               "evaluations a run needed to come within 5 %% of the optimum (mean over units), runs there: the "
               "runs that did within the budget.\n");
        printf("per unit: %s\n", cpath);
        free(cpath);
        if (rc) goto out;
    }

    /* the chart: P(k) over the units, per strategy */
    {
        char *dpath = xasprintf("%s.strategies.dat", in->prefix);
        hn_sb sb;
        hn_sb_init(&sb);
        hn_sb_adds(&sb, "# harness tune --compare-strategies: evaluations, then per strategy the mean over units of "
                        "P(k) (0 random search, 1 the optimum)\n# k");
        for (int si = 0; si < n_strat; si++) hn_sb_addf(&sb, "\t%s", hn_strategies[si]->name);
        hn_sb_addc(&sb, '\n');
        for (int64_t k = 0; k < max_b; k++) {
            hn_sb_addf(&sb, "%lld", (long long)(k + 1));
            for (int si = 0; si < n_strat; si++) {
                int n = agg_n[si * max_b + k];
                if (n) hn_sb_addf(&sb, "\t%.5f", agg[si * max_b + k] / n);
                else hn_sb_adds(&sb, "\tNaN");
            }
            hn_sb_addc(&sb, '\n');
        }
        int wrc = hn_write_file(dpath, sb.buf, sb.len, err);
        hn_sb_free(&sb);
        if (wrc != 0) {
            free(dpath);
            rc = -1;
            goto out;
        }
        char *png = xasprintf("%s.strategies.png", in->prefix);
        if (!hn_plot_have_gnuplot()) {
            printf("chart data: %s (no chart: gnuplot is not installed)\n", dpath);
        } else {
            hn_plot_vars v;
            hn_plot_vars_init(&v);
            hn_plot_var_str(&v, "datafile", dpath);
            char *title = xasprintf("Strategies on %s (%d runs each)", in->variant, repeats);
            hn_plot_var_str(&v, "title", title);
            free(title);
            hn_plot_var_str(&v, "subtitle", in->journal_path);
            hn_plot_var_num(&v, "ns", n_strat);
            const char *names[64];
            for (int si = 0; si < n_strat && si < 64; si++) names[si] = hn_strategies[si]->name;
            hn_plot_var_strs(&v, "sname", names, n_strat);
            hn_err perr;
            if (hn_plot_run("strategies.gp", &v, png, HN_FMT_PNG, 900, 560, 0, &perr) != 0)
                printf("no chart: %s\n", perr.msg);
            else
                printf("chart: %s\n", png);
            hn_plot_vars_free(&v);
        }
        free(png);
        free(dpath);
    }
out:
    free(trace);
    free(agg);
    free(agg_n);
    free(res);
    free(rand_to5);
    return rc;
}
