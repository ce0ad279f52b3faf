/*
 * commands.h: the subcommands. Each takes the parsed command line, prints its own
 * output and errors, and returns the process exit code (0 ok, 1 ran but something
 * failed, 2 bad usage or input and nothing ran).
 */
#ifndef HN_COMMANDS_H
#define HN_COMMANDS_H

#include "cli.h"

int hn_cmd_run(const hn_cli *cli);
int hn_cmd_list(const hn_cli *cli);
int hn_cmd_compile(const hn_cli *cli);
int hn_cmd_debug(const hn_cli *cli);
int hn_cmd_plot(const hn_cli *cli);
int hn_cmd_compare(const hn_cli *cli);
int hn_cmd_bench(const hn_cli *cli);
int hn_cmd_info(const hn_cli *cli);
int hn_cmd_cache(const hn_cli *cli);
int hn_cmd_tune(const hn_cli *cli);
int hn_cmd_train(const hn_cli *cli);
int hn_cmd_merge(const hn_cli *cli);
int hn_cmd_check(const hn_cli *cli);
int hn_cmd_profile(const hn_cli *cli);

#endif
