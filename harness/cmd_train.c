/*
 * cmd_train.c: `harness train xor | mnist | gradcheck`: options, then the
 * training loop over the modules of harness/train/ (docs/training.md).
 *
 *   xor        PMPP chapter 16's first example: Linear(2,16), ReLU,
 *              Linear(16,1), Sigmoid, MSE, Adam; ends as the seed does (final
 *              predictions and "Final loss: ...").
 *   mnist      the chapter's CNN on the IDX files of --data (MNIST or
 *              Fashion-MNIST): Conv 1->16 k3 p1, ReLU, MaxPool 2, Conv 16->32 k3
 *              p1, ReLU, MaxPool 2, Linear 1568->128, ReLU, Linear 128->10;
 *              softmax cross-entropy, Adam lr 1e-3, batch 64.
 *   gradcheck  every layer's and loss's backward against central finite
 *              differences in double precision (train/gradcheck.c).
 *
 * A step keeps everything on the device (the data set, the batch gather, the
 * running loss and accuracy) and synchronises only when it reports (every
 * --interval steps) and at the end of an epoch.
 *
 * Interrupts (interrupt.h, in-process mode: the kernels run here): the first
 * SIGINT or SIGTERM stops training at the end of the current step, writes the
 * curve's row for it, prints the time per layer so far and saves --save's
 * weights (no test pass, no final predictions); a second ends the process.
 *
 * Exit codes: 0 trained (or gradcheck passed), 1 a kernel failed, the loss
 * diverged (NaN) or gradcheck found a wrong gradient, 2 bad usage or input (a
 * missing, truncated or mismatched IDX file, a bad config, gradcheck's too,
 * geometry over the device's limits included, a weights file of another
 * model), 130 / 143 interrupted by SIGINT / SIGTERM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "commands.h"
#include "csv.h"
#include "interrupt.h"
#include "npy.h"
#include "train/gradcheck.h"
#include "train/idx.h"
#include "train/loss.h"
#include "train/model.h"
#include "train/optim.h"
#include "train/tkernels.h"

static const char *const CURVE_COLUMNS[] = {"split", "epoch", "step", "images", "loss", "accuracy", "images_per_s",
                                            "elapsed_s"};

typedef struct {
    const hn_cli *cli;
    hn_backend *be;
    hn_device_info dev;
    int is_emu;
    hn_tk *tk;
    hn_model *m;
    hn_loss loss;
    hn_optim opt;
    hn_csv *csv;
    char *csv_path;
    hn_prof data_prof;     /* the batch gather */
    int64_t steps_done;
    double t_start;
    hn_interrupt_saved handlers;
    int interrupted;       /* an interrupt ended training early */
    int run_failed;        /* the run itself failed (a loss that is not a number): exit 1 */
} trainer;

/* ---------------------------------------------------------------------- */
/* setup shared by xor and mnist */

static int open_backend(trainer *t, hn_err *err) {
    const hn_cli *cli = t->cli;
    hn_backend_opts bo = {.emu_threads = cli->emu_threads > 0 ? cli->emu_threads : 0,
                          .kernel_timeout = cli->kernel_timeout >= 0 ? cli->kernel_timeout : 60};
    if (hn_backend_create(cli->backend, &bo, !cli->quiet, &t->be, err) != 0) return -1;
    t->be->ops->device_info(t->be, &t->dev);
    t->is_emu = strcmp(t->be->ops->name, "emu") == 0;
    if (cli->n_tuned > 1)
        return hn_errf(err, "--tuned given twice ('%s' and '%s'): train takes the tune of one kernel", cli->tuned[0],
                       cli->tuned[1]);
    char *path = cli->kernels ? xstrdup(cli->kernels) : hn_tk_default_path();
    int rc = hn_tk_load(path, cli->n_tuned ? cli->tuned[0] : NULL, &t->tk, err);
    free(path);
    if (rc != 0) return -1;
    char *cache = cli->cache_dir ? xstrdup(cli->cache_dir) : hn_default_cache_dir();
    hn_tk_set_backend(t->tk, t->be, t->is_emu ? NULL : t->dev.arch, cache, cli->verbose);
    free(cache);
    return 0;
}

static void close_trainer(trainer *t) {
    hn_interrupt_restore(&t->handlers);
    hn_loss_free(&t->loss);
    hn_optim_free(&t->opt);
    for (int i = 0; i < 2; i++)
        if (t->data_prof.ev[i]) t->be->ops->event_destroy(t->be, t->data_prof.ev[i]);
    hn_model_destroy(t->m);
    hn_tk_destroy(t->tk);
    hn_csv_close(t->csv);
    free(t->csv_path);
    hn_backend_destroy(t->be);
}

static int open_curve(trainer *t, const char *task, hn_err *err) {
    t->csv_path = t->cli->out ? xstrdup(t->cli->out) : xasprintf("results/train_%s.csv", task);
    char *dir = hn_dirname(t->csv_path);
    int rc = hn_mkdirs(dir, err);
    free(dir);
    if (rc != 0) return -1;
    return hn_csv_open(t->csv_path, CURVE_COLUMNS, (int)HN_ARRAY_LEN(CURVE_COLUMNS), &t->csv, err);
}

static int curve_row(trainer *t, const char *split, int epoch, int64_t step, int64_t images, double loss, double acc,
                     double ips, hn_err *err) {
    hn_csv_set(t->csv, 0, split);
    hn_csv_setf(t->csv, 1, "%d", epoch);
    hn_csv_setf(t->csv, 2, "%lld", (long long)step);
    hn_csv_setf(t->csv, 3, "%lld", (long long)images);
    hn_csv_setf(t->csv, 4, "%.9g", loss);
    hn_csv_setf(t->csv, 5, "%.6f", acc);
    if (ips > 0) hn_csv_setf(t->csv, 6, "%.1f", ips);
    hn_csv_setf(t->csv, 7, "%.3f", hn_now() - t->t_start);
    return hn_csv_write_row(t->csv, err);
}

static int make_optimizer(trainer *t, double default_lr, hn_err *err) {
    const hn_cli *cli = t->cli;
    hn_optim_kind kind = HN_OPT_ADAM;
    if (cli->optimizer) { /* PyTorch's class names (SGD, Adam) too */
        if (strcasecmp(cli->optimizer, "sgd") == 0) kind = HN_OPT_SGD;
        else if (strcasecmp(cli->optimizer, "adam") != 0)
            return hn_errf(err, "--optimizer: '%s' is not one of sgd, adam", cli->optimizer);
    }
    if (kind == HN_OPT_ADAM && cli->momentum >= 0)
        return hn_errf(err, "--momentum is SGD's (--optimizer sgd); Adam's betas are 0.9 and 0.999");
    if (cli->momentum >= 1) return hn_errf(err, "--momentum %g: must be below 1 (the velocity would grow without bound)", cli->momentum);
    if (hn_optim_init(&t->opt, t->m, kind, cli->lr >= 0 ? cli->lr : default_lr, err) != 0) return -1;
    if (kind == HN_OPT_SGD && cli->momentum >= 0) hn_optim_set_momentum(&t->opt, cli->momentum);
    return 0;
}

static int load_or_init(trainer *t, uint64_t seed, hn_err *err) {
    if (t->cli->load) return hn_model_load(t->m, t->cli->load, err);
    return hn_model_init(t->m, seed, err);
}

static void print_model(const trainer *t, FILE *f) {
    fprintf(f, "Model (%lld parameters):", (long long)t->m->n_params);
    for (int i = 0; i < t->m->n_layers; i++) {
        char d[64];
        hn_layer_describe(&t->m->layers[i], d, sizeof d);
        fprintf(f, "%s%s", i ? ", " : " ", d);
    }
    fprintf(f, "\n");
}

/* One training step on a batch already in m->x and the loss's target. */
static int step(trainer *t, int batch, hn_err *err) {
    if (hn_model_forward(t->m, batch, err) != 0 || hn_loss_forward(&t->loss, batch, err) != 0 ||
        hn_model_backward(t->m, batch, err) != 0)
        return -1;
    return 0;
}

static int collect_profile(trainer *t, hn_err *err) {
    hn_backend *be = t->be;
    if (hn_model_collect_profile(t->m, err) != 0) return -1;
    hn_prof *ps[3] = {&t->loss.prof, &t->opt.prof, &t->data_prof};
    for (int i = 0; i < 3; i++) {
        if (!ps[i]->pending_fwd) continue;
        float ms;
        if (be->ops->event_elapsed(be, ps[i]->ev[0], ps[i]->ev[1], &ms, err) != 0) return -1;
        ps[i]->fwd_ms += ms;
        ps[i]->fwd_n++;
        ps[i]->pending_fwd = 0;
    }
    return 0;
}

/* Where the time went, per step of the profiled steps. */
static void print_profile(const trainer *t, int64_t steps_per_epoch) {
    const hn_model *m = t->m;
    double total = 0;
    for (int i = 0; i < m->n_layers; i++) {
        const hn_prof *p = &m->layers[i].prof;
        if (p->fwd_n) total += p->fwd_ms / p->fwd_n;
        if (p->bwd_n) total += p->bwd_ms / p->bwd_n;
    }
    const hn_prof *extra[3] = {&t->data_prof, &t->loss.prof, &t->opt.prof};
    const char *names[3] = {"data (batch gather)", "loss (+ running stats)", "optimizer"};
    for (int i = 0; i < 3; i++)
        if (extra[i]->fwd_n) total += extra[i]->fwd_ms / extra[i]->fwd_n;
    if (total <= 0) return;
    int64_t profiled = m->layers[0].prof.fwd_n;
    printf("\nWhere the time went (ms per step, mean of %lld profiled step%s%s):\n", (long long)profiled,
           profiled == 1 ? "" : "s", t->is_emu ? "; emulator wall time, not GPU speed" : "");
    printf("  %-26s %10s %10s %7s\n", "layer", "forward", "backward", "share");
    if (t->data_prof.fwd_n) {
        double f = t->data_prof.fwd_ms / t->data_prof.fwd_n;
        printf("  %-26s %10.4f %10s %6.1f%%\n", names[0], f, "", 100 * f / total);
    }
    for (int i = 0; i < m->n_layers; i++) {
        const hn_layer *l = &m->layers[i];
        if (l->kind == HN_L_FLATTEN) continue;
        char d[64];
        hn_layer_describe(l, d, sizeof d);
        double f = l->prof.fwd_n ? l->prof.fwd_ms / l->prof.fwd_n : 0;
        double b = l->prof.bwd_n ? l->prof.bwd_ms / l->prof.bwd_n : 0;
        printf("  %-26s %10.4f %10.4f %6.1f%%\n", d, f, b, 100 * (f + b) / total);
    }
    for (int i = 1; i < 3; i++)
        if (extra[i]->fwd_n) {
            double f = extra[i]->fwd_ms / extra[i]->fwd_n;
            printf("  %-26s %10.4f %10s %6.1f%%\n", names[i], f, "", 100 * f / total);
        }
    printf("  %-26s %10.4f ms per step, %.3f s per epoch of %lld steps\n", "total", total,
           total * steps_per_epoch / 1000.0, (long long)steps_per_epoch);
}

/* Training that an interrupt stopped after the step just run (at `where`):
 * where the time went so far, the curve, --save's weights. */
static int end_interrupted(trainer *t, const char *where, double loss, int64_t steps_per_epoch, hn_err *err) {
    const hn_cli *cli = t->cli;
    printf("Interrupted at %s: training stopped after step %lld (%.2f s), loss %.6f\n", where,
           (long long)t->steps_done, hn_now() - t->t_start, loss);
    if (!cli->quiet) {
        print_profile(t, steps_per_epoch);
        printf("Loss curve so far: %s\n", t->csv_path);
    }
    if (cli->save) {
        if (hn_model_save(t->m, cli->save, err) != 0) return -1;
        if (!cli->quiet)
            printf("Weights: %s (--load %s goes on from them; the optimizer's state starts afresh)\n", cli->save,
                   cli->save);
    }
    fflush(stdout);
    return 0;
}

/* --save-tensors: every layer's tensors and the loss's, for the step just run
 * (before the optimizer changes the weights). */
static int save_tensors(trainer *t, int batch, hn_err *err) {
    const char *dir = t->cli->save_tensors;
    if (hn_mkdirs(dir, err) != 0) return -1;
    char *mpath = xasprintf("%s/layers.json", dir);
    FILE *f = fopen(mpath, "w");
    if (!f) {
        hn_errf(err, "--save-tensors: cannot write %s", mpath);
        free(mpath);
        return -1;
    }
    fprintf(f, "{\n  \"batch\": %d,\n  \"layers\": [\n", batch);
    int rc = hn_model_save_tensors(t->m, batch, dir, f, err);
    if (rc == 0) {
        hn_model *m = t->m;
        int64_t shape[2] = {batch, m->out_per};
        float *out = xcalloc((size_t)batch * m->out_per, sizeof *out);
        float *dout = xcalloc((size_t)batch * m->out_per, sizeof *dout);
        int32_t *labels = xcalloc((size_t)batch, sizeof *labels);
        float loss = 0;
        int xent = t->loss.kind == HN_LOSS_XENT;
        char *p1 = xasprintf("%s/loss.%s.npy", dir, xent ? "logits" : "pred");
        char *p2 = xasprintf("%s/loss.%s.npy", dir, xent ? "labels" : "target");
        char *p3 = xasprintf("%s/loss.loss.npy", dir);
        char *p4 = xasprintf("%s/loss.%s.npy", dir, xent ? "dlogits" : "dpred");
        size_t nb = (size_t)batch * m->out_per * sizeof(float);
        int64_t one = 1;
        rc = t->be->ops->download(t->be, out, hn_model_output(m), nb, err);
        if (rc == 0) rc = t->be->ops->download(t->be, dout, m->dout, nb, err);
        if (rc == 0) rc = hn_loss_value(&t->loss, &loss, err);
        if (rc == 0 && xent) rc = t->be->ops->download(t->be, labels, t->loss.target, (size_t)batch * 4, err);
        if (rc == 0) rc = hn_npy_write(p1, "<f4", shape, 2, out, 4, err);
        if (rc == 0 && xent) rc = hn_npy_write(p2, "<i4", shape, 1, labels, 4, err);
        if (rc == 0 && !xent) {
            float *target = xcalloc((size_t)batch * m->out_per, sizeof *target);
            rc = t->be->ops->download(t->be, target, t->loss.target, nb, err);
            if (rc == 0) rc = hn_npy_write(p2, "<f4", shape, 2, target, 4, err);
            free(target);
        }
        if (rc == 0) rc = hn_npy_write(p3, "<f4", &one, 1, &loss, 4, err);
        if (rc == 0) rc = hn_npy_write(p4, "<f4", shape, 2, dout, 4, err);
        fprintf(f, "\n  ],\n  \"loss\": {\"type\": \"%s\", \"files\": {\"%s\": \"loss.%s.npy\", \"%s\": \"loss.%s.npy\", "
                   "\"loss\": \"loss.loss.npy\", \"%s\": \"loss.%s.npy\"}}\n}\n",
                xent ? "cross_entropy" : "mse", xent ? "logits" : "pred", xent ? "logits" : "pred",
                xent ? "labels" : "target", xent ? "labels" : "target", xent ? "dlogits" : "dpred",
                xent ? "dlogits" : "dpred");
        free(p1);
        free(p2);
        free(p3);
        free(p4);
        free(out);
        free(dout);
        free(labels);
    }
    if (fclose(f) != 0 && rc == 0) rc = hn_errf(err, "--save-tensors: cannot write %s", mpath);
    if (rc == 0 && !t->cli->quiet) printf("Saved the first step's tensors in %s (layers.json lists them)\n", dir);
    free(mpath);
    return rc;
}

/* "SGD (momentum 0.9)", "SGD (no momentum)" */
static const char *sgd_text(const trainer *t) {
    static char buf[48];
    if (t->opt.momentum == 0) return "SGD (no momentum)";
    snprintf(buf, sizeof buf, "SGD (momentum %g)", t->opt.momentum);
    return buf;
}

static const char *nan_text(double x) { return isnan(x) ? "NaN" : x > 0 ? "infinite" : "-infinite"; }

/* The running loss is not a number: training has diverged, and every later step
 * would only print NaN. Stops with exit 1 (the curve has the row); no test pass,
 * and --save's weights, which are NaN now, are not written. */
static int diverged(trainer *t, const char *where, double loss, hn_err *err) {
    const hn_cli *cli = t->cli;
    t->run_failed = 1;
    return hn_errf(err, "training diverged at %s: the running loss is %s. The learning rate (%s %g) is "
                        "too high for this model, or a kernel of the training config writes garbage (harness train "
                        "gradcheck --kernels ... checks them); nothing more was run%s",
                   where, nan_text(loss), t->opt.kind == HN_OPT_ADAM ? "Adam" : "SGD",
                   t->opt.lr, cli->save ? ", and --save's weights were not written" : "");
}

/* ---------------------------------------------------------------------- */
/* xor */

static int train_xor(trainer *t, hn_err *err) {
    const hn_cli *cli = t->cli;
    static const float X[4][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
    static const float Y[4] = {0, 1, 1, 0};
    int epochs = cli->epochs >= 0 ? cli->epochs : 1000;
    int batch = cli->batch > 0 && cli->batch < 4 ? cli->batch : 4; /* past the 4 samples: one step of all */
    int interval = cli->interval > 0 ? cli->interval : 100;
    uint64_t seed = cli->seed >= 0 ? (uint64_t)cli->seed : 42;
    int in_dims[1] = {2};
    t->m = hn_model_create(t->be, t->tk, 1, in_dims);
    hn_model_add_linear(t->m, 2, 16);
    hn_model_add_relu(t->m);
    hn_model_add_linear(t->m, 16, 1);
    hn_model_add_sigmoid(t->m);
    t->m->input_grad = cli->save_tensors != NULL; /* the first layer's dx too, for the saved tensors */
    if (hn_model_finish(t->m, 4, err) != 0 || load_or_init(t, seed, err) != 0 ||
        hn_loss_init(&t->loss, t->m, HN_LOSS_MSE, err) != 0 || make_optimizer(t, 0.01, err) != 0 ||
        open_curve(t, "xor", err) != 0)
        return -1;
    hn_backend *be = t->be;
    if (!cli->quiet) {
        print_model(t, stdout);
        printf("Kernels (%s):\n", cli->kernels ? cli->kernels : "configs/train/default.json");
        hn_tk_describe(t->tk, stdout);
        char bnote[96] = "";
        if (cli->batch > 4)
            snprintf(bnote, sizeof bnote, " (--batch %d is more than the 4 samples: one step takes them all)",
                     cli->batch);
        printf("Running XOR on %s (%s), %s lr %g, seed %llu, batch %d%s\nStarting training...\n", t->dev.name,
               be->ops->name, t->opt.kind == HN_OPT_ADAM ? "Adam" : sgd_text(t), t->opt.lr, (unsigned long long)seed,
               batch, bnote);
    }
    hn_interrupt_install(&t->handlers, HN_INTERRUPT_IN_PROCESS);
    t->t_start = hn_now();
    int profile_all = t->is_emu, stop_epoch = 0;
    double last_loss = NAN;
    for (int e = 1; e <= epochs && !t->interrupted; e++) {
        if (hn_loss_reset(&t->loss, err) != 0) return -1;
        for (int b0 = 0; b0 < 4 && !t->interrupted; b0 += batch) {
            int nb = b0 + batch <= 4 ? batch : 4 - b0;
            if (be->ops->upload(be, t->m->x, X[b0], (size_t)nb * 2 * sizeof(float), err) != 0 ||
                be->ops->upload(be, t->loss.target, &Y[b0], (size_t)nb * sizeof(float), err) != 0)
                return -1;
            t->m->profile = profile_all;
            if (step(t, nb, err) != 0) return -1;
            if (!t->steps_done && cli->save_tensors && save_tensors(t, nb, err) != 0) return -1;
            if (hn_optim_step(&t->opt, err) != 0) return -1;
            t->steps_done++;
            if (profile_all && collect_profile(t, err) != 0) return -1;
            t->interrupted = hn_interrupted(); /* checked once a step is whole */
        }
        if (e % interval == 0 || e == epochs || t->interrupted) {
            double st[3];
            if (hn_loss_read(&t->loss, st, err) != 0) return -1;
            double loss = st[0] / st[2], acc = st[1] / st[2];
            last_loss = loss;
            stop_epoch = e;
            if (!cli->quiet) printf("Epoch [%d/%d], Loss: %.6f\n", e, epochs, loss);
            if (curve_row(t, "train", e, t->steps_done, t->steps_done * 4, loss, acc, 0, err) != 0) return -1;
            if (!isfinite(loss)) {
                char where[64];
                snprintf(where, sizeof where, "epoch %d/%d (step %lld)", e, epochs, (long long)t->steps_done);
                return diverged(t, where, loss, err);
            }
        }
    }
    if (t->interrupted) {
        char where[64];
        snprintf(where, sizeof where, "epoch %d/%d", stop_epoch, epochs);
        return end_interrupted(t, where, last_loss, 1, err);
    }
    double train_s = hn_now() - t->t_start;
    /* final predictions and loss, from a forward pass of all four */
    if (be->ops->upload(be, t->m->x, X, sizeof X, err) != 0 ||
        be->ops->upload(be, t->loss.target, Y, sizeof Y, err) != 0 || hn_model_forward(t->m, 4, err) != 0 ||
        hn_loss_forward(&t->loss, 4, err) != 0)
        return -1;
    float pred[4], loss;
    if (be->ops->download(be, pred, hn_model_output(t->m), sizeof pred, err) != 0 ||
        hn_loss_value(&t->loss, &loss, err) != 0)
        return -1;
    if (!isfinite(loss)) {
        t->run_failed = 1;
        return hn_errf(err, "the final loss is %s: the model's output is not a number (%s)", nan_text(loss),
                       cli->load && !epochs ? "--load's weights are too large: the output overflowed"
                                            : "the weights overflowed");
    }
    printf("Final predictions:\nInput => Output (Expected)\n");
    for (int i = 0; i < 4; i++) printf("[%.1f, %.1f] => %.4f (%.1f)\n", X[i][0], X[i][1], pred[i], Y[i]);
    printf("Training complete! %d epochs in %.2f s (%.3f ms per epoch)\n", epochs, train_s,
           epochs ? 1000 * train_s / epochs : 0);
    printf("Final loss: %.16g\n", (double)loss);
    if (!cli->quiet) {
        print_profile(t, 1);
        printf("Loss curve: %s\n", t->csv_path);
    }
    if (cli->save) {
        if (hn_model_save(t->m, cli->save, err) != 0) return -1;
        if (!cli->quiet) printf("Weights: %s\n", cli->save);
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* mnist */

typedef struct {
    int n, rows, cols;
    hn_dptr images, labels, order; /* (n, rows * cols) bytes, (n) bytes, (n) int32 */
} dev_set;

static int upload_set(hn_backend *be, const hn_idx_set *s, int limit, dev_set *d, hn_err *err) {
    memset(d, 0, sizeof *d);
    d->n = s->images.dims[0];
    if (limit > 0 && limit < d->n) d->n = limit;
    d->rows = s->images.dims[1];
    d->cols = s->images.dims[2];
    size_t pix = (size_t)d->rows * d->cols;
    if (be->ops->alloc(be, (size_t)d->n * pix, &d->images, err) != 0 ||
        be->ops->alloc(be, (size_t)d->n, &d->labels, err) != 0 ||
        be->ops->alloc(be, (size_t)d->n * sizeof(int32_t), &d->order, err) != 0 ||
        be->ops->upload(be, d->images, s->images.data, (size_t)d->n * pix, err) != 0 ||
        be->ops->upload(be, d->labels, s->labels.data, (size_t)d->n, err) != 0)
        return hn_err_prefix(err, "uploading the data set");
    int32_t *order = xmalloc((size_t)d->n * sizeof *order);
    for (int i = 0; i < d->n; i++) order[i] = i;
    int rc = be->ops->upload(be, d->order, order, (size_t)d->n * sizeof *order, err);
    free(order);
    return rc;
}

static void free_set(hn_backend *be, dev_set *d) {
    if (d->images) be->ops->free(be, d->images);
    if (d->labels) be->ops->free(be, d->labels);
    if (d->order) be->ops->free(be, d->order);
    memset(d, 0, sizeof *d);
}

static int gather(trainer *t, const dev_set *d, int offset, int batch, double mean, double inv_std, hn_err *err) {
    hn_backend *be = t->be;
    hn_tk_val v[] = {HN_TK_BUF("images", d->images), HN_TK_BUF("labels_all", d->labels), HN_TK_BUF("order", d->order),
                     HN_TK_BUF("x", t->m->x),        HN_TK_BUF("labels", t->loss.target), HN_TK_INT("batch", batch),
                     HN_TK_INT("offset", offset),    HN_TK_INT("pixels", d->rows * d->cols), HN_TK_FLT("mean", mean),
                     HN_TK_FLT("inv_std", inv_std)};
    hn_tk_call call;
    if (hn_tk_bind(t->tk, "data.gather", v, (int)HN_ARRAY_LEN(v), &call, err) != 0) return -1;
    int prof = t->m->profile;
    if (prof && be->ops->event_record(be, t->data_prof.ev[0], err) != 0) return -1;
    if (hn_tk_launch(be, &call, err) != 0) return -1;
    if (prof) {
        if (be->ops->event_record(be, t->data_prof.ev[1], err) != 0) return -1;
        t->data_prof.pending_fwd = 1;
    }
    return 0;
}

/* Accuracy and loss over a whole set, forward only; an interrupt stops it after
 * the batch in progress (t->interrupted, st counting the images evaluated). */
static int evaluate(trainer *t, const dev_set *d, int batch, double mean, double inv_std, double st[3], hn_err *err) {
    t->m->profile = 0;
    if (hn_loss_reset(&t->loss, err) != 0) return -1;
    for (int off = 0; off < d->n && !t->interrupted; off += batch) {
        int nb = off + batch <= d->n ? batch : d->n - off;
        if (gather(t, d, off, nb, mean, inv_std, err) != 0 || hn_model_forward(t->m, nb, err) != 0 ||
            hn_loss_forward(&t->loss, nb, err) != 0)
            return -1;
        t->interrupted = hn_interrupted();
    }
    return hn_loss_read(&t->loss, st, err);
}

static int train_mnist(trainer *t, int *input_error, hn_err *err) {
    const hn_cli *cli = t->cli;
    hn_backend *be = t->be;
    if (!cli->data) {
        *input_error = 1;
        return hn_errf(err, "train mnist needs --data DIR (the folder of the four IDX files, e.g. "
                            "/usr/share/datasets/fashion-mnist from Debian's dataset-fashion-mnist)");
    }
    int epochs = cli->epochs >= 0 ? cli->epochs : 3;
    int batch = cli->batch > 0 ? cli->batch : 64;
    uint64_t seed = cli->seed >= 0 ? (uint64_t)cli->seed : 42;
    hn_idx_set train = {0}, test = {0};
    dev_set dtrain = {0}, dtest = {0};
    int rc = -1;
    const char *norm_from = NULL; /* the --load file the normalisation comes from */
    double t0 = hn_now();
    if (hn_idx_set_load(cli->data, "train", 10, &train, err) != 0 || hn_idx_set_load(cli->data, "t10k", 10, &test, err) != 0) {
        *input_error = 1;
        goto done;
    }
    if (train.images.dims[1] != test.images.dims[1] || train.images.dims[2] != test.images.dims[2]) {
        *input_error = 1;
        hn_errf(err, "%s holds %dx%d images but %s holds %dx%d", train.images_path, train.images.dims[1],
                train.images.dims[2], test.images_path, test.images.dims[1], test.images.dims[2]);
        goto done;
    }
    int rows = train.images.dims[1], cols = train.images.dims[2];
    if (rows < 4 || cols < 4) {
        *input_error = 1;
        hn_errf(err, "%s: %dx%d images are too small for two 2x2 poolings", train.images_path, rows, cols);
        goto done;
    }
    /* a batch past the training data is the whole set in one step: the
     * activations are allocated for the batch, and a --batch of millions would ask
     * for gigabytes to hold 100 images; the test set is evaluated in batches of
     * the batch asked for, as many as it has */
    int n_train = cli->limit > 0 && cli->limit < train.images.dims[0] ? cli->limit : train.images.dims[0];
    int n_test = cli->test_limit > 0 && cli->test_limit < test.images.dims[0] ? cli->test_limit : test.images.dims[0];
    int asked_batch = batch;
    int eval_batch = batch < n_test ? batch : n_test;
    if (batch > n_train) batch = n_train;
    /* the model: the chapter's CNN */
    int in_dims[3] = {1, rows, cols};
    t->m = hn_model_create(be, t->tk, 3, in_dims);
    hn_model_add_conv2d(t->m, 1, 16, 3, 1);
    hn_model_add_relu(t->m);
    hn_model_add_maxpool2d(t->m, 2);
    hn_model_add_conv2d(t->m, 16, 32, 3, 1);
    hn_model_add_relu(t->m);
    hn_model_add_maxpool2d(t->m, 2);
    hn_model_add_flatten(t->m);
    hn_model_add_linear(t->m, 32 * (rows / 4) * (cols / 4), 128);
    hn_model_add_relu(t->m);
    hn_model_add_linear(t->m, 128, 10);
    t->m->input_grad = cli->save_tensors != NULL; /* the first layer's dx too, for the saved tensors */
    if (hn_model_finish(t->m, batch > eval_batch ? batch : eval_batch, err) != 0 ||
        hn_loss_init(&t->loss, t->m, HN_LOSS_XENT, err) != 0 ||
        make_optimizer(t, 1e-3, err) != 0 || hn_tk_prepare(t->tk, "data.gather", err) != 0 ||
        be->ops->event_create(be, &t->data_prof.ev[0], err) != 0 ||
        be->ops->event_create(be, &t->data_prof.ev[1], err) != 0)
        goto done;
    if (load_or_init(t, seed, err) != 0) {
        *input_error = cli->load != NULL;
        goto done;
    }
    if (upload_set(be, &train, cli->limit, &dtrain, err) != 0 || upload_set(be, &test, cli->test_limit, &dtest, err) != 0)
        goto done;
    /* normalisation, x = (p / 255 - mean) / std: --load's where its file has it
     * (the weights were trained on those inputs, whatever --limit this run
     * takes), else from the training images used; saved with the weights */
    if (!t->m->has_norm) {
        double sum = 0, sq = 0;
        size_t npix = (size_t)dtrain.n * rows * cols;
        for (size_t i = 0; i < npix; i++) {
            double v = train.images.data[i] / 255.0;
            sum += v;
            sq += v * v;
        }
        t->m->norm_mean = sum / (double)npix;
        t->m->norm_std = sqrt(fmax(sq / (double)npix - t->m->norm_mean * t->m->norm_mean, 1e-12));
        t->m->has_norm = 1;
    } else {
        norm_from = cli->load;
    }
    double mean = t->m->norm_mean, sd = t->m->norm_std, inv_std = 1.0 / sd;
    if (open_curve(t, "mnist", err) != 0) goto done;
    int64_t steps = (dtrain.n + batch - 1) / batch;
    int interval = cli->interval > 0 ? cli->interval : (int)(steps / 5 > 0 ? steps / 5 : 1);
    if (!cli->quiet) {
        print_model(t, stdout);
        printf("Kernels (%s):\n", cli->kernels ? cli->kernels : "configs/train/default.json");
        hn_tk_describe(t->tk, stdout);
        printf("Data: %s: %d training images (of %d), %d test images (of %d), %dx%d; mean %.4f, std %.4f%s%s%s; "
               "loaded in %.2f s\n",
               cli->data, dtrain.n, train.images.dims[0], dtest.n, test.images.dims[0], rows, cols, mean, sd,
               norm_from ? " (from " : "", norm_from ? norm_from : "", norm_from ? ", as trained)" : "", hn_now() - t0);
        printf("Files: %s, %s, %s, %s\n", train.images_path, train.labels_path, test.images_path, test.labels_path);
        const char *others[4] = {train.images_other, train.labels_other, test.images_other, test.labels_other};
        const char *picks[4] = {train.images_path, train.labels_path, test.images_path, test.labels_path};
        for (int i = 0; i < 4; i++) { /* an unpacked copy next to its .gz (torchvision's raw/) is no news */
            size_t n = strlen(picks[i]);
            if (others[i] && !(strncmp(others[i], picks[i], n) == 0 && strcmp(others[i] + n, ".gz") == 0))
                printf("  (also there, not read: %s)\n", others[i]);
        }
        char bnote[96] = "";
        if (asked_batch != batch)
            snprintf(bnote, sizeof bnote, " (%s %d is more than the %d image%s: one step takes %s)",
                     cli->batch > 0 ? "--batch" : "the default batch", asked_batch, n_train, n_train == 1 ? "" : "s",
                     n_train == 1 ? "it" : "them all");
        int64_t last = dtrain.n - (steps - 1) * (int64_t)batch;
        char pnote[96] = "";
        if (last != batch)
            snprintf(pnote, sizeof pnote, " (the last of %lld image%s)", (long long)last, last == 1 ? "" : "s");
        if (epochs == 0) { /* --load's model evaluated, or the initial one */
            if (asked_batch != eval_batch)
                snprintf(bnote, sizeof bnote, " (%s %d is more than the %d test image%s)",
                         cli->batch > 0 ? "--batch" : "the default batch", asked_batch, n_test, n_test == 1 ? "" : "s");
            printf("Evaluating on %s (%s), no training (--epochs 0): %s, batch %d%s\n", t->dev.name, be->ops->name,
                   cli->load ? cli->load : "the initial weights", eval_batch, asked_batch != eval_batch ? bnote : "");
        } else
            printf("Training on %s (%s): %d epoch%s of %lld step%s%s, batch %d%s, %s lr %g, seed %llu\nStarting "
                   "training...\n",
                   t->dev.name, be->ops->name, epochs, epochs == 1 ? "" : "s", (long long)steps, steps == 1 ? "" : "s",
                   pnote, batch, bnote, t->opt.kind == HN_OPT_ADAM ? "Adam" : sgd_text(t), t->opt.lr,
                   (unsigned long long)seed);
        fflush(stdout);
    }
    hn_interrupt_install(&t->handlers, HN_INTERRUPT_IN_PROCESS);
    t->t_start = hn_now();
    double *epoch_s = xcalloc((size_t)epochs + 1, sizeof *epoch_s);
    int32_t *order = xmalloc((size_t)dtrain.n * sizeof *order);
    uint64_t rng = seed ^ 0x5eed5eed5eedULL;
    char where[96] = "";
    double last_loss = NAN;
    for (int e = 1; e <= epochs && !t->interrupted; e++) {
        /* a new shuffle per epoch, on the host, uploaded once */
        for (int i = 0; i < dtrain.n; i++) order[i] = i;
        for (int i = dtrain.n - 1; i > 0; i--) {
            int j = (int)hn_rand_below(&rng, (uint64_t)i + 1);
            int32_t tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
        }
        if (be->ops->upload(be, dtrain.order, order, (size_t)dtrain.n * sizeof *order, err) != 0 ||
            hn_loss_reset(&t->loss, err) != 0 || be->ops->sync(be, err) != 0)
            goto epochs_done;
        double te = hn_now(), ti = te;
        int64_t imgs_interval = 0;
        double st[3] = {0, 0, 0};
        for (int64_t s = 0; s < steps && !t->interrupted; s++) {
            int off = (int)(s * batch), nb = off + batch <= dtrain.n ? batch : dtrain.n - off;
            int report = (s + 1) % interval == 0 || s + 1 == steps;
            t->m->profile = t->is_emu || report;
            if (gather(t, &dtrain, off, nb, mean, inv_std, err) != 0 || step(t, nb, err) != 0) goto epochs_done;
            if (!t->steps_done && cli->save_tensors && save_tensors(t, nb, err) != 0) goto epochs_done;
            if (hn_optim_step(&t->opt, err) != 0) goto epochs_done;
            t->steps_done++;
            imgs_interval += nb;
            t->interrupted = hn_interrupted(); /* checked once a step is whole; its row is written */
            if (t->interrupted)
                snprintf(where, sizeof where, "epoch %d/%d, step %lld/%lld", e, epochs, (long long)(s + 1),
                         (long long)steps);
            if (report || t->interrupted) {
                if (hn_loss_read(&t->loss, st, err) != 0) goto epochs_done;
                last_loss = st[0] / st[2];
                double now = hn_now(), ips = imgs_interval / (now - ti);
                ti = now;
                imgs_interval = 0;
                if (!cli->quiet) {
                    printf("Epoch [%d/%d], Step [%lld/%lld], Loss: %.4f, Accuracy: %.2f%%, %.0f images/s\n", e, epochs,
                           (long long)(s + 1), (long long)steps, st[0] / st[2], 100 * st[1] / st[2], ips);
                    fflush(stdout);
                }
                if (curve_row(t, "train", e, t->steps_done, (int64_t)(e - 1) * dtrain.n + off + nb, st[0] / st[2],
                              st[1] / st[2], ips, err) != 0)
                    goto epochs_done;
                if (!isfinite(last_loss)) {
                    char at[96];
                    snprintf(at, sizeof at, "epoch %d/%d, step %lld/%lld", e, epochs, (long long)(s + 1), (long long)steps);
                    diverged(t, at, last_loss, err);
                    goto epochs_done;
                }
            }
            if (t->m->profile && collect_profile(t, err) != 0) goto epochs_done;
        }
        if (t->interrupted) break;
        if (be->ops->sync(be, err) != 0) goto epochs_done;
        epoch_s[e] = hn_now() - te;
        if (!cli->quiet)
            printf("Epoch [%d/%d] completed in %.2f s (%.0f images/s), Loss: %.4f, Accuracy: %.2f%%\n", e, epochs,
                   epoch_s[e], dtrain.n / epoch_s[e], st[0] / st[2], 100 * st[1] / st[2]);
    }
    if (t->interrupted) { /* no test pass: it takes a while, and the stop was asked for */
        if (end_interrupted(t, where, last_loss, steps, err) != 0) goto epochs_done;
    } else {
        double st[3];
        double tt = hn_now();
        if (evaluate(t, &dtest, eval_batch, mean, inv_std, st, err) != 0) goto epochs_done;
        double eval_s = hn_now() - tt;
        if (t->interrupted) { /* training is whole: its time and weights are kept, no test row */
            printf("Interrupted in the test pass after %.0f of %d test images (accuracy so far %.2f %%); training "
                   "had finished\n",
                   st[2], dtest.n, st[2] > 0 ? 100 * st[1] / st[2] : 0.0);
        } else if (!isfinite(st[0])) {
            t->run_failed = 1;
            hn_errf(err, "the test loss is %s: the model's output is not a number (%s)", nan_text(st[0]),
                    cli->load && !epochs ? "--load's weights are too large: the output overflowed" : "the weights overflowed");
            goto epochs_done;
        }
        if (!t->interrupted) {
            printf("Test accuracy: %.2f %% (%.0f of %d), test loss %.4f, evaluated in %.2f s\n", 100 * st[1] / st[2],
                   st[1], dtest.n, st[0] / st[2], eval_s);
            if (curve_row(t, "test", epochs, t->steps_done, (int64_t)epochs * dtrain.n, st[0] / st[2], st[1] / st[2],
                          dtest.n / eval_s, err) != 0)
                goto epochs_done;
        }
        double sum_s = 0;
        for (int e = 1; e <= epochs; e++) sum_s += epoch_s[e];
        if (epochs) {
            printf("Time per epoch: %.2f s (", sum_s / epochs);
            for (int e = 1; e <= epochs; e++) printf("%s%.2f", e > 1 ? ", " : "", epoch_s[e]);
            printf(")%s\n", t->is_emu ? " on the emulator" : "");
        }
        if (!cli->quiet) {
            print_profile(t, steps);
            printf("Curve: %s (harness plot %s)\n", t->csv_path, t->csv_path);
        }
        if (cli->save) {
            if (hn_model_save(t->m, cli->save, err) != 0) goto epochs_done;
            if (!cli->quiet) printf("Weights: %s\n", cli->save);
        }
    }
    rc = 0;
epochs_done:
    free(epoch_s);
    free(order);
done:
    free_set(be, &dtrain);
    free_set(be, &dtest);
    hn_idx_set_free(&train);
    hn_idx_set_free(&test);
    return rc;
}

/* ---------------------------------------------------------------------- */

/* Makes path's folder (is_dir: path itself) and writes a file there, removed at
 * once: a parent that is a file, a folder without write permission or a
 * read-only file system are found before training, not after it. */
static int check_save_place(const char *opt, const char *path, int is_dir, hn_err *err) {
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && !is_dir && S_ISDIR(st.st_mode))
        return hn_errf(err, "%s %s: is a folder (expected the weights file's name)", opt, path);
    if (exists && is_dir && !S_ISDIR(st.st_mode))
        return hn_errf(err, "%s %s: is a file (expected a folder)", opt, path);
    char *dir = is_dir ? xstrdup(path) : hn_dirname(path);
    int rc = 0;
    if (hn_mkdirs(dir, err) != 0) rc = hn_err_prefix(err, "%s %s", opt, path); /* names a file in the way */
    if (rc == 0) {
        char *probe = xasprintf("%s/.harness-train-probe.%ld", dir, (long)getpid());
        FILE *f = fopen(probe, "w");
        if (!f) rc = hn_errf(err, "%s %s: cannot write in %s: %s", opt, path, dir, strerror(errno));
        else {
            fclose(f);
            remove(probe);
        }
        free(probe);
    }
    free(dir);
    return rc;
}

int hn_cmd_train(const hn_cli *cli) {
    const char *task = cli->config;
    if (strcmp(task, "xor") != 0 && strcmp(task, "mnist") != 0 && strcmp(task, "gradcheck") != 0) {
        fprintf(stderr, "harness train: unknown task '%s' (expected xor, mnist or gradcheck)\n", task);
        return 2;
    }
    /* an option a task does not use is an error, never silently ignored */
    int mnist = strcmp(task, "mnist") == 0, gradcheck = strcmp(task, "gradcheck") == 0;
    const char *stray = !mnist && cli->data         ? "--data"
                        : !mnist && cli->limit >= 0 ? "--limit"
                        : !mnist && cli->test_limit >= 0 ? "--test-limit"
                        : gradcheck && cli->epochs >= 0  ? "--epochs"
                        : gradcheck && cli->batch >= 0   ? "--batch"
                        : gradcheck && cli->lr >= 0      ? "--lr"
                        : gradcheck && cli->optimizer    ? "--optimizer"
                        : gradcheck && cli->momentum >= 0 ? "--momentum"
                        : gradcheck && cli->interval >= 0 ? "--interval"
                        : gradcheck && cli->save         ? "--save"
                        : gradcheck && cli->load         ? "--load"
                        : gradcheck && cli->save_tensors ? "--save-tensors"
                        : gradcheck && cli->out          ? "--out"
                                                         : NULL;
    if (stray) {
        fprintf(stderr, "harness train %s: %s is not an option of this task\n", task, stray);
        return 2;
    }
    /* 0 is no batch, no image, no step: an error, not the default in disguise */
    const char *zero = cli->batch == 0        ? "--batch"
                       : cli->limit == 0      ? "--limit"
                       : cli->test_limit == 0 ? "--test-limit"
                       : cli->interval == 0   ? "--interval"
                                              : NULL;
    if (zero) {
        fprintf(stderr, "harness train %s: %s 0: must be at least 1\n", task, zero);
        return 2;
    }
    if (cli->save_tensors && cli->epochs == 0) { /* it would write nothing, silently */
        fprintf(stderr, "harness train %s: --save-tensors writes the first training step's tensors, and --epochs 0 "
                        "trains none\n", task);
        return 2;
    }
    trainer t = {.cli = cli};
    hn_err err = {0};
    int rc = 0;
    /* --save's and --save-tensors' places are made ready before training, not
     * found unwritable after it (which lost the trained weights) */
    if ((cli->save && check_save_place("--save", cli->save, 0, &err) != 0) ||
        (cli->save_tensors && check_save_place("--save-tensors", cli->save_tensors, 1, &err) != 0)) {
        fprintf(stderr, "harness train %s: %s\n", task, err.msg);
        return 2;
    }
    if (open_backend(&t, &err) != 0) {
        fprintf(stderr, "harness train: %s\n", err.msg);
        close_trainer(&t);
        return 2;
    }
    if (strcmp(task, "gradcheck") == 0) {
        if (hn_gradcheck_prepare(t.tk, &err) != 0) { /* the config, not a gradient: 2 */
            fprintf(stderr, "harness train gradcheck: %s\n", err.msg);
            close_trainer(&t);
            return 2;
        }
        int failed = hn_gradcheck_run(t.be, t.tk, stdout, cli->quiet, cli->seed, &err);
        if (failed < 0) {
            fprintf(stderr, "harness train gradcheck: %s\n", err.msg);
            /* a kernel that faulted or hung is 1; the rest (geometry over the
             * device's limits, a kernel that does not compile or bind) is the config's: 2 */
            rc = err.kind == HN_ERR_FAULT || err.kind == HN_ERR_TIMEOUT ? 1 : 2;
        } else {
            rc = failed ? 1 : 0;
        }
    } else {
        int input_error = 0;
        int r = strcmp(task, "xor") == 0 ? train_xor(&t, &err) : train_mnist(&t, &input_error, &err);
        if (r != 0) {
            fprintf(stderr, "harness train %s: %s\n", task, err.msg);
            /* nothing trained (bad data, weights, options or config; a kernel that does
             * not compile, or faults in the first step) is 2; a failure once training
             * ran is 1, and so is a loss that is not a number (--epochs 0's test loss too) */
            rc = input_error || (t.steps_done == 0 && !t.run_failed) ? 2 : 1;
        } else if (t.interrupted) {
            rc = hn_interrupt_exit_code();
        }
    }
    close_trainer(&t);
    return rc;
}
