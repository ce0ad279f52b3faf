/*
 * profile.h: printing the emulator's memory profile (hn_profile, backend.h;
 * how it is measured: emu/emu_prof.h): per source line of the kernel, its
 * global load and store requests, the 32-byte sectors each takes (the
 * coalescing figure Nsight Compute reports as sectors per request; 4 is a warp
 * reading 32 consecutive floats), its shared-memory requests and their bank
 * conflicts, and its share of all accesses; as a table and as the kernel's
 * source with those figures beside each line.
 */
#ifndef HN_PROFILE_H
#define HN_PROFILE_H

#include <stdio.h>

#include "backend.h"

/* "global load" and friends. */
const char *hn_profile_space_name(int space);
const char *hn_profile_kind_name(int kind);
/* Per-request figures of a row: sectors (global) or bank conflicts (shared),
 * NAN where they do not apply. */
double hn_profile_sectors_per_request(const hn_prof_row *r);
double hn_profile_conflicts_per_request(const hn_prof_row *r);
/* The row's share of every access of the profile, in percent. */
double hn_profile_share(const hn_profile *p, const hn_prof_row *r);

/* The table, under a title line (with how many blocks were profiled). */
void hn_profile_print_table(FILE *f, const hn_profile *p, const char *title);
/* Every source file the profile names, each line with its rows' figures
 * beside it (files that cannot be read are said so). */
void hn_profile_print_listing(FILE *f, const hn_profile *p);

#endif
