"""train_check_tensors.py DIR: checks what `harness train --save-tensors DIR` wrote
against numpy, layer by layer, in double precision: each layer's output from its
input and parameters, its input and parameter gradients from its output gradient
(the formulas of torch.nn.functional and its autograd), the loss and its
gradient, max pooling's argmax (int32, torch's indices), and that the layers
chain (one layer's output is the next one's input, one layer's input gradient
the previous one's output gradient). Used by
tests/test_train.sh and tests/test_train_mnist.sh; prints one line per layer and
exits 1 on the first disagreement."""
import json
import os
import sys

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

d = sys.argv[1]
man = json.load(open(os.path.join(d, "layers.json")))


def load(name):
    return np.load(os.path.join(d, name)).astype(np.float64)


def close(what, got, want, scale=1.0):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    # float kernels against a double reference: relative 1e-4 of the tensor's scale
    tol = 1e-4 * max(scale, np.abs(want).max(initial=0.0), 1e-30) + 1e-6
    err = np.abs(got - want).max(initial=0.0)
    if not err <= tol:
        print(f"FAIL {what}: max |err| {err:.3g} > {tol:.3g}")
        sys.exit(1)
    return err


prev = None
for L in man["layers"]:
    f = {k: load(v) for k, v in L["files"].items()}
    t = L["type"]
    errs = []
    if t == "flatten":
        print(f"{L['name']}: (no tensors)")
        continue
    x, y, dy = f["x"], f["y"], f["dy"]
    if t == "linear":
        w, b = f["weight"], f["bias"]
        errs.append(close("y", y, x @ w.T + b))
        if "dx" in f:
            errs.append(close("dx", f["dx"], dy @ w))
        errs.append(close("dweight", f["dweight"], dy.T @ x))
        errs.append(close("dbias", f["dbias"], dy.sum(0)))
    elif t == "conv2d":
        w, b, p = f["weight"], f["bias"], L["padding"]
        k = w.shape[2]
        xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
        win = sliding_window_view(xp, (k, k), axis=(2, 3))  # (n, c, oh, ow, k, k)
        errs.append(close("y", y, np.einsum("ncyxpq,ocpq->noyx", win, w) + b[None, :, None, None]))
        errs.append(close("dweight", f["dweight"], np.einsum("ncyxpq,noyx->ocpq", win, dy)))
        errs.append(close("dbias", f["dbias"], dy.sum((0, 2, 3))))
        if "dx" in f:
            oh, ow = dy.shape[2], dy.shape[3]
            dxp = np.zeros_like(xp)
            for a in range(k):
                for c in range(k):
                    dxp[:, :, a:a + oh, c:c + ow] += np.einsum("noyx,oc->ncyx", dy, w[:, :, a, c])
            errs.append(close("dx", f["dx"], dxp[:, :, p:p + x.shape[2], p:p + x.shape[3]]))
    elif t == "maxpool2d":
        k = L["kernel_size"]
        n, c, h, w_ = x.shape
        oh, ow = h // k, w_ // k
        win = x[:, :, :oh * k, :ow * k].reshape(n, c, oh, k, ow, k)
        errs.append(close("y", y, win.max(axis=(3, 5))))
        # torch's rule: the first maximum in row-major window order takes the gradient
        flat = win.transpose(0, 1, 2, 4, 3, 5).reshape(n, c, oh, ow, k * k)
        first = flat.argmax(-1)
        # the saved argmax: int32, torch's indices (plane positions y * w + x)
        am = np.load(os.path.join(d, L["files"]["argmax"]))
        pos = (np.arange(oh)[:, None] * k + first // k) * w_ + np.arange(ow)[None, :] * k + first % k
        if am.dtype != np.int32 or am.shape != y.shape or not np.array_equal(am, pos):
            print(f"FAIL argmax: {am.dtype} {am.shape}, not the first maximum's position of each window")
            sys.exit(1)
        onehot = (np.arange(k * k) == first[..., None]) * dy[..., None]
        dx = np.zeros_like(x)
        dx[:, :, :oh * k, :ow * k] = onehot.reshape(n, c, oh, ow, k, k).transpose(0, 1, 2, 4, 3, 5).reshape(
            n, c, oh * k, ow * k)
        if "dx" in f:
            errs.append(close("dx", f["dx"], dx))
    elif t == "relu":
        errs.append(close("y", y, np.maximum(x, 0)))
        errs.append(close("dx", f["dx"], np.where(x > 0, dy, 0)))
    elif t == "sigmoid":
        s = 1 / (1 + np.exp(-x))
        errs.append(close("y", y, s))
        errs.append(close("dx", f["dx"], dy * s * (1 - s)))
    if prev is not None:
        close("chain: input = previous output", x.reshape(prev["y"].shape), prev["y"])
        if "dx" in f:
            close("chain: output gradient = next input gradient", f["dx"].reshape(prev["dy"].shape), prev["dy"])
    prev = f
    print(f"{L['name']}: ok (max |err| {max(errs):.2e})")

lf = {k: load(v) for k, v in man["loss"]["files"].items()}
if man["loss"]["type"] == "cross_entropy":
    z, lab = lf["logits"], lf["labels"].astype(int)
    m = z.max(1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(z - m).sum(1))
    B = z.shape[0]
    close("loss", lf["loss"], [np.mean(lse - z[np.arange(B), lab])])
    p = np.exp(z - lse[:, None])
    p[np.arange(B), lab] -= 1
    close("dlogits", lf["dlogits"], p / B)
    out, dout = z, lf["dlogits"]
else:
    pr, tg = lf["pred"], lf["target"]
    close("loss", lf["loss"], [np.mean((pr - tg) ** 2)])
    close("dpred", lf["dpred"], 2 * (pr - tg) / pr.size)
    out, dout = pr, lf["dpred"]
close("chain: logits = last output", out.reshape(prev["y"].shape), prev["y"])
close("chain: dlogits = last output gradient", dout.reshape(prev["dy"].shape), prev["dy"])
print("loss: ok")
