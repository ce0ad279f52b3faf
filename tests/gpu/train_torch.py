#!/usr/bin/env python3
"""train_torch.py DATA [--epochs 3] [--batch 64] [--lr 1e-3] [--seed 42]: PyTorch's
side of harness train's comparison on a GPU (issue 12): the chapter's CNN (Conv
1->16 k3 p1, ReLU, MaxPool 2, Conv 16->32 k3 p1, ReLU, MaxPool 2, Linear
1568->128, ReLU, Linear 128->10), Adam, softmax cross-entropy, the same recipe
as `harness train mnist` (its normalisation too), eager mode, data preloaded on the device (as harness
does), the training set shuffled every epoch. Prints one line per epoch with its
time and the test accuracy at the end, in the words harness train uses, so the
two logs read side by side:

    epoch 1: 4.21 s
    Test accuracy: 88.12 % (8812 of 10000)
    time per epoch: 4.18 s (mean of 3)

Reads the four IDX files (gzipped or not) of DATA. Exit 2 when torch or CUDA is
missing: its times only mean something on a GPU. `--cpu --limit N` is an
accuracy-only run beside `harness train mnist --backend emu --limit N`.
"""
import argparse
import gzip
import os
import struct
import sys
import time


def read_idx(folder, stem):
    for name in (stem, stem + ".gz"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rb") as f:
                data = f.read()
            magic, = struct.unpack(">I", data[:4])
            ndim = magic & 0xFF
            dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
            return dims, data[4 + 4 * ndim:]
    sys.exit(f"train_torch.py: {folder}: no {stem}(.gz)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--limit", type=int, default=0, help="train on the first N images (harness train --limit)")
    ap.add_argument("--cpu", action="store_true",
                    help="run on the CPU: for an accuracy comparison with the emulator, not for time")
    a = ap.parse_args()
    try:
        import torch
        import torch.nn as nn
    except ImportError:
        print("train_torch.py: no torch here", file=sys.stderr)
        return 2
    if not a.cpu and not torch.cuda.is_available():
        print("train_torch.py: no CUDA device (--cpu for an accuracy-only run)", file=sys.stderr)
        return 2
    dev = torch.device("cpu" if a.cpu else "cuda")
    sync = (lambda: None) if a.cpu else torch.cuda.synchronize
    torch.manual_seed(a.seed)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False

    def load(prefix):
        (n, h, w), img = read_idx(a.data, f"{prefix}-images-idx3-ubyte")
        (m,), lab = read_idx(a.data, f"{prefix}-labels-idx1-ubyte")
        assert n == m, (n, m)
        x = torch.frombuffer(bytearray(img), dtype=torch.uint8).reshape(n, 1, h, w).float().div_(255.0)
        y = torch.frombuffer(bytearray(lab), dtype=torch.uint8).long()
        return x.to(dev), y.to(dev)

    xtr, ytr = load("train")
    if a.limit > 0:
        xtr, ytr = xtr[:a.limit], ytr[:a.limit]
    xte, yte = load("t10k")
    # harness train's normalisation: (p / 255 - mean) / std with the mean and
    # standard deviation of the training images used, in double
    mean = xtr.double().mean().item()
    std = max(xtr.double().pow(2).mean().item() - mean * mean, 1e-12) ** 0.5
    xtr, xte = (xtr - mean) / std, (xte - mean) / std
    print(f"normalised with mean {mean:.4f}, std {std:.4f} (of the training images used)")
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    loss_fn = nn.CrossEntropyLoss()
    times = []
    for epoch in range(a.epochs):
        sync()
        t0 = time.perf_counter()
        order = torch.randperm(xtr.shape[0], device=dev)
        for i in range(0, xtr.shape[0], a.batch):
            idx = order[i:i + a.batch]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
        sync()
        times.append(time.perf_counter() - t0)
        print(f"epoch {epoch + 1}: {times[-1]:.2f} s (loss {loss.item():.4f})", flush=True)
    model.eval()
    with torch.no_grad():
        correct = sum(int((model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum())
                      for i in range(0, xte.shape[0], 1000))
    print(f"Test accuracy: {100.0 * correct / xte.shape[0]:.2f} % ({correct} of {xte.shape[0]})")
    print(f"time per epoch: {sum(times) / len(times):.2f} s (mean of {len(times)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
