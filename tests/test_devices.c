/* test_devices.c: --devices (harness/scale/devices.c): parsing, and the lanes a
 * spec resolves to on a GPU and on the emulator (a single number is a device
 * on one and a count on the other; emulator lanes share the threads evenly). */
#include "hn_test.h"
#include "scale/devices.h"

static void test_parse(void) {
    hn_devices d;
    hn_err err;
    CHECK(hn_devices_parse(NULL, &d, &err) == 0 && !d.given);
    CHECK(hn_devices_parse("0,1,2,3", &d, &err) == 0 && d.given && d.n == 4 && d.ids[3] == 3);
    CHECK(hn_devices_parse("all", &d, &err) == 0 && d.all);
    CHECK(hn_devices_parse("2", &d, &err) == 0 && d.n == 1 && d.ids[0] == 2);
    CHECK(hn_devices_parse("1,1", &d, &err) != 0);
    CHECK_CONTAINS(err.msg, "listed twice");
    CHECK(hn_devices_parse("", &d, &err) != 0);
    CHECK(hn_devices_parse("0,", &d, &err) != 0);
    CHECK(hn_devices_parse("a", &d, &err) != 0);
    CHECK(hn_devices_parse("-1", &d, &err) != 0);
    CHECK(hn_devices_parse("0;1", &d, &err) != 0);
}

static void test_resolve_cuda(void) {
    hn_devices d;
    hn_err err;
    hn_lane_place pl[HN_MAX_LANES];
    int n;
    hn_devices_parse("all", &d, &err);
    CHECK(hn_devices_resolve(&d, "cuda", 4, 2, pl, &n, &err) == 0);
    CHECK_INT(n, 4);
    CHECK_INT(pl[3].device, 3);
    CHECK(hn_devices_resolve(&d, "cuda", 0, 2, pl, &n, &err) != 0);
    hn_devices_parse("2", &d, &err);
    CHECK(hn_devices_resolve(&d, "cuda", 4, 2, pl, &n, &err) == 0 && n == 1 && pl[0].device == 2);
    hn_devices_parse("1,5", &d, &err);
    CHECK(hn_devices_resolve(&d, "cuda", 4, 2, pl, &n, &err) != 0);
    CHECK_CONTAINS(err.msg, "CUDA device 5 does not exist");
    hn_devices_parse(NULL, &d, &err);
    CHECK(hn_devices_resolve(&d, "cuda", 4, 2, pl, &n, &err) == 0 && n == 1 && pl[0].device == 0 &&
          pl[0].emu_threads == 0);
    char what[128];
    hn_devices_parse("0,2", &d, &err);
    hn_devices_resolve(&d, "cuda", 4, 2, pl, &n, &err);
    hn_devices_describe(pl, n, "cuda", what, sizeof what);
    CHECK_STR(what, "cuda devices 0, 2");
}

static void test_resolve_emu(void) {
    hn_devices d;
    hn_err err;
    hn_lane_place pl[HN_MAX_LANES];
    int n;
    hn_devices_parse("4", &d, &err); /* a count on the emulator */
    CHECK(hn_devices_resolve(&d, "emu", 0, 8, pl, &n, &err) == 0);
    CHECK_INT(n, 4);
    for (int i = 0; i < n; i++) CHECK_INT(pl[i].emu_threads, 2);
    CHECK(hn_devices_resolve(&d, "emu", 0, 6, pl, &n, &err) == 0);
    CHECK(pl[0].emu_threads == 1 && pl[3].emu_threads == 1); /* the same share for every lane */
    CHECK(hn_devices_resolve(&d, "emu", 0, 2, pl, &n, &err) == 0 && n == 4 && pl[2].emu_threads == 1);
    hn_devices_parse("0,1,2", &d, &err); /* a list: as many workers */
    CHECK(hn_devices_resolve(&d, "emu", 0, 6, pl, &n, &err) == 0 && n == 3 && pl[0].emu_threads == 2);
    hn_devices_parse("all", &d, &err); /* a worker per thread */
    CHECK(hn_devices_resolve(&d, "emu", 0, 3, pl, &n, &err) == 0 && n == 3 && pl[1].emu_threads == 1);
    hn_devices_parse("0", &d, &err);
    CHECK(hn_devices_resolve(&d, "emu", 0, 3, pl, &n, &err) != 0);
    hn_devices_parse("2", &d, &err);
    hn_lane_place first = hn_devices_first(&d, "emu", 4);
    CHECK_INT(first.emu_threads, 2);
    first = hn_devices_first(&d, "auto", 4); /* not known yet: device 2, default threads */
    CHECK(first.device == 2 && first.emu_threads == 0);
    char what[128];
    hn_devices_resolve(&d, "emu", 0, 4, pl, &n, &err);
    hn_devices_describe(pl, n, "emu", what, sizeof what);
    CHECK_STR(what, "2 emulator workers of 2 threads");
}

int main(void) {
    test_parse();
    test_resolve_cuda();
    test_resolve_emu();
    return hn_test_exit();
}
