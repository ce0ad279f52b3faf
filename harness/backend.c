/* backend.c: choosing a backend; see backend.h. */
#include "backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int hn_backend_create(const char *name, const hn_backend_opts *opts, int verbose,
                      hn_backend **out, hn_err *err) {
    *out = NULL;
    if (strcmp(name, "cuda") == 0) return hn_backend_cuda_create(opts, out, err);
    if (strcmp(name, "emu") == 0) return hn_backend_emu_create(opts, out, err);
    if (strcmp(name, "auto") != 0)
        return hn_errf(err, "unknown backend '%s' (expected cuda, emu or auto)", name);
    char why[sizeof err->msg];
    if (hn_cuda_available(why, sizeof why)) {
        if (hn_backend_cuda_create(opts, out, err) == 0) {
            if (verbose) fprintf(stderr, "harness: backend cuda (auto)\n");
            return 0;
        }
        memcpy(why, err->msg, sizeof why);
    }
    if (verbose) fprintf(stderr, "harness: backend emu (auto: %s)\n", why);
    return hn_backend_emu_create(opts, out, err);
}

void hn_backend_destroy(hn_backend *b) {
    if (b) b->ops->destroy(b);
}

void hn_san_findings_free(hn_san_findings *f) {
    if (!f) return;
    free(f->first);
    free(f->report);
    free(f->note);
    memset(f, 0, sizeof *f);
    f->first_class = -1;
}

int hn_san_parse(const char *list, unsigned *out, hn_err *err) {
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"race", HN_SAN_RACE}, {"mem", HN_SAN_MEM}, {"init", HN_SAN_INIT},
                 {"sync", HN_SAN_SYNC}, {"all", HN_SAN_ALL}};
    unsigned bits = 0;
    const char *p = list ? list : "";
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        unsigned bit = 0;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && strncmp(p, names[i].name, n) == 0) bit = names[i].bit;
        if (!bit) return hn_errf(err, "unknown check '%.*s' (expected race, mem, init, sync or all)", (int)n, p);
        bits |= bit;
        p = e ? e + 1 : p + n;
    }
    if (!bits) return hn_errf(err, "no check named (expected race, mem, init, sync or all)");
    *out = bits;
    return 0;
}

void hn_profile_free(hn_profile *p) {
    if (!p) return;
    for (int i = 0; i < p->n; i++) {
        free(p->rows[i].file);
        free(p->rows[i].func);
    }
    free(p->rows);
    free(p->kernel);
    memset(p, 0, sizeof *p);
}

int hn_cuda_available_isolated(char *why, size_t why_size) {
    int fd[2];
    if (why_size) why[0] = 0;
    if (pipe(fd) != 0) return 1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return 1;
    }
    if (pid == 0) {
        close(fd[0]);
        char msg[512];
        int ok = hn_cuda_available(msg, sizeof msg);
        if (!ok) {
            size_t len = strlen(msg), done = 0;
            while (done < len) {
                ssize_t w = write(fd[1], msg + done, len - done);
                if (w <= 0) break;
                done += (size_t)w;
            }
        }
        _exit(ok ? 0 : 1);
    }
    close(fd[1]);
    size_t got = 0;
    while (why_size && got + 1 < why_size) {
        ssize_t r = read(fd[0], why + got, why_size - 1 - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    if (why_size) why[got] = 0;
    close(fd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return 1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 1) {
        if (why_size && !got) snprintf(why, why_size, "no usable CUDA device");
        return 0;
    }
    return 1; /* 0, or the child crashed: let the backend say what it finds */
}
