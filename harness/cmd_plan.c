/*
 * cmd_plan.c: the subcommands that look at a config without running kernels:
 * `list` (the plan) and `compile` (NVRTC or host builds with resource reports).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "run.h"
#include "sweep.h"
#include "tuned.h"

static hn_plan *load_or_complain(const hn_cli *cli) {
    hn_plan *p;
    hn_err err;
    if (hn_plan_load_tuned(cli->config, cli->seed, cli->tuned, cli->n_tuned, &p, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        return NULL;
    }
    hn_plan_print_notice(p);
    return p;
}

int hn_cmd_list(const hn_cli *cli) {
    hn_plan *p = load_or_complain(cli);
    if (!p) return 2;
    printf("%s%s%s\n", p->name, p->description[0] ? ": " : "", p->description);
    printf("operator %s: %s\n", p->op->name, p->op->doc);
    printf("axes:\n");
    for (int a = 0; a < p->n_axes; a++) {
        printf("  %-14s", p->axes[a].name);
        for (int i = 0; i < p->axes[a].n; i++) printf(" %s", p->axes[a].texts[i]);
        printf("\n");
    }
    for (int i = 0; i < p->n_where; i++) printf("where: %s\n", hn_expr_text(p->where[i]));
    printf("%lld cases", (long long)p->n_cases);
    if (p->sample_count && p->sample_count < p->n_total)
        printf(" sampled from %lld combinations with seed %llu", (long long)p->n_total,
               (unsigned long long)p->seed);
    int nd = hn_tuned_distinct(p, NULL); /* a --tuned variant once: one row per case */
    printf(" x %d variants = %lld rows\n\ncases:\n", nd, (long long)p->n_cases * nd);
    printf("  %4s", "id");
    for (int a = 0; a < p->n_axes; a++) printf(" %12s", p->axes[a].name);
    printf("  %-30s %10s\n", "label", "GFLOP");
    double total = 0;
    for (int64_t c = 0; c < p->n_cases; c++) {
        hn_workload w;
        hn_err err;
        printf("  %4lld", (long long)c);
        for (int a = 0; a < p->n_axes; a++) {
            char buf[64];
            hn_value_format(&p->cases[c].values[a], buf, sizeof buf);
            printf(" %12s", buf);
        }
        if (hn_workload_shape(&w, p, &p->cases[c], &err) == 0) {
            printf("  %-30s %10.4g\n", w.label, w.flop * 1e-9);
            total += w.flop * 1e-9;
        } else {
            printf("  (%s)\n", err.msg);
        }
    }
    printf("  total %.4g GFLOP per variant\n\nvariants:\n", total);
    for (int i = 0; i < p->n_variants; i++) {
        const hn_variant *v = &p->variants[i];
        const hn_variant_spec *s = &p->specs[v->spec];
        printf("  %s\n    %s :: %s\n    defines:", v->label, s->file, s->kernels_text);
        for (int d = 0; d < s->n_defines; d++)
            printf(" %s=%s", s->defines[d].name, s->defines[d].texts[v->choice[d]]);
        printf("\n");
        if (s->n_scratch) {
            printf("    scratch:");
            for (int k = 0; k < s->n_scratch; k++)
                printf("%s %s = %s bytes", k ? "," : "", s->scratch_names[k], hn_expr_text(s->scratch_bytes[k]));
            printf("\n");
        }
        if (s->zero) {
            printf("    zero (set to 0 before every launch):");
            for (int k = 0; k < p->op->n_buffers && k < 48; k++)
                if (s->zero >> k & 1) printf(" %s", p->op->buffers[k].name);
            for (int k = 0; k < s->n_scratch; k++)
                if (s->zero & HN_ZERO_SCRATCH(k)) printf(" %s", s->scratch_names[k]);
            printf("\n");
        }
        if (s->n_constants) {
            printf("    constants (written before the launches):");
            for (int k = 0; k < s->n_constants; k++) printf(" %s = %s", s->const_names[k], s->const_vals[k].text);
            printf("\n");
        }
        for (int li = 0; li < hn_spec_launches(s); li++) {
            const hn_launch_spec l = hn_spec_launch(s, li);
            if (hn_spec_launches(s) > 1) printf("    launch %d: %s\n", li + 1, l.kernel);
            printf("    block (%s, %s, %s)  grid (%s, %s, %s)  shared %s\n", hn_expr_text(l.block[0]),
                   hn_expr_text(l.block[1]), hn_expr_text(l.block[2]), hn_expr_text(l.grid[0]),
                   hn_expr_text(l.grid[1]), hn_expr_text(l.grid[2]), hn_expr_text(l.shared));
            printf("    args:");
            for (int a = 0; a < l.n_args; a++) printf(" %s", l.args[a].text);
            printf("\n");
        }
        for (int w = 0; w < s->n_where; w++) printf("    where %s\n", hn_expr_text(s->where[w]));
        const hn_tuned_group *tg = hn_tuned_group_of(p, i);
        if (tg) {
            printf("    tuned (%s), runs:", tg->file);
            for (int64_t c = 0; c < p->n_cases; c++)
                if (tg->of_case[c] == i) printf("\n      case %lld: %s", (long long)c, tg->note[c]);
            printf("\n");
        }
    }
    hn_plan_free(p);
    return 0;
}

int hn_cmd_compile(const hn_cli *cli) {
    hn_plan *p = load_or_complain(cli);
    if (!p) return 2;
    int emu = strcmp(cli->backend, "emu") == 0;
    char arch[32] = "";
    if (!emu) {
        if (cli->arch) {
            snprintf(arch, sizeof arch, "%s", cli->arch);
        } else {
            char why[256];
            hn_backend *be = NULL;
            hn_err err;
            if (hn_cuda_available(why, sizeof why) && hn_backend_cuda_create(NULL, &be, &err) == 0) {
                hn_device_info info;
                be->ops->device_info(be, &info);
                snprintf(arch, sizeof arch, "%s", info.arch);
                hn_backend_destroy(be);
            } else {
                snprintf(arch, sizeof arch, "sm_90");
                fprintf(stderr, "harness: no CUDA device (%s); compiling for %s (--arch to choose)\n", why, arch);
            }
        }
    }
    char *cache = cli->cache_dir ? xstrdup(cli->cache_dir) : hn_default_cache_dir();
    printf("%s: %d variants for %s\n", p->name, p->n_variants, emu ? "the CPU emulator" : arch);
    printf("%-48s %5s %9s %9s %7s %9s %8s %s\n", "variant", "regs", "spill st", "spill ld", "stack",
           "smem", "seconds", "");
    int failed = 0;
    for (int i = 0; i < p->n_variants; i++) {
        hn_build b;
        hn_build_init(&b, p, &p->variants[i], NULL, 0, emu ? NULL : arch, cache);
        hn_module_image img;
        hn_err err;
        char *log = NULL;
        if (hn_compile(emu ? HN_TARGET_EMU : HN_TARGET_CUDA, &b.req, &img, &log, &err) != 0) {
            char name[192];
            hn_tuned_label(p, i, name, sizeof name);
            printf("%-48s compile error\n", name);
            fprintf(stderr, "%s\n", err.msg);
            failed++;
        } else {
            /* "cached" only for an entry that verified; a bad one was compiled again. */
            const char *how = img.from_cache ? "(cached)" : img.cache_bad ? "(recompiled: bad cache entry)" : "";
            const hn_variant_spec *s = &p->specs[p->variants[i].spec];
            /* a row per launch where the variant has several, each kernel's own resources */
            for (int li = 0; li < hn_spec_launches(s); li++) {
                const hn_kernel_resources *r = &img.res[li];
                char label[256], name[192];
                hn_tuned_label(p, i, name, sizeof name); /* a --tuned instance with its configuration */
                if (hn_spec_launches(s) > 1)
                    snprintf(label, sizeof label, "%s %d: %s", name, li + 1, hn_spec_launch(s, li).kernel);
                else
                    snprintf(label, sizeof label, "%s", name);
                if (emu || r->registers < 0)
                    printf("%-48s %5s %9s %9s %7s %9s %8.2f %s\n", label, "-", "-", "-", "-", "-", img.seconds, how);
                else
                    printf("%-48s %5d %9d %9d %7d %9d %8.2f %s\n", label, r->registers, r->spill_stores,
                           r->spill_loads, r->stack_frame, r->static_shared, img.seconds, how);
            }
            if (cli->verbose && img.log && *img.log) printf("%s\n", img.log);
            hn_module_image_free(&img);
        }
        free(log);
        hn_build_free(&b);
    }
    free(cache);
    hn_plan_free(p);
    return failed ? 1 : 0;
}
