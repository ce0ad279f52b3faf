"""numpy_crosscheck.py DIR CSV: every case `harness run --save-tensors DIR --out CSV`
wrote, recomputed with numpy formulas written here (independent of the harness's
references), as tests/torch_crosscheck.py does with PyTorch where torch is
installed. For each case-<id>/ folder:

  - the manifest (case.json) names the operator and every one of its parameters
    (`harness list`'s table is not needed to replay the call), and each buffer's
    dtype, role and shape; an output also says how its reference covers it;
  - every .npy has the manifest's shape and dtype (inputs and variants' outputs:
    the buffer's own, int32 for pool2d's argmax; references: float64 for a float
    buffer, the buffer's own dtype for an integer one);
  - the reference agrees with numpy to 1e-9 of the tensor's scale, every
    variant's output to 2e-4 (float32 kernels); integer outputs exactly;
  - every row of the CSV that ran ("ok") left its outputs.

Needs numpy only (/usr/bin/python3 has it; tests/test_saved_tensors.sh runs it
in CI). Prints one line per case; exits 1 naming each disagreement."""
import csv
import glob
import json
import os
import re
import sys

import numpy as np

TO_NCHW = {"NCHW": (0, 1, 2, 3), "NHWC": (0, 3, 1, 2), "CHWN": (3, 0, 1, 2)}
PARAMS = {
    "conv2d": ["n", "in_ch", "out_ch", "filter_size", "h", "w", "padding", "pad", "use_bias", "layout"],
    "conv2d_backward_data": ["n", "in_ch", "out_ch", "filter_size", "h", "w", "padding"],
    "conv2d_backward_filter": ["n", "in_ch", "out_ch", "filter_size", "h", "w", "padding", "pad"],
    "conv2d_backward_bias": ["n", "out_ch", "filter_size", "h", "w", "padding"],
    "im2col": ["n", "in_ch", "filter_size", "h", "w", "padding", "pad"],
    "pool2d": ["n", "channels", "h", "w", "k", "mode", "layout"],
    "pool2d_backward": ["n", "channels", "h", "w", "k", "mode", "layout"],
    "linear": ["batch", "in_f", "out_f"],
    "gemm": ["m", "n", "k", "alpha", "beta", "trans_a", "trans_b"],
    "linear_backward": ["batch", "in_f", "out_f"],
    "relu": ["n"], "relu_backward": ["n"], "sigmoid": ["n"], "sigmoid_backward": ["n"],
    "softmax_cross_entropy": ["batch", "classes"],
    "softmax": ["rows", "cols"],
    "attention": ["batch", "heads", "t", "s", "d", "causal", "scale"],
    "layernorm": ["rows", "cols", "eps"],
    "reduce_sum": ["rows", "cols"],
    "transpose": ["rows", "cols"],
    "histogram": ["n", "bins"],
    "scan": ["rows", "cols", "exclusive", "dtype"],
    "stencil3d": ["nz", "ny", "nx", "c0", "c1", "c2", "c3", "c4", "c5", "c6"],
}


def to_nchw(x, lay):
    return x.transpose(TO_NCHW[lay])


def from_nchw(x, lay):
    return x.transpose(np.argsort(TO_NCHW[lay]))


def pads(p, fs):
    """(before, after) of the harness's `padding`: -1 is "same" ((fs-1)/2 before,
    the rest after, as torch's padding="same"), else p on both sides."""
    if p < 0:
        return (fs - 1) // 2, fs - 1 - (fs - 1) // 2
    return p, p


def padded(x, p, fs, value):
    lo, hi = pads(p, fs)
    return np.pad(x, ((0, 0), (0, 0), (lo, hi), (lo, hi)), constant_values=value)


def windows(xp, fs):
    """(n, c, oh, ow, fs, fs): every filter-sized window of the padded image."""
    return np.lib.stride_tricks.sliding_window_view(xp, (fs, fs), axis=(2, 3))


def pool_windows(x, k):
    """(n, c, oh, ow, k*k): the stride-k windows, row-major inside each."""
    n, c, h, w = x.shape
    oh, ow = h // k, w // k
    t = x[:, :, :oh * k, :ow * k].reshape(n, c, oh, k, ow, k).transpose(0, 1, 2, 4, 3, 5)
    return t.reshape(n, c, oh, ow, k * k)


def pool_argmax(x, k):
    """torch's max_pool2d indices: the first maximum in row-major order, a NaN
    wins (a later NaN over an earlier one), as plane positions y * w + x."""
    win = pool_windows(x, k)
    first = np.argmax(win, axis=-1)
    nan = np.isnan(win)
    last_nan = win.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
    pq = np.where(nan.any(-1), last_nan, first)
    oh, ow = win.shape[2], win.shape[3]
    i = np.arange(oh)[:, None]
    j = np.arange(ow)[None, :]
    return (i * k + pq // k) * x.shape[3] + (j * k + pq % k), np.take_along_axis(win, pq[..., None], -1)[..., 0]


def expected(op, P, T):
    """The operator's outputs, {buffer: float64 or int array}, from the inputs T."""
    if op == "conv2d":
        lay, fs = P["layout"], P["filter_size"]
        win = windows(padded(to_nchw(T["in"], lay), P["padding"], fs, P["pad"]), fs)
        y = np.einsum("ncyxij,ocij->noyx", win, T["filter"]) + T["bias"][None, :, None, None]
        return {"out": from_nchw(y, lay)}
    if op == "conv2d_backward_data":
        fs, lo = P["filter_size"], pads(P["padding"], P["filter_size"])[0]
        dout = T["dout"]
        oh, ow = dout.shape[2], dout.shape[3]
        dxp = np.zeros((P["n"], P["in_ch"], oh + fs - 1, ow + fs - 1))
        for i in range(fs):
            for j in range(fs):
                dxp[:, :, i:i + oh, j:j + ow] += np.einsum("noyx,oc->ncyx", dout, T["filter"][:, :, i, j])
        return {"din": dxp[:, :, lo:lo + P["h"], lo:lo + P["w"]]}
    if op == "conv2d_backward_filter":
        fs = P["filter_size"]
        win = windows(padded(T["in"], P["padding"], fs, P["pad"]), fs)
        return {"dfilter": np.einsum("ncyxij,noyx->ocij", win, T["dout"])}
    if op == "conv2d_backward_bias":
        return {"dbias": T["dout"].sum(axis=(0, 2, 3))}
    if op == "im2col":
        fs = P["filter_size"]
        win = windows(padded(T["in"], P["padding"], fs, P["pad"]), fs)
        n, c, oh, ow = win.shape[:4]
        return {"cols": win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * fs * fs, oh * ow)}
    if op == "pool2d":
        lay, k = P["layout"], P["k"]
        x = to_nchw(T["in"], lay)
        if P["mode"] == "max":
            idx, y = pool_argmax(x, k)
            return {"out": from_nchw(y, lay), "argmax": from_nchw(idx, lay)}
        return {"out": from_nchw(pool_windows(x, k).mean(-1), lay)}
    if op == "pool2d_backward":
        lay, k = P["layout"], P["k"]
        dout = to_nchw(T["dout"], lay)
        n, c, h, w = to_nchw(T["in"], lay).shape
        dx = np.zeros((n, c, h * w))
        if P["mode"] == "max":
            idx = to_nchw(T["argmax"], lay).reshape(n, c, -1)
            for b in range(n):
                for ch in range(c):
                    np.add.at(dx[b, ch], idx[b, ch], dout[b, ch].reshape(-1))
            dx = dx.reshape(n, c, h, w)
        else:
            dx = dx.reshape(n, c, h, w)
            oh, ow = h // k, w // k
            dx[:, :, :oh * k, :ow * k] = np.repeat(np.repeat(dout / (k * k), k, axis=2), k, axis=3)
        return {"din": from_nchw(dx, lay)}
    if op == "linear":
        return {"y": T["x"] @ T["weight"].T + T["bias"]}
    if op == "gemm":
        a = T["a"].T if P["trans_a"] == "T" else T["a"]
        b = T["b"].T if P["trans_b"] == "T" else T["b"]
        c = P["alpha"] * (a @ b)
        # beta 0: c's input does not count (BLAS)
        return {"c": c + P["beta"] * T["c"] if P["beta"] != 0 else c}
    if op == "linear_backward":
        return {"dx": T["dy"] @ T["weight"], "dweight": T["dy"].T @ T["x"], "dbias": T["dy"].sum(0)}
    if op == "relu":
        x = T["x"]
        return {"y": np.where((x > 0) | np.isnan(x), x, 0.0)}
    if op == "relu_backward":
        return {"dx": np.where(T["x"] > 0, T["dy"], 0.0)}
    if op == "sigmoid":
        return {"y": 1 / (1 + np.exp(-T["x"]))}
    if op == "sigmoid_backward":
        s = 1 / (1 + np.exp(-T["x"]))
        return {"dx": T["dy"] * s * (1 - s)}
    if op == "histogram":
        return {"hist": np.bincount(T["x"], minlength=int(P["bins"])).astype(np.int32)}
    if op == "transpose":
        return {"y": T["x"].T}
    if op == "reduce_sum":
        return {"y": T["x"].sum(1)}
    if op == "scan":
        # int32 flags: an int64 cumsum (no overflow), exact; float: float64
        x = T["x"].astype(np.int64) if T["x"].dtype.kind == "i" else T["x"]
        y = np.cumsum(x, axis=1)
        if P["exclusive"]:
            y = np.concatenate([np.zeros_like(y[:, :1]), y[:, :-1]], axis=1)
        return {"y": y.astype(np.int32) if x.dtype.kind == "i" else y}
    if op == "stencil3d":
        # interior points: the 7-point stencil; the boundary copied
        x, c = T["in"], [float(np.float32(P[f"c{k}"])) for k in range(7)]
        y = x.copy()
        if min(x.shape) >= 3:
            y[1:-1, 1:-1, 1:-1] = (c[0] * x[1:-1, 1:-1, 1:-1] + c[1] * x[1:-1, 1:-1, :-2] + c[2] * x[1:-1, 1:-1, 2:]
                                   + c[3] * x[1:-1, :-2, 1:-1] + c[4] * x[1:-1, 2:, 1:-1]
                                   + c[5] * x[:-2, 1:-1, 1:-1] + c[6] * x[2:, 1:-1, 1:-1])
        return {"out": y}
    if op == "layernorm":
        x = T["x"]
        mean = x.mean(1)
        var = ((x - mean[:, None]) ** 2).mean(1)
        rstd = 1 / np.sqrt(var + float(np.float32(P["eps"])))
        return {"y": (x - mean[:, None]) * rstd[:, None] * T["weight"] + T["bias"], "mean": mean, "rstd": rstd}
    if op == "softmax":
        z = T["x"] - T["x"].max(1, keepdims=True)
        e = np.exp(z)
        return {"y": e / e.sum(1, keepdims=True)}
    if op == "attention":
        # torch's is_causal: query i sees keys j <= i (the top-left diagonal)
        x = float(np.float32(P["scale"])) * np.einsum("bhtd,bhsd->bhts", T["q"], T["k"])
        if P["causal"]:
            t, s = x.shape[-2:]
            x = np.where(np.arange(s)[None, :] <= np.arange(t)[:, None], x, -np.inf)
        m = x.max(-1, keepdims=True)
        e = np.exp(x - m)
        l = e.sum(-1, keepdims=True)
        return {"out": (e / l) @ T["v"], "lse": (m + np.log(l))[..., 0]}
    if op == "softmax_cross_entropy":
        z, lab = T["logits"], T["labels"].astype(np.int64)
        zs = z - z.max(1, keepdims=True)
        lse = np.log(np.exp(zs).sum(1))
        rows = np.arange(z.shape[0])
        loss = (lse - zs[rows, lab]).mean()
        d = np.exp(zs - lse[:, None])
        d[rows, lab] -= 1
        return {"loss": np.array([loss]), "dlogits": d / z.shape[0]}
    return None


failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL " + msg)


def compare(what, got, want, rel, exact):
    got = np.asarray(got).reshape(-1)
    want = np.asarray(want).reshape(-1)
    if got.shape != want.shape:
        return fail(f"{what}: {got.size} values, numpy has {want.size}")
    if exact:
        bad = np.flatnonzero(got != want)
        if bad.size:
            fail(f"{what}: {bad.size} of {got.size} differ, first at {bad[0]}: {got[bad[0]]}, numpy {want[bad[0]]}")
        return
    got = got.astype(np.float64)
    scale = max(np.abs(want).max(initial=0.0), 1e-30)
    err = np.abs(got - want)
    if not np.all(err <= rel * scale):
        j = int(np.nanargmax(np.where(np.isnan(err), np.inf, err)))
        fail(f"{what}: max |err| {err[j]:.3g} at {j} > {rel:g} x scale {scale:.3g} (got {got[j]:.9g}, numpy {want[j]:.9g})")


def check_case(cdir, ran):
    """One case folder; `ran`: the variants whose row is ok."""
    man = json.load(open(os.path.join(cdir, "case.json")))
    op, P, B = man.get("op"), man.get("params", {}), man.get("buffers", {})
    where = f"{os.path.basename(cdir)} ({man.get('label')}) {op}"
    if op not in PARAMS:
        return fail(f"{where}: no numpy formula for operator {op!r}")
    missing = [k for k in PARAMS[op] if k not in P]
    if missing:
        return fail(f"{where}: case.json lacks parameters {missing}")
    T = {}
    for b, m in B.items():
        if set(m) < {"dtype", "role", "shape"}:
            fail(f"{where}.{b}: case.json's buffer lacks dtype, role or shape: {m}")
            continue
        # a variant's output is there when its kernel was given the buffer
        # (an in-out buffer, gemm's c, has its input as well as its outputs)
        files = ([f"{b}.npy"] if m["role"] in ("in", "inout") else []) + ([] if m["role"] == "in" else
            [f"{b}.reference.npy"] + [f"{b}.{v}.npy" for v in ran if os.path.exists(os.path.join(cdir, f"{b}.{v}.npy"))])
        for f in files:
            path = os.path.join(cdir, f)
            if not os.path.exists(path):
                fail(f"{where}: {f} missing")
                continue
            a = np.load(path)
            dtype = m["dtype"]
            if f.endswith(".reference.npy"):
                dtype = m.get("reference_dtype")
                if m.get("checked") is None or "reference" not in m:
                    fail(f"{where}.{b}: case.json does not say how the reference covers it")
                if dtype != ("<i4" if m["dtype"] == "<i4" else "<f8"):
                    fail(f"{where}.{b}: reference_dtype {dtype}")
            sampled = os.path.exists(os.path.join(cdir, f"{b}.reference_index.npy"))
            shape_ok = list(a.shape) == m["shape"] or (f.endswith(".reference.npy") and sampled and a.ndim == 1)
            if a.dtype.str != dtype or not shape_ok:
                fail(f"{where}: {f} is {a.dtype.str} {list(a.shape)}, the manifest says {dtype} {m['shape']}")
            elif m.get("device_dtype") == "bfloat16" and f == f"{b}.npy" and np.any(a.view(np.uint32) & 0xFFFF):
                fail(f"{where}: {f} holds float32 values that are not bfloat16 (device_dtype bfloat16)")
        if m["role"] in ("in", "inout"):
            a = np.load(os.path.join(cdir, f"{b}.npy"))
            T[b] = a if a.dtype.kind == "i" else a.astype(np.float64)
    want = expected(op, P, T)
    for b, w in want.items():
        m = B[b]
        if list(w.shape) != m["shape"]:
            fail(f"{where}.{b}: numpy's shape {list(w.shape)}, the manifest's {m['shape']}")
        exact = m["dtype"] == "<i4"
        ref = np.load(os.path.join(cdir, f"{b}.reference.npy"))
        idx_path = os.path.join(cdir, f"{b}.reference_index.npy")
        wr = w.reshape(-1)[np.load(idx_path)] if os.path.exists(idx_path) else w
        compare(f"{where}.{b} reference", ref, wr, 1e-9, exact)
        for v in ran:
            path = os.path.join(cdir, f"{b}.{v}.npy")
            if os.path.exists(path):
                compare(f"{where}.{b} variant {v}", np.load(path), w, 2e-4, exact)
    for b, m in B.items():
        if m["role"] != "in" and b not in want and m.get("checked"):
            fail(f"{where}.{b}: checked by the harness, but numpy has no value for it")
    return len(want)


def main():
    d, csv_path = sys.argv[1], sys.argv[2]
    rows = list(csv.DictReader(open(csv_path)))
    checked = 0
    cases = sorted({r["case"] for r in rows if r["status"] == "ok"}, key=int)
    for cid in cases:
        cdir = os.path.join(d, f"case-{cid}")
        if not os.path.exists(os.path.join(cdir, "case.json")):
            fail(f"case {cid}: rows ran but nothing was saved")
            continue
        # a variant's file name is its label with unsafe characters replaced
        # (hn_sanitize_name): linear_tiled[TILE=8] -> linear_tiled_TILE_8_
        ran = []
        for r in rows:
            if r["case"] != cid or r["status"] != "ok":
                continue
            v = re.sub(r"[^A-Za-z0-9._-]", "_", r["variant"])
            if glob.glob(os.path.join(cdir, f"*.{glob.escape(v)}.npy")):
                ran.append(v)
            else:
                fail(f"case {cid}: row {r['variant']} ran but saved nothing")
        checked += check_case(cdir, ran) or 0
    print(f"{csv_path}: {len(cases)} cases, {checked} outputs checked, {failures} failure(s)")
    return 1 if failures or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
