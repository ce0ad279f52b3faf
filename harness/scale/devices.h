/*
 * devices.h: --devices, the worker processes (lanes) of a run or a tune.
 *
 * One lane is one worker process on one device; rows (and tuning evaluations)
 * are handed to lanes as they free up (exec/runner.c, tune/tune.c). The text:
 *   "0,2,3"  those CUDA devices, a lane each; on the emulator, as many lanes
 *   "all"    every device the CUDA driver sees; on the emulator, a lane per core
 *   "N"      CUDA device N alone; on the emulator, N lanes
 * A single number means a device on a GPU and a count on the emulator, because
 * what the emulator multiplies is workers, not devices; the backend is only
 * known once the first worker has created it (the parent never touches the
 * device), so a spec is parsed first and resolved against the backend later.
 *
 * Emulator lanes share the emulator's threads (--emu-threads, else one per
 * core): each gets floor(threads / lanes), at least 1, the same for every lane,
 * so that every row names the same device ("CPU emulator (2 threads, ...)").
 */
#ifndef HN_DEVICES_H
#define HN_DEVICES_H

#include "exec/runner.h"

typedef struct {
    int given;               /* --devices was given */
    int all;
    int n;                   /* the numbers listed */
    int ids[HN_MAX_LANES];
} hn_devices;

/* Where a lane runs. */
typedef struct {
    int device;              /* cuda ordinal (the emulator ignores it) */
    int emu_threads;         /* emulator threads of the lane; 0 the default */
} hn_lane_place;

/* Parses text (NULL: not given, one lane on device 0). -1 with err on bad text. */
int hn_devices_parse(const char *text, hn_devices *d, hn_err *err);

/* The lanes of d on backend ("cuda" or "emu"): n_cuda devices seen by the
 * driver, threads the emulator's total. Fills out[0..*n). -1 with err when a
 * device does not exist or is listed twice. */
int hn_devices_resolve(const hn_devices *d, const char *backend, int n_cuda, int threads, hn_lane_place *out,
                       int *n, hn_err *err);

/* The place of the first lane before the backend is known: the first device
 * listed (0 for "all"); on an explicit --backend emu, the resolved one. */
hn_lane_place hn_devices_first(const hn_devices *d, const char *backend, int threads);

/* "cuda devices 0, 1" / "4 emulator workers of 1 thread" into out. */
void hn_devices_describe(const hn_lane_place *lanes, int n, const char *backend, char *out, size_t size);

#endif
