/*
 * test_emu_bench.c: hn_emu_bench runs to the end and prints every figure it
 * promises (labels only: timings are never asserted).
 */
#include <unistd.h>

#include "emu/emu.h"
#include "test_emu_common.h"

int main(void) {
    char *dir = emu_tmp_dir("emu-bench");
    char *path = xasprintf("%s/bench.txt", dir);
    FILE *f = fopen(path, "w+");
    if (!f) emu_die("fopen", NULL);
    hn_err err;
    int rc = hn_emu_bench(f, 0, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    fclose(f);
    char *text = NULL;
    CHECK(hn_read_file(path, &text, NULL, &err) == 0);
    fputs(text ? text : "", stderr);
    CHECK_CONTAINS(text, "fiber switch:");
    CHECK_CONTAINS(text, "barrier, per thread:");
    CHECK_CONTAINS(text, "thread without collectives:");
    CHECK_CONTAINS(text, "thread with one barrier:");
    CHECK_CONTAINS(text, "C loop, 1 thread:");
    /* Every conv2d variant ran: none missing, failed or wrong. */
    CHECK_CONTAINS(text, "conv2d_pad_z_out_shared_halo");
    CHECK(!strstr(text, "failed"));
    CHECK(!strstr(text, "skipped"));
    free(text);
    free(path);
    free(dir);
    return hn_test_exit();
}
