"""train_torch_crosscheck.py DIR: what `harness train --save-tensors DIR` wrote
against PyTorch: each layer's output from its saved input and parameters with
torch.nn.functional, and its input and parameter gradients from its saved output
gradient with torch's autograd (float64), then the loss and its gradient
(F.cross_entropy, or XOR's F.mse_loss), and max pooling's argmax against
torch's indices exactly. A value agrees within 2e-4 of its tensor's scale (float32
kernels). tests/train_check_tensors.py does the same with numpy formulas in CI;
this one needs torch (tests/gpu/check.sh runs it on the GPU's tensors).
Exits 1 when a tensor disagrees."""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
d = sys.argv[1]; m = json.load(open(os.path.join(d, "layers.json")))
ld = lambda n: torch.from_numpy(np.load(os.path.join(d, n)).astype(np.float64))
bad = 0
def cmp(what, got, want):
    global bad
    got = got.reshape(-1); want = want.reshape(-1)
    sc = max(want.abs().max().item(), 1e-30); e = (got - want).abs().max().item()
    ok = e <= 2e-4 * sc + 1e-7
    bad += not ok
    print(("ok  " if ok else "BAD ") + f"{what}: max err {e:.3g} scale {sc:.3g}")
for L in m["layers"]:
    f = {k: ld(v) for k, v in L["files"].items() if k != "argmax"}
    t = L["type"]
    if "x" not in f: print("skip", t); continue
    x = f["x"].clone().requires_grad_(True)
    ps = {}
    if t == "conv2d":
        w = f["weight"].clone().requires_grad_(True); b = f["bias"].clone().requires_grad_(True); ps = {"dweight": w, "dbias": b}
        y = F.conv2d(x, w, b, padding=L["padding"], stride=L["stride"])
    elif t == "relu": y = F.relu(x)
    elif t == "sigmoid": y = torch.sigmoid(x)
    elif t == "maxpool2d":
        y, idx = F.max_pool2d(x, L["kernel_size"], L["stride"], return_indices=True)
        am = np.load(os.path.join(d, L["files"]["argmax"]))
        ok = am.dtype == np.int32 and am.shape == tuple(idx.shape) and bool((am == idx.numpy()).all())
        bad += not ok
        print(("ok  " if ok else "BAD ") + f"{L['name']} argmax: {am.dtype} {am.shape}, torch's indices {tuple(idx.shape)}")
    elif t == "flatten": y = x.reshape(f["y"].shape)
    elif t == "linear":
        w = f["weight"].clone().requires_grad_(True); b = f["bias"].clone().requires_grad_(True); ps = {"dweight": w, "dbias": b}
        y = F.linear(x.reshape(x.shape[0], -1), w, b)
    else:
        print("skip", t); continue
    cmp(f"{L['name']} y", f["y"], y.detach())
    y.backward(f["dy"].reshape(y.shape))
    cmp(f"{L['name']} dx", f["dx"], x.grad)
    for k, p in ps.items(): cmp(f"{L['name']} {k}", f[k], p.grad)
lf = {k: ld(v) for k, v in m["loss"]["files"].items()}
if m["loss"]["type"] == "mse":  # XOR: mean squared error of pred against target
    z = lf["pred"].clone().requires_grad_(True)
    loss = F.mse_loss(z, lf["target"]); loss.backward()
    cmp("loss", lf["loss"], loss.detach().view(1)); cmp("dpred", lf["dpred"], z.grad)
else:
    z = lf["logits"].clone().requires_grad_(True)
    loss = F.cross_entropy(z, lf["labels"].long()); loss.backward()
    cmp("loss", lf["loss"], loss.detach().view(1)); cmp("dlogits", lf["dlogits"], z.grad)
print("bad", bad)
sys.exit(1 if bad else 0)
