/* test_shard.c: --shard I/N (harness/scale/shard.c): parsing; every case of a
 * plan in exactly one shard, the same split on every call; the split balanced
 * by estimated cost (the seed notebook's sweep, whose cases differ in work by
 * orders of magnitude), where a split by count is far off. */
#include "hn_test.h"
#include "run.h"
#include "scale/shard.h"
#include "sweep.h"

static void test_parse(void) {
    hn_shard s;
    hn_err err;
    CHECK(hn_shard_parse(NULL, &s, &err) == 0 && s.count == 0);
    CHECK(hn_shard_parse("0/4", &s, &err) == 0 && s.index == 0 && s.count == 4);
    CHECK(hn_shard_parse("3/4", &s, &err) == 0 && s.index == 3);
    CHECK(hn_shard_parse("4/4", &s, &err) != 0);
    CHECK_CONTAINS(err.msg, "shards count from 0");
    CHECK(hn_shard_parse("1/0", &s, &err) != 0);
    CHECK(hn_shard_parse("1", &s, &err) != 0);
    CHECK(hn_shard_parse("a/2", &s, &err) != 0);
    CHECK(hn_shard_parse("1/2x", &s, &err) != 0);
    CHECK(hn_shard_parse("-1/2", &s, &err) != 0);
    CHECK(hn_shard_parse("0/5000", &s, &err) != 0);
}

static void test_assign(void) {
    hn_plan *p = NULL;
    hn_err err;
    if (hn_plan_load("configs/conv2d_sweep.json", -1, &p, &err) != 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    unsigned char *sel = calloc((size_t)p->n_variants, 1), *in = calloc((size_t)p->n_cases, 1);
    for (int v = 0; v < p->n_variants; v++) sel[v] = 1;
    for (int64_t c = 0; c < p->n_cases; c++) in[c] = c != 7; /* one case left out (--case elsewhere) */
    hn_cli cli;
    memset(&cli, 0, sizeof cli);
    cli.backend = "auto";
    cli.max_gflop = -1;
    hn_shard_model m = hn_shard_model_of(&cli, p);
    enum { N = 4 };
    int *a = calloc((size_t)p->n_cases, sizeof *a), *b = calloc((size_t)p->n_cases, sizeof *b);
    double loads[N], loads2[N];
    hn_shard_assign(p, sel, in, N, &m, a, loads);
    hn_shard_assign(p, sel, in, N, &m, b, loads2);
    int per[N] = {0};
    double total = 0, by_count[N] = {0};
    for (int64_t c = 0; c < p->n_cases; c++) {
        CHECK(a[c] == b[c]); /* deterministic */
        if (!in[c]) {
            CHECK_INT(a[c], -1);
            continue;
        }
        CHECK(a[c] >= 0 && a[c] < N);
        per[a[c]]++;
        double cost = hn_shard_case_cost(p, sel, c, &m);
        CHECK(cost > 0);
        total += cost;
        by_count[c % N] += cost; /* what a split by count would give */
    }
    double worst = 0, worst_count = 0, sum = 0;
    for (int s = 0; s < N; s++) {
        CHECK(per[s] > 0);
        sum += loads[s];
        if (loads[s] > worst) worst = loads[s];
        if (by_count[s] > worst_count) worst_count = by_count[s];
    }
    CHECK_NEAR(sum, total, 1e-9 * total);
    /* the largest case alone may exceed an even share; otherwise within 10 % */
    double biggest = 0;
    for (int64_t c = 0; c < p->n_cases; c++)
        if (in[c] && hn_shard_case_cost(p, sel, c, &m) > biggest) biggest = hn_shard_case_cost(p, sel, c, &m);
    double even = total / N;
    CHECK_MSG(worst <= (biggest > even ? biggest : even) * 1.1, "worst shard %.1f s of %.1f s total", worst, total);
    CHECK_MSG(worst < worst_count, "balanced %.1f s, by count %.1f s", worst, worst_count);
    /* on the emulator, cases over its budget cost next to nothing */
    cli.backend = "emu";
    hn_shard_model me = hn_shard_model_of(&cli, p);
    CHECK(me.emu && me.max_gflop == 0.05);
    int over = -1;
    for (int64_t c = 0; c < p->n_cases && over < 0; c++) {
        hn_workload w;
        if (hn_workload_shape(&w, p, &p->cases[c], &err) == 0 && w.flop > 1e9) over = (int)c;
    }
    CHECK(over >= 0 && hn_shard_case_cost(p, sel, over, &me) < 0.1 && hn_shard_case_cost(p, sel, over, &m) > 1);
    free(a), free(b), free(sel), free(in);
    hn_plan_free(p);
}

int main(void) {
    test_parse();
    test_assign();
    return hn_test_exit();
}
