"""torch_crosscheck.py: every operator's outputs against PyTorch.

    python3 tests/torch_crosscheck.py HARNESS OUTDIR [CONFIG...]
    CROSSCHECK_BACKEND=cuda ... (default emu), CROSSCHECK_CASES=3, CROSSCHECK_MAX_GFLOP=0.004

For each sweep config (default: every configs/*.json with an "op"), runs a few
small cases on the emulator with --save-tensors, then recomputes each case from
its saved inputs with torch.nn.functional (and torch's autograd for the
gradients) in float64, from the case's manifest (case.json: the operator and
every parameter). Two comparisons per output buffer:

  - the harness's fp64 reference against torch: they must agree to 1e-9 of the
    tensor's scale (same formula, different summation order), which catches a
    reference whose semantics differ from torch's (padding, layout, reduction,
    index convention);
  - every variant's output that the harness wrote (its row ran) against torch,
    to float32 accuracy (2e-4 of the scale; integer outputs exactly).

Needs torch (not in CI: tests/gpu/check.sh runs it where torch is installed);
its numpy twin, tests/numpy_crosscheck.py, checks every case of a run with
formulas of its own and runs in CI (tests/test_saved_tensors.sh, on the edge
shapes of tests/configs/edge/).
Exits 1 on the first disagreement, naming the config, case, buffer and variant.
"""
import csv
import glob
import json
import os
import re
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)

harness, outdir = sys.argv[1], sys.argv[2]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.makedirs(outdir, exist_ok=True)
configs = sys.argv[3:] or sorted(glob.glob(os.path.join(root, "configs", "*.json")))
CASES_PER_CONFIG = int(os.environ.get("CROSSCHECK_CASES", "3"))
MAX_GFLOP = float(os.environ.get("CROSSCHECK_MAX_GFLOP", "0.004"))
# cuda: the GPU's outputs, cuBLAS and cuDNN rows included, against torch
BACKEND = os.environ.get("CROSSCHECK_BACKEND", "emu")


def t64(a):
    return torch.from_numpy(np.ascontiguousarray(a)).to(torch.float64)


# layout <-> NCHW: the saved tensor's axes, in the order NCHW wants them
TO_NCHW = {"NCHW": (0, 1, 2, 3), "NHWC": (0, 3, 1, 2), "CHWN": (3, 0, 1, 2)}


def to_nchw(x, layout):
    return x.permute(*TO_NCHW[layout])


def from_nchw(x, layout):
    inv = np.argsort(TO_NCHW[layout])
    return x.permute(*[int(i) for i in inv])


def pads(p, fs):
    """F.pad's (left, right, top, bottom) for the harness's `padding`: -1 is
    "same" ((fs-1)/2 before, the rest after), else p on every side."""
    if p < 0:
        lo = (fs - 1) // 2
        return (lo, fs - 1 - lo, lo, fs - 1 - lo)
    return (p, p, p, p)


def conv_fwd(x, w, p, fs, value):
    return F.conv2d(F.pad(x, pads(p, fs), value=value), w)


def grads(fn, inputs, dout):
    """fn(*inputs) backward with dout: the inputs' gradients."""
    xs = [t.detach().clone().requires_grad_(True) for t in inputs]
    y = fn(*xs)
    y.backward(dout)
    return [t.grad for t in xs]


def expected(op, P, T):
    """The operator's outputs, {buffer: float64 tensor}, from the inputs T."""
    i = lambda k: int(P[k])
    if op == "conv2d":
        lay = P.get("layout", "NCHW")
        y = conv_fwd(to_nchw(T["in"], lay), T["filter"], i("padding"), i("filter_size"), P["pad"])
        y = y + T["bias"].view(1, -1, 1, 1)
        return {"out": from_nchw(y, lay)}
    if op == "conv2d_backward_data":
        fs, p = i("filter_size"), i("padding")
        x0 = torch.zeros(i("n"), i("in_ch"), i("h"), i("w"))
        (dx,) = grads(lambda x: conv_fwd(x, T["filter"], p, fs, 0.0), [x0], T["dout"])
        return {"din": dx}
    if op == "conv2d_backward_filter":
        fs, p = i("filter_size"), i("padding")
        w0 = torch.zeros(i("out_ch"), i("in_ch"), fs, fs)
        (dw,) = grads(lambda w: conv_fwd(T["in"], w, p, fs, P["pad"]), [w0], T["dout"])
        return {"dfilter": dw}
    if op == "conv2d_backward_bias":
        return {"dbias": T["dout"].sum(dim=(0, 2, 3))}
    if op == "im2col":
        fs = i("filter_size")
        x = F.pad(T["in"], pads(i("padding"), fs), value=P["pad"])
        return {"cols": F.unfold(x, fs)}
    if op == "linear":
        return {"y": F.linear(T["x"], T["weight"], T["bias"])}
    if op == "softmax":
        return {"y": torch.softmax(T["x"], -1)}
    if op == "attention":
        sc, causal = float(np.float32(P["scale"])), bool(int(P["causal"]))
        out = F.scaled_dot_product_attention(T["q"], T["k"], T["v"], is_causal=causal, scale=sc)
        x = sc * T["q"] @ T["k"].transpose(-2, -1)
        if causal:  # is_causal's mask: the top-left diagonal, j <= i
            x = x.masked_fill(~torch.ones(x.shape[-2:], dtype=torch.bool).tril(), float("-inf"))
        return {"out": out, "lse": torch.logsumexp(x, -1)}
    if op == "histogram":
        return {"hist": torch.bincount(T["x"].long(), minlength=int(P["bins"]))}
    if op == "transpose":
        return {"y": torch.transpose(T["x"], 0, 1).contiguous()}
    if op == "reduce_sum":
        return {"y": torch.sum(T["x"], -1)}
    if op == "scan":
        y = torch.cumsum(T["x"], -1)  # int32 x: an int64 cumsum, exact
        if int(P["exclusive"]):
            y = torch.cat([torch.zeros_like(y[:, :1]), y[:, :-1]], -1)
        return {"y": y}
    if op == "stencil3d":
        # interior points: a 3x3x3 cross-correlation with the 7 coefficients; the boundary copied
        x, c = T["in"], [float(np.float32(P[f"c{k}"])) for k in range(7)]
        w = torch.zeros(1, 1, 3, 3, 3)
        w[0, 0, 1, 1, 1], w[0, 0, 1, 1, 0], w[0, 0, 1, 1, 2] = c[0], c[1], c[2]
        w[0, 0, 1, 0, 1], w[0, 0, 1, 2, 1], w[0, 0, 0, 1, 1], w[0, 0, 2, 1, 1] = c[3], c[4], c[5], c[6]
        y = x.clone()
        if min(x.shape) >= 3:
            y[1:-1, 1:-1, 1:-1] = F.conv3d(x[None, None], w)[0, 0]
        return {"out": y}
    if op == "layernorm":
        x, eps = T["x"], float(np.float32(P["eps"]))
        var, mean = torch.var_mean(x, -1, unbiased=False)
        y = F.layer_norm(x, (x.shape[-1],), T["weight"], T["bias"], eps)
        return {"y": y, "mean": mean, "rstd": torch.rsqrt(var + eps)}
    if op == "gemm":
        a = T["a"].T if P["trans_a"] == "T" else T["a"]
        b = T["b"].T if P["trans_b"] == "T" else T["b"]
        if P["beta"] == 0:  # c's input does not count (BLAS)
            return {"c": P["alpha"] * (a @ b)}
        return {"c": torch.addmm(T["c"], a, b, beta=P["beta"], alpha=P["alpha"])}
    if op == "linear_backward":
        b0 = torch.zeros(i("out_f"))
        dx, dw, db = grads(F.linear, [T["x"], T["weight"], b0], T["dy"])
        return {"dx": dx, "dweight": dw, "dbias": db}
    if op in ("pool2d", "pool2d_backward"):
        lay, k = P.get("layout", "NCHW"), i("k")
        x = to_nchw(T["in"], lay)
        if op == "pool2d":
            if P["mode"] == "max":
                y, idx = F.max_pool2d(x, k, stride=k, return_indices=True)
                return {"out": from_nchw(y, lay), "argmax": from_nchw(idx, lay)}
            return {"out": from_nchw(F.avg_pool2d(x, k, stride=k), lay)}
        dout = to_nchw(T["dout"], lay)
        if P["mode"] == "max":
            # the gradient goes where the given argmax points (the forward's)
            idx = to_nchw(T["argmax"], lay).long()
            dx = torch.zeros_like(x).flatten(2)
            dx.scatter_add_(2, idx.flatten(2), dout.flatten(2))
            return {"din": from_nchw(dx.view_as(x), lay)}
        (dx,) = grads(lambda t: F.avg_pool2d(t, k, stride=k), [x], dout)
        return {"din": from_nchw(dx, lay)}
    if op == "relu":
        return {"y": F.relu(T["x"])}
    if op == "relu_backward":
        (dx,) = grads(F.relu, [T["x"]], T["dy"])
        return {"dx": dx}
    if op == "sigmoid":
        return {"y": torch.sigmoid(T["x"])}
    if op == "sigmoid_backward":
        (dx,) = grads(torch.sigmoid, [T["x"]], T["dy"])
        return {"dx": dx}
    if op == "softmax_cross_entropy":
        labels = T["labels"].long()
        z = T["logits"].detach().clone().requires_grad_(True)
        loss = F.cross_entropy(z, labels)
        loss.backward()
        return {"loss": loss.detach().view(1), "dlogits": z.grad}
    return None


failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL " + msg)


def compare(what, got, want, rel, exact=False, index=None):
    want = want.detach().reshape(-1).numpy()
    got = np.asarray(got, dtype=np.float64).reshape(-1)
    if index is not None:
        want = want[index]
    if got.shape != want.shape:
        return fail(f"{what}: {got.size} values, torch has {want.size}")
    if exact:
        bad = np.flatnonzero(got != want)
        if bad.size:
            j = bad[0]
            fail(f"{what}: {bad.size} of {got.size} differ, first at {j}: {got[j]:g}, torch {want[j]:g}")
        return
    scale = max(np.abs(want).max(initial=0.0), 1e-30)
    err = np.abs(got - want)
    if not np.all(err <= rel * scale):
        j = int(np.nanargmax(np.where(np.isnan(err), np.inf, err)))
        fail(f"{what}: max |err| {err[j]:.3g} at {j} > {rel:g} x scale {scale:.3g} (got {got[j]:.9g}, torch {want[j]:.9g})")


def small_cases(cfg):
    """Up to CASES_PER_CONFIG case ids under MAX_GFLOP, spread over sizes."""
    out = subprocess.run([harness, "list", cfg], capture_output=True, text=True)
    lines = out.stdout.splitlines()
    if out.returncode != 0 or "cases:" not in lines:
        return None
    cases = []
    for line in lines[lines.index("cases:") + 2:]:
        f = line.split()
        if len(f) < 2 or not f[0].isdigit():
            break
        try:
            cases.append((float(f[-1]), f[0]))
        except ValueError:
            pass
    if cases and max(c[0] for c in cases) == 0:
        # no FLOP count (a data movement such as im2col): the plan's first
        # cases, the smallest shapes where the axes ascend
        return [c[1] for c in cases[:CASES_PER_CONFIG]]
    fit = sorted(c for c in cases if c[0] <= MAX_GFLOP) or sorted(cases)[:1]
    if len(fit) <= CASES_PER_CONFIG:
        return [c[1] for c in fit]
    step = (len(fit) - 1) / (CASES_PER_CONFIG - 1)
    return sorted({fit[round(k * step)][1] for k in range(CASES_PER_CONFIG)}, key=int)


checked = 0
for cfg in configs:
    doc = json.load(open(cfg))
    if "op" not in doc:
        continue
    name = os.path.splitext(os.path.basename(cfg))[0]
    ids = small_cases(cfg)
    if not ids:
        fail(f"{name}: harness list found no cases")
        continue
    tdir = os.path.join(outdir, name)
    for cid in ids:
        extra = ["--no-baseline", "--all"] if BACKEND == "emu" else []
        run = subprocess.run([harness, "run", cfg, "--backend", BACKEND, "--case", cid, "--quick", "--quiet", "--force",
                              *extra, "--save-tensors", tdir, "--out", os.path.join(outdir, f"{name}.{cid}.csv")],
                             capture_output=True, text=True)
        if run.returncode not in (0, 1):
            fail(f"{name} case {cid}: harness run exit {run.returncode}: {run.stderr.strip()[-300:]}")
            continue
        rows = list(csv.DictReader(open(os.path.join(outdir, f"{name}.{cid}.csv"))))
        cdir = os.path.join(tdir, f"case-{cid}")
        if not os.path.exists(os.path.join(cdir, "case.json")):
            why = rows[0]["reason"] if rows else "no rows"
            fail(f"{name} case {cid}: nothing saved ({why})")
            continue
        man = json.load(open(os.path.join(cdir, "case.json")))
        op, P, B = man["op"], man["params"], man["buffers"]
        T = {b: t64(np.load(os.path.join(cdir, f"{b}.npy"))) if B[b]["dtype"] != "<i4"
             else torch.from_numpy(np.load(os.path.join(cdir, f"{b}.npy")))
             for b in B if B[b]["role"] in ("in", "inout")}
        want = expected(op, P, T)
        if want is None:
            fail(f"{name}: operator {op} has no torch formula here")
            continue
        for b, w in want.items():
            integer = B[b]["dtype"] == "<i4"
            where = f"{name} case {cid} ({man['label']}) {op}.{b}"
            ref = os.path.join(cdir, f"{b}.reference.npy")
            idx_path = os.path.join(cdir, f"{b}.reference_index.npy")
            index = np.load(idx_path) if os.path.exists(idx_path) else None
            compare(where + " reference", np.load(ref), w, 1e-9, exact=integer, index=index)
            for r in rows:
                # the file is named after the variant with unsafe characters replaced
                # (hn_sanitize_name): scan_lookback<float> -> scan_lookback_float_
                path = os.path.join(cdir, f"{b}.{re.sub(r'[^A-Za-z0-9._-]', '_', r['variant'])}.npy")
                if r["status"] != "ok" or not os.path.exists(path):
                    continue
                compare(f"{where} variant {r['variant']}", np.load(path), w, 2e-4, exact=integer)
            checked += 1
        print(f"{name} case {cid}: {op} ({man['label']}): {', '.join(want)} agree with torch")

print(f"{checked} output buffers checked, {failures} failure(s)")
sys.exit(1 if failures or not checked else 0)
