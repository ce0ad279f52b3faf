/* cmd_stubs.c: subcommands not written yet (each says so and fails). */
#include <stdio.h>

#include "commands.h"

int hn_cmd_debug(const hn_cli *cli) {
    (void)cli;
    fprintf(stderr, "harness debug: not implemented yet\n");
    return 2;
}
