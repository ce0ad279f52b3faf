/* plot.c: placeholder until `harness plot` lands. */
#include <stdio.h>

#include "commands.h"

int hn_cmd_plot(const hn_cli *cli) {
    (void)cli;
    fprintf(stderr, "harness plot: not implemented yet\n");
    return 2;
}
