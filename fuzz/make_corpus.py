#!/usr/bin/env python3
"""make_corpus.py: writes the fuzzers' seed corpus (fuzz/corpus/config, fuzz/corpus/expr)
from configs/*.json and tests/configs/*.json, the expressions found in them, and a few
hand-written seeds for what those do not use. Run from anywhere; rerun after adding a
config. The fuzzers read these seeds and write what they find elsewhere (build-fuzz/)."""
import glob
import json
import os

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out_config = os.path.join(root, "fuzz", "corpus", "config")
out_expr = os.path.join(root, "fuzz", "corpus", "expr")
os.makedirs(out_config, exist_ok=True)
os.makedirs(out_expr, exist_ok=True)

EXPR_KEYS = {"where", "grid", "block", "shared_bytes", "atol", "rtol"}


def expressions(node, key=None, under_params=False):
    """Yields every expression of a config, as text."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from expressions(v, k, k == "params")
    elif isinstance(node, list):
        for v in node:
            yield from expressions(v, key, under_params)
    elif key in EXPR_KEYS or under_params:
        yield node if isinstance(node, str) else json.dumps(node)
    elif key == "args" and isinstance(node, str) and ":" in node:
        yield node.split(":", 1)[1].strip()


exprs = set()
for path in sorted(glob.glob(os.path.join(root, "configs", "*.json")) +
                   glob.glob(os.path.join(root, "tests", "configs", "*.json"))):
    text = open(path).read()
    if "variants" not in json.loads(text):
        continue  # not a sweep config (a training config's layers)
    if os.sep + "tests" + os.sep in path:
        # The fuzzed config lives in configs/; tests/configs' kernels are in
        # tests/kernels ("../kernels/"), the repository's in kernels ("../../kernels/").
        for q in '"', '-I':  # file names and include folders
            text = text.replace(q + "../kernels/", q + "../tests/kernels/").replace(q + "../../kernels/", q + "../kernels/")
    name = os.path.basename(os.path.dirname(path)) + "_" + os.path.basename(path)
    open(os.path.join(out_config, name), "w").write(text)
    exprs.update(expressions(json.loads(text)))

kernel = "../kernels/conv2d/conv2d_pad.cu"
small = {
    "op": "conv2d",
    "axes": {"in_ch": [1, 2], "out_ch": 3, "filter_size": [3, 5], "img_size": [8, 9]},
    "where": ["in_ch <= out_ch", "filter_size < img_size"],
    "sample": {"count": 3, "seed": 7},
    "check": {"atol": "ACCUM_DTYPE == 'double' ? 1e-9 : 1e-4", "rtol": 0, "min_match": 1.0},
    "timing": {"repeat": 2, "warmup": 1, "hot": True},
    "emu": {"max_gflop": 0.5},
    "variants": [{
        "file": kernel, "kernel": "conv2d_pad", "name": "v",
        "defines": {"TILE_SIZE": [8, 16], "ACCUM_DTYPE": ["float", "double"]},
        "where": ["TILE_SIZE >= filter_size", "TILE_SIZE <= 16"],
        "block": ["TILE_SIZE", "TILE_SIZE"],
        "grid": ["ceil_div(w, TILE_SIZE)", "ceil_div(h, TILE_SIZE)", "out_ch"],
        "shared_bytes": "round_up(TILE_SIZE * TILE_SIZE * 4, 128)",
        "args": ["in", "out", "filter", "h", "w", "int: in_ch * 2", "long: out_ch",
                 "float: pad", "double: 1.5", "unsigned: filter_size", "debug_counter"],
    }],
}
open(os.path.join(out_config, "small_every_key.json"), "w").write(json.dumps(small, indent=1))
# A config, a NUL, then what --set would pass to hn_plan_make_case.
one = dict(small, sample={"count": 1, "seed": 1})
open(os.path.join(out_config, "small_with_set.bin"), "wb").write(
    json.dumps(one).encode() + b"\0in_ch=2, out_ch=7,filter_size=3,img_size=1e3")
exprs.update([
    "fs > 3 ? 10 : 20", "ACCUM_DTYPE == \"double\" && w != 0", "min(w, TILE_SIZE, 40)",
    "max(3, fs, half)", "0x20 + 1 - -2", "1e-5 * sqrt(w)", "!0 || half", "round_up(w, 32) % 7",
    "pow(2, 10) / 3", "int(log2(1024))", "abs(-4) <= 4", "float(floor(half)) + ceil(half)",
    "(w - 1) / TILE_SIZE >= 6", "big - 1", "small + 1", "empty != 'x'",
])
for i, e in enumerate(sorted(exprs)):
    open(os.path.join(out_expr, "%03d" % i), "w").write(e)
print("%d configs, %d expressions" % (len(os.listdir(out_config)), len(os.listdir(out_expr))))
