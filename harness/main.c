/*
 * main.c: the command-line front end. Parses options, dispatches to the
 * subcommands, and is the only place that prints errors and picks exit codes:
 *   0 success, 1 something ran but failed (a mismatch, a compile error),
 *   2 bad usage or bad input (nothing ran).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "util.h"

static void usage(FILE *f) {
    fprintf(f,
            "harness %s: benchmark and autotune CUDA kernels\n"
            "\n"
            "usage: harness COMMAND [ARGS] [OPTIONS]\n"
            "\n"
            "commands:\n"
            "  run CONFIG        compile every variant, run the sweep, check, time, write CSV\n"
            "  list CONFIG       print the plan (cases and variants) without running anything\n"
            "  compile CONFIG    compile every variant with NVRTC (no GPU needed) and print\n"
            "                    registers, spills and shared memory per variant\n"
            "  debug CONFIG      run one variant on one small case with -DDEBUG -DSINGLE_BLOCK\n"
            "  plot CSV|--all    draw charts of a results file (gnuplot)\n"
            "  compare CSV       compare variants or a define (--by ACCUM_DTYPE) in time and accuracy\n"
            "  bench             print the harness's own benchmark figures\n"
            "  info              versions, devices and backends\n"
            "\n"
            "options:\n"
            "  --backend cuda|emu|auto  where kernels run (default auto: the GPU if present)\n"
            "  --out FILE               results CSV (default results/<config name>.csv)\n"
            "  --seed N                 override the config's sampling seed\n"
            "  --arch sm_XX             target for compile (default: the device's, else sm_90)\n"
            "  --cache-dir DIR          compiled-kernel cache (default ~/.cache/harness)\n"
            "  --variant NAME           run only this variant (repeatable)\n"
            "  --case ID                run only this case (run, debug)\n"
            "  --save-tensors DIR       write inputs, reference and outputs as .npy\n"
            "  --emu-threads N          emulator worker threads (default: one per core)\n"
            "  --kernel-timeout S       stop an emulated launch after S seconds (default 60)\n"
            "  --max-gflop X            emulator: skip cases above X GFLOP (default 0.05)\n"
            "  --all                    emulator: run every case whatever its size\n"
            "  --quick                  exploration timing preset (few samples)\n"
            "  --hot                    time back-to-back launches (default: cold L2)\n"
            "  --warmup N, --min-samples N, --max-samples N, --max-noise PCT, --min-time S,\n"
            "  --timeout S              sampling and stopping rules (see README)\n"
            "  --save-samples           also write every sample to <out>.samples.csv\n"
            "  --no-baseline            skip the cuBLAS baseline rows\n"
            "  --jobs N                 parallel compiles (default: cores)\n"
            "  --kernel NAME, --set a=1,b=2, --block X,Y,Z   debug: variant, case, printing block\n"
            "  --sort COLUMN, --log, --format png|svg|pdf    plot\n"
            "  --by COLUMN, --baseline NAME                  compare, plot\n"
            "  --quiet, --verbose\n",
            HN_VERSION);
}

typedef struct {
    const char *name;
    char kind; /* s string, i int, I int64, d double, f flag, m multi string */
    size_t offset;
} opt_def;

#define OPT(n, k, field) {n, k, offsetof(hn_cli, field)}
static const opt_def OPTS[] = {
    OPT("backend", 's', backend),       OPT("out", 's', out),
    OPT("arch", 's', arch),             OPT("cache-dir", 's', cache_dir),
    OPT("save-tensors", 's', save_tensors), OPT("kernel", 's', kernel),
    OPT("set", 's', set),               OPT("block", 's', block),
    OPT("sort", 's', sort),             OPT("by", 's', by),
    OPT("baseline", 's', baseline),     OPT("format", 's', format),
    OPT("variant", 'm', only),          OPT("seed", 'I', seed),
    OPT("case", 'I', case_id),          OPT("emu-threads", 'i', emu_threads),
    OPT("kernel-timeout", 'd', kernel_timeout), OPT("max-gflop", 'd', max_gflop),
    OPT("all", 'f', all),               OPT("quick", 'f', quick),
    OPT("hot", 'f', hot),               OPT("min-samples", 'i', min_samples),
    OPT("max-samples", 'i', max_samples), OPT("max-noise", 'd', max_noise),
    OPT("min-time", 'd', min_time),     OPT("timeout", 'd', timeout),
    OPT("warmup", 'i', warmup),         OPT("save-samples", 'f', save_samples),
    OPT("jobs", 'i', jobs),             OPT("quiet", 'f', quiet),
    OPT("verbose", 'f', verbose),       OPT("log", 'f', log_scale),
    OPT("no-baseline", 'f', no_baseline),
};

static int parse_number(const char *opt, const char *text, double *out) {
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    if (errno || end == text || *end) {
        fprintf(stderr, "harness: --%s: '%s' is not a number\n", opt, text);
        return -1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, hn_cli *cli) {
    memset(cli, 0, sizeof *cli);
    cli->backend = "auto";
    cli->seed = -1;
    cli->case_id = -1;
    cli->kernel_timeout = -1;
    cli->max_gflop = -1;
    cli->min_samples = cli->max_samples = cli->warmup = -1;
    cli->max_noise = cli->min_time = cli->timeout = -1;
    cli->jobs = -1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || strcmp(a, "--") == 0) {
            if (cli->config) {
                fprintf(stderr, "harness: unexpected argument '%s'\n", a);
                return -1;
            }
            cli->config = a;
            continue;
        }
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const opt_def *o = NULL;
        for (size_t k = 0; k < HN_ARRAY_LEN(OPTS); k++)
            if (strlen(OPTS[k].name) == len && strncmp(OPTS[k].name, name, len) == 0) o = &OPTS[k];
        if (!o) {
            fprintf(stderr, "harness: unknown option '%.*s' (see harness --help)\n", (int)len + 2, a);
            return -1;
        }
        char *field = (char *)cli + o->offset;
        if (o->kind == 'f') {
            if (eq) {
                fprintf(stderr, "harness: --%s takes no value\n", o->name);
                return -1;
            }
            *(int *)field = 1;
            continue;
        }
        const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!val) {
            fprintf(stderr, "harness: --%s needs a value\n", o->name);
            return -1;
        }
        double d;
        switch (o->kind) {
        case 's': *(const char **)field = val; break;
        case 'm':
            if (cli->n_only == (int)HN_ARRAY_LEN(cli->only)) {
                fprintf(stderr, "harness: too many --%s options\n", o->name);
                return -1;
            }
            cli->only[cli->n_only++] = val;
            break;
        case 'i':
        case 'I':
            if (parse_number(o->name, val, &d) != 0) return -1;
            if (d != (double)(int64_t)d || d < 0) {
                fprintf(stderr, "harness: --%s: '%s' is not a whole number >= 0\n", o->name, val);
                return -1;
            }
            if (o->kind == 'i') *(int *)field = (int)d;
            else *(int64_t *)field = (int64_t)d;
            break;
        case 'd':
            if (parse_number(o->name, val, &d) != 0) return -1;
            if (d < 0) {
                fprintf(stderr, "harness: --%s: must be >= 0\n", o->name);
                return -1;
            }
            *(double *)field = d;
            break;
        }
    }
    if (cli->max_noise >= 0) cli->max_noise /= 100.0; /* given in percent */
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("harness %s\n", HN_VERSION);
        return 0;
    }
    hn_cli cli;
    if (parse_args(argc - 2, argv + 2, &cli) != 0) return 2;

    static const struct {
        const char *name;
        int (*fn)(const hn_cli *);
        int needs_file;
    } CMDS[] = {
        {"run", hn_cmd_run, 1},         {"list", hn_cmd_list, 1},
        {"compile", hn_cmd_compile, 1}, {"debug", hn_cmd_debug, 1},
        {"plot", hn_cmd_plot, 0},       {"compare", hn_cmd_compare, 1},
        {"bench", hn_cmd_bench, 0},     {"info", hn_cmd_info, 0},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(CMDS); i++) {
        if (strcmp(cmd, CMDS[i].name) != 0) continue;
        if (CMDS[i].needs_file && !cli.config) {
            fprintf(stderr, "harness %s: missing the %s file (harness %s FILE)\n", cmd,
                    strcmp(cmd, "compare") == 0 ? "results" : "config", cmd);
            return 2;
        }
        return CMDS[i].fn(&cli);
    }
    fprintf(stderr, "harness: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}
