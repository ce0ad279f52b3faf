#!/usr/bin/env bash
# test_saved_tensors.sh: what `harness run --save-tensors` writes, for every
# operator, on edge shapes (tests/configs/edge/*.json: odd and prime sizes,
# 1-sized dimensions, batches, "same" with even filters, valid and explicit
# padding, a pad value, the three layouts, windows that do not divide the image,
# one class, one element), checked by tests/numpy_crosscheck.py against numpy
# formulas of its own: each case's manifest complete (the operator and every
# parameter), each .npy of the manifest's dtype and shape (pool2d's argmax and
# its reference int32), the reference and every output that ran agreeing with
# numpy. The PyTorch twin is tests/torch_crosscheck.py (where torch is).
. "$(dirname "$0")/lib.sh"
py=""
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import numpy' 2>/dev/null; then py=$p; break; fi
done
# numpy is installed by scripts/setup.sh: missing, the test fails rather than
# passing without checking anything
[ -n "$py" ] || { echo "FAIL: no python3 with numpy (scripts/setup.sh installs it)"; exit 1; }

for cfg in "$root"/tests/configs/edge/*.json; do
  name=$(basename "$cfg" .json)
  out=$("$h" run "$cfg" --backend emu --all --quick --quiet --force --save-tensors "$tmp/$name" \
        --out "$tmp/$name.csv" 2>&1)
  rc=$?
  [ "$rc" = 0 ] || { fail "$name: harness run exited $rc: $(printf '%s\n' "$out" | tail -n 5)"; continue; }
  res=$("$py" "$root/tests/numpy_crosscheck.py" "$tmp/$name" "$tmp/$name.csv" 2>&1) || fail "$name: $res"
  printf '%s\n' "$res" | tail -n 1
done

echo "== average pooling's argmax: no value, and the manifest says so"
"$py" - "$tmp/pool2d" <<'PY' || fail "pool2d's argmax in the manifests"
import glob, json, sys, numpy as np
seen = set()
for d in glob.glob(sys.argv[1] + "/case-*"):
    m = json.load(open(d + "/case.json")); a = m["buffers"]["argmax"]; mode = m["params"]["mode"]
    ref = np.load(d + "/argmax.reference.npy")
    assert ref.dtype == np.int32 and a["reference_dtype"] == "<i4", (d, ref.dtype)
    if mode == "avg":
        assert a["checked"] is False and a["reference"].startswith("not checked"), (d, a)
        assert ref.size == 0, d
    else:
        assert a["checked"] is True and a["reference"] == "full" and list(ref.shape) == a["shape"], (d, a)
    seen.add(mode)
assert seen == {"max", "avg"}, seen
PY

finish
