/* cmd_stubs.c: subcommands not written yet (each says so and fails). */
#include <stdio.h>

#include "commands.h"

int hn_cmd_debug(const hn_cli *cli) {
    (void)cli;
    fprintf(stderr, "harness debug: not implemented yet\n");
    return 2;
}

int hn_cmd_plot(const hn_cli *cli) {
    (void)cli;
    fprintf(stderr, "harness plot: not implemented yet\n");
    return 2;
}

int hn_cmd_compare(const hn_cli *cli) {
    (void)cli;
    fprintf(stderr, "harness compare: not implemented yet\n");
    return 2;
}
