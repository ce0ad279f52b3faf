/*
 * hn_test_files.h: scratch folders, fixtures and running the harness binary, for
 * the tests that need them. Include after hn_test.h; define HN_TEST_SCRATCH (the
 * scratch folder's stem, e.g. "plot") before including.
 *
 * The scratch folder is $HARNESS_TMP/<stem>.<pid>; hn_test_cleanup removes it
 * unless a check failed (it is kept to look at).
 */
#ifndef HN_TEST_FILES_H
#define HN_TEST_FILES_H

#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

extern char **environ;

static int hn_test_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* $HARNESS_TMP/<stem>.<pid>/<sub> (sub may be ""), created; caller frees. */
static inline char *hn_test_scratch(const char *sub) {
    const char *dir = getenv("HARNESS_TMP");
    char *d = xasprintf("%s/%s.%d/%s", dir ? dir : "/tmp", HN_TEST_SCRATCH, (int)getpid(), sub);
    hn_mkdirs(d, NULL);
    return d;
}

static inline void hn_test_cleanup(void) {
    const char *dir = getenv("HARNESS_TMP");
    char *d = xasprintf("%s/%s.%d", dir ? dir : "/tmp", HN_TEST_SCRATCH, (int)getpid());
    if (!hn_test_failures) nftw(d, hn_test_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(d);
}

/* tests/fixtures/<name> of the source tree; caller frees. */
static inline char *hn_test_fixture(const char *name) {
    const char *root = getenv("HARNESS_ROOT");
    return xasprintf("%s/tests/fixtures/%s", root ? root : ".", name);
}

/* Runs $HARNESS_BIN in folder cwd (NULL: here) with args (NULL-terminated);
 * stdout and stderr into *out and *errs (caller frees). Returns its exit status,
 * 128 when it was killed, -1 when it could not run. */
static inline int hn_test_run_harness(const char *cwd, const char *const *args, char **out, char **errs) {
    const char *bin = getenv("HARNESS_BIN");
    char *tmp = hn_test_scratch("io");
    char *po = xasprintf("%s/stdout", tmp), *pe = xasprintf("%s/stderr", tmp);
    const char *argv[32] = {bin};
    int n = 1;
    for (; args[n - 1] && n < 31; n++) argv[n] = args[n - 1];
    argv[n] = NULL;
    char here[4096];
    if (!getcwd(here, sizeof here)) here[0] = '\0';
    if (cwd && chdir(cwd) != 0) fprintf(stderr, "cannot enter %s\n", cwd);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int status = -1;
    if (bin && posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, environ) == 0 &&
        waitpid(pid, &status, 0) == pid)
        status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    posix_spawn_file_actions_destroy(&fa);
    if (cwd && chdir(here) != 0) fprintf(stderr, "cannot return to %s\n", here);
    size_t size;
    if (hn_read_file(po, out, &size, NULL) != 0) *out = xstrdup("");
    if (hn_read_file(pe, errs, &size, NULL) != 0) *errs = xstrdup("");
    free(po);
    free(pe);
    free(tmp);
    return status;
}

#endif
