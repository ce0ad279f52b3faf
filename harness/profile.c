/* profile.c: printing the emulator's memory profile; see profile.h. */
#include "profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *hn_profile_space_name(int space) {
    return space == HN_PROF_SHARED ? "shared" : "global";
}

const char *hn_profile_kind_name(int kind) {
    return kind == HN_PROF_STORE ? "store" : kind == HN_PROF_ATOMIC ? "atomic" : "load";
}

double hn_profile_sectors_per_request(const hn_prof_row *r) {
    return r->space == HN_PROF_GLOBAL && r->requests > 0 ? r->sectors / r->requests : NAN;
}

double hn_profile_conflicts_per_request(const hn_prof_row *r) {
    return r->space == HN_PROF_SHARED && r->requests > 0 ? (r->wavefronts - r->ideal) / r->requests : NAN;
}

static double total_accesses(const hn_profile *p) {
    double t = 0;
    for (int i = 0; i < p->n; i++) t += p->rows[i].accesses;
    return t;
}

double hn_profile_share(const hn_profile *p, const hn_prof_row *r) {
    double t = total_accesses(p);
    return t > 0 ? 100.0 * r->accesses / t : 0.0;
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* A count: exact below a million, else 3 significant digits. */
static void count_str(double v, char *buf, size_t size) {
    if (v < 1e6) snprintf(buf, size, "%.0f", v);
    else snprintf(buf, size, "%.3g", v);
}

void hn_profile_print_table(FILE *f, const hn_profile *p, const char *title) {
    fprintf(f, "%s: kernel '%s', %d launch%s", title, p->kernel ? p->kernel : "?", p->launches,
            p->launches == 1 ? "" : "es");
    if (p->blocks_profiled < p->blocks)
        fprintf(f, ", %llu of %llu blocks profiled (counts scaled up by %.3g; --profile-blocks 0 profiles all)",
                p->blocks_profiled, p->blocks, (double)p->blocks / (double)p->blocks_profiled);
    else
        fprintf(f, ", every block (%llu) profiled", p->blocks);
    fprintf(f, "\n");
    if (!p->n) {
        fprintf(f, "  no global or shared memory access\n");
        return;
    }
    int w = 4;
    for (int i = 0; i < p->n; i++) {
        char loc[512];
        snprintf(loc, sizeof loc, "%s:%d", base_name(p->rows[i].file), p->rows[i].line);
        if ((int)strlen(loc) > w) w = (int)strlen(loc);
    }
    fprintf(f, "  %-*s %-6s %-6s %12s %12s %14s %12s %6s\n", w, "line", "space", "kind", "requests", "sectors/req",
            "conflicts/req", "accesses", "share");
    double total = total_accesses(p);
    for (int i = 0; i < p->n; i++) {
        const hn_prof_row *r = &p->rows[i];
        char loc[512], req[32], acc[32], sec[32] = "-", con[32] = "-";
        snprintf(loc, sizeof loc, "%s:%d", base_name(r->file), r->line);
        count_str(r->requests, req, sizeof req);
        count_str(r->accesses, acc, sizeof acc);
        double s = hn_profile_sectors_per_request(r), c = hn_profile_conflicts_per_request(r);
        if (!isnan(s)) snprintf(sec, sizeof sec, "%.2f", s);
        if (!isnan(c)) snprintf(con, sizeof con, "%.2f", c);
        fprintf(f, "  %-*s %-6s %-6s %12s %12s %14s %12s %5.1f%%\n", w, loc, hn_profile_space_name(r->space),
                hn_profile_kind_name(r->kind), req, sec, con, acc, total > 0 ? 100.0 * r->accesses / total : 0.0);
    }
}

/* One row's figures in a few words, for the listing. */
static void row_note(const hn_profile *p, const hn_prof_row *r, char *buf, size_t size) {
    char req[32];
    count_str(r->requests, req, sizeof req);
    double s = hn_profile_sectors_per_request(r), c = hn_profile_conflicts_per_request(r);
    if (!isnan(s))
        snprintf(buf, size, "%s %s: %s req, %.2f sectors/req, %.1f%%", hn_profile_space_name(r->space),
                 hn_profile_kind_name(r->kind), req, s, hn_profile_share(p, r));
    else
        snprintf(buf, size, "%s %s: %s req, %.2f conflicts/req, %.1f%%", hn_profile_space_name(r->space),
                 hn_profile_kind_name(r->kind), req, isnan(c) ? 0.0 : c, hn_profile_share(p, r));
}

void hn_profile_print_listing(FILE *f, const hn_profile *p) {
    for (int i = 0; i < p->n; i++) {
        const char *file = p->rows[i].file;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = strcmp(p->rows[j].file, file) == 0;
        if (seen) continue;
        char *text = NULL;
        if (strcmp(file, "?") == 0 || hn_read_file(file, &text, NULL, NULL) != 0) {
            fprintf(f, "\n%s: cannot read the source\n", file);
            continue;
        }
        fprintf(f, "\n%s (global: sectors per request; shared: bank conflicts per request; %% of all accesses)\n",
                file);
        int line = 1;
        for (char *s = text; *s; line++) {
            char *e = strchr(s, '\n');
            int len = e ? (int)(e - s) : (int)strlen(s);
            /* the figures of this line, as many rows as it has */
            char notes[4][160];
            int nn = 0;
            for (int k = 0; k < p->n && nn < 4; k++)
                if (p->rows[k].line == line && strcmp(p->rows[k].file, file) == 0)
                    row_note(p, &p->rows[k], notes[nn++], sizeof notes[0]);
            fprintf(f, "%5d  %.*s\n", line, len, s);
            for (int k = 0; k < nn; k++) fprintf(f, "       ^ %s\n", notes[k]);
            if (!e) break;
            s = e + 1;
        }
        free(text);
    }
}
