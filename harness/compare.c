/* compare.c: placeholder until `harness compare` lands. */
#include <stdio.h>

#include "commands.h"

int hn_cmd_compare(const hn_cli *cli) {
    (void)cli;
    fprintf(stderr, "harness compare: not implemented yet\n");
    return 2;
}
