/* test_meta.c: a shard's sidecar (harness/scale/meta.c): its path beside the
 * data, a write and load that keep every field, the config hash following the
 * config and the kernel sources, and the checks merge relies on. */
#define _GNU_SOURCE
#define HN_TEST_SCRATCH "meta"
#include "hn_test.h"
#include "hn_test_files.h"
#include "scale/meta.h"
#include "sweep.h"

static void test_path(void) {
    char *p = hn_meta_path("results/x.csv");
    CHECK_STR(p, "results/x.meta.json");
    free(p);
    p = hn_meta_path("results/x.tune.journal");
    CHECK_STR(p, "results/x.tune.meta.json");
    free(p);
    p = hn_meta_path("out");
    CHECK_STR(p, "out.meta.json");
    free(p);
}

static void fill(hn_meta *m, int *cs, char **vs, double *est) {
    memset(m, 0, sizeof *m);
    m->harness = "0.1.0";
    m->kind = "run";
    m->config = "/x/c.json";
    m->device = "CPU emulator (1 thread, X)";
    m->backend = "emu";
    snprintf(m->config_hash, sizeof m->config_hash, "%s", "0123456789abcdef0123456789abcdef");
    m->seed = 42;
    m->variants = vs;
    m->n_variants = 2;
    m->shard_index = 1;
    m->shard_count = 2;
    m->case_shard = cs;
    m->n_cases = 4;
    m->estimate = est;
    m->finished = 1;
}

static void test_roundtrip(void) {
    char *dir = hn_test_scratch("");
    char *path = xasprintf("%s/a.meta.json", dir);
    int cs[4] = {0, 1, -1, 1};
    char *vs[2] = {"v1", "v2[X=1]"};
    double est[2] = {1.5, 2.5};
    hn_meta m, back, other;
    hn_err err;
    fill(&m, cs, vs, est);
    CHECK_MSG(hn_meta_write(path, &m, &err) == 0, "%s", err.msg);
    CHECK_MSG(hn_meta_load(path, &back, &err) == 0, "%s", err.msg);
    CHECK_STR(back.harness, "0.1.0");
    CHECK_STR(back.config_hash, m.config_hash);
    CHECK_STR(back.variants[1], "v2[X=1]");
    CHECK(back.seed == 42 && back.shard_index == 1 && back.shard_count == 2 && back.n_cases == 4 && back.finished);
    CHECK(back.case_shard[2] == -1 && back.case_shard[3] == 1);
    CHECK_NEAR(back.estimate[1], 2.5, 0);
    CHECK(hn_meta_same(&m, "a", &back, "b", &err) == 0);
    fill(&other, cs, vs, est);
    other.config_hash[0] = 'f';
    CHECK(hn_meta_same(&m, "a", &other, "b", &err) != 0);
    CHECK_CONTAINS(err.msg, "different configs or kernel sources");
    fill(&other, cs, vs, est);
    other.harness = "0.2.0";
    CHECK(hn_meta_same(&m, "a", &other, "b", &err) != 0);
    CHECK_CONTAINS(err.msg, "harness 0.2.0");
    int cs2[4] = {0, 0, -1, 1};
    fill(&other, cs2, vs, est);
    CHECK(hn_meta_same(&m, "a", &other, "b", &err) != 0);
    CHECK_CONTAINS(err.msg, "split the cases differently");
    hn_meta_free(&back);
    hn_write_file(path, "{\"harness\": 1}", 14, &err);
    CHECK(hn_meta_load(path, &back, &err) != 0);
    CHECK_CONTAINS(err.msg, "not a shard's description");
    free(path);
    free(dir);
}

static void test_config_hash(void) {
    char *dir = hn_test_scratch("hash");
    char *cu = xasprintf("%s/k.cu", dir), *h = xasprintf("%s/k.h", dir), *cfg = xasprintf("%s/c.json", dir);
    hn_err err;
    hn_write_file(h, "#define K 1\n", 12, &err);
    const char *src = "#include \"k.h\"\n__global__ void k(float *out) { out[0] = K; }\n";
    hn_write_file(cu, src, strlen(src), &err);
    const char *json = "{\"op\": \"relu\", \"axes\": {\"n\": 8}, \"variants\": [{\"file\": \"k.cu\", \"kernel\": \"k\", "
                       "\"block\": [1], \"grid\": [1], \"args\": [\"y\"]}]}";
    hn_write_file(cfg, json, strlen(json), &err);
    hn_plan *p = NULL;
    char a[33], b[33], c[33];
    if (hn_plan_load(cfg, -1, &p, &err) != 0) {
        CHECK_MSG(0, "%s", err.msg);
        goto out;
    }
    CHECK(hn_meta_config_hash(p, a, &err) == 0);
    hn_write_file(h, "#define K 2\n", 12, &err); /* a header the kernel includes */
    CHECK(hn_meta_config_hash(p, b, &err) == 0);
    CHECK(strcmp(a, b) != 0);
    hn_plan_free(p);
    p = NULL;
    char *json2 = xasprintf("%s ", json); /* the config file itself */
    hn_write_file(cfg, json2, strlen(json2), &err);
    free(json2);
    if (hn_plan_load(cfg, -1, &p, &err) == 0) {
        CHECK(hn_meta_config_hash(p, c, &err) == 0);
        CHECK(strcmp(b, c) != 0);
    }
out:
    hn_plan_free(p);
    free(cu), free(h), free(cfg), free(dir);
}

int main(void) {
    test_path();
    test_roundtrip();
    test_config_hash();
    hn_test_cleanup();
    return hn_test_exit();
}
