/* devices.c: --devices (see devices.h). */
#define _GNU_SOURCE
#include "devices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hn_devices_parse(const char *text, hn_devices *d, hn_err *err) {
    memset(d, 0, sizeof *d);
    if (!text) return 0;
    d->given = 1;
    if (strcmp(text, "all") == 0) {
        d->all = 1;
        return 0;
    }
    const char *s = text;
    for (;;) {
        char *end;
        if (*s < '0' || *s > '9')
            return hn_errf(err, "--devices %s: expected device numbers separated by commas (0,1,2,3), a count of "
                                "emulator workers (4), or all",
                           text);
        long v = strtol(s, &end, 10);
        if (v > 4096)
            return hn_errf(err, "--devices %s: %ld is more than a machine has", text, v);
        if (d->n == HN_MAX_LANES)
            return hn_errf(err, "--devices %s: at most %d devices", text, HN_MAX_LANES);
        for (int i = 0; i < d->n; i++)
            if (d->ids[i] == (int)v) return hn_errf(err, "--devices %s: device %ld is listed twice", text, v);
        d->ids[d->n++] = (int)v;
        if (!*end) break;
        if (*end != ',' || !end[1])
            return hn_errf(err, "--devices %s: expected device numbers separated by commas (0,1,2,3)", text);
        s = end + 1;
    }
    return 0;
}

int hn_devices_resolve(const hn_devices *d, const char *backend, int n_cuda, int threads, hn_lane_place *out,
                       int *n, hn_err *err) {
    *n = 0;
    if (!d->given) {
        out[(*n)++] = (hn_lane_place){0, 0};
        return 0;
    }
    if (threads < 1) threads = 1;
    if (strcmp(backend, "emu") == 0) {
        int lanes = d->all ? threads : d->n == 1 ? d->ids[0] : d->n;
        if (lanes < 1) return hn_errf(err, "--devices 0: on the emulator the number is a count of workers (at least 1)");
        if (lanes > HN_MAX_LANES) return hn_errf(err, "--devices: at most %d emulator workers", HN_MAX_LANES);
        int share = threads / lanes > 0 ? threads / lanes : 1;
        for (int i = 0; i < lanes; i++) out[(*n)++] = (hn_lane_place){i, share};
        return 0;
    }
    if (d->all) {
        if (n_cuda < 1) return hn_errf(err, "--devices all: the CUDA driver sees no device");
        for (int i = 0; i < n_cuda && i < HN_MAX_LANES; i++) out[(*n)++] = (hn_lane_place){i, 0};
        return 0;
    }
    for (int i = 0; i < d->n; i++) {
        if (d->ids[i] >= n_cuda)
            return hn_errf(err, "--devices: CUDA device %d does not exist (the driver sees %d: 0 to %d)", d->ids[i],
                           n_cuda, n_cuda - 1);
        out[(*n)++] = (hn_lane_place){d->ids[i], 0};
    }
    return 0;
}

hn_lane_place hn_devices_first(const hn_devices *d, const char *backend, int threads) {
    hn_lane_place lanes[HN_MAX_LANES];
    int n;
    hn_err err;
    if (strcmp(backend, "emu") == 0 && hn_devices_resolve(d, backend, 0, threads, lanes, &n, &err) == 0) return lanes[0];
    return (hn_lane_place){d->given && !d->all ? d->ids[0] : 0, 0};
}

void hn_devices_describe(const hn_lane_place *lanes, int n, const char *backend, char *out, size_t size) {
    if (strcmp(backend, "emu") == 0) {
        snprintf(out, size, "%d emulator worker%s of %d thread%s", n, n == 1 ? "" : "s", lanes[0].emu_threads,
                 lanes[0].emu_threads == 1 ? "" : "s");
        return;
    }
    size_t k = (size_t)snprintf(out, size, "cuda device%s ", n == 1 ? "" : "s");
    for (int i = 0; i < n && k < size; i++) k += (size_t)snprintf(out + k, size - k, "%s%d", i ? ", " : "", lanes[i].device);
}
