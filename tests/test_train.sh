#!/usr/bin/env bash
# test_train.sh: harness train on the emulator, without a data set of its own:
# the gradient check (every layer's backward against finite differences, and a
# broken kernel binding that it must catch), XOR (loss under 1e-3 within 1000
# epochs; two runs of one seed give the same losses, bit for bit), weights saved
# and loaded, --save-tensors checked layer by layer against numpy, the curve's
# chart, bad training configs and bad IDX files (exit 2 naming the file and the
# problem), and a tiny synthetic MNIST-shaped run end to end.
# tests/test_train_mnist.sh trains on Fashion-MNIST.
. "$(dirname "$0")/lib.sh"
py=""
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import numpy' 2>/dev/null; then py=$p; break; fi
done

echo "== gradient check"
out=$("$h" train gradcheck --backend emu 2>&1)
rc=$?
printf '%s\n' "$out" | tail -n 3
[ "$rc" = 0 ] || fail "gradcheck exited $rc: $out"
case "$out" in *"every gradient matches"*) ;; *) fail "gradcheck: $out" ;; esac
# a wrong binding (conv2d's data gradient told the padding is 0) must be caught
sed -e 's|"\.\./\.\./kernels/|"'"$root"'/kernels/|g' \
    -e 's|"args": \["dout", "filter", "din", "n", "in_ch", "out_ch", "h", "w", "filter_size", "padding"\]|"args": ["dout", "filter", "din", "n", "in_ch", "out_ch", "h", "w", "filter_size", "int: 0"]|' \
    "$root/configs/train/default.json" >"$tmp/broken.json"
grep -q '"int: 0"\]' "$tmp/broken.json" || fail "the broken config was not made"
out=$("$h" train gradcheck --backend emu --kernels "$tmp/broken.json" 2>&1)
rc=$?
[ "$rc" = 1 ] || fail "gradcheck of the broken config exited $rc, expected 1"
case "$out" in *"Conv2D(2->3, k3, p1) 5x6     dx"*FAIL*) ;; *) fail "gradcheck missed the wrong padding: $out" ;; esac
# --seed: other inputs (no option is silently ignored); --quiet: the failing tensors only
out=$("$h" train gradcheck --backend emu --seed 5 --quiet 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "gradcheck --seed 5 exited $rc: $out"
case "$out" in *"inputs from seed 5"*"every gradient matches"*) ;; *) fail "gradcheck --seed 5: $out" ;; esac
[ "$(printf '%s\n' "$out" | wc -l)" = 2 ] || fail "gradcheck --quiet printed the tensors that pass: $out"
out=$("$h" train gradcheck --backend emu --quiet --kernels "$tmp/broken.json" 2>&1)
[ "$(printf '%s\n' "$out" | grep -c FAIL)" = "$(printf '%s\n' "$out" | grep -c '^  ')" ] && [ -n "$(printf '%s\n' "$out" | grep FAIL)" ] ||
  fail "gradcheck --quiet of the broken config: $out"

echo "== XOR: loss under 1e-3, deterministic"
"$h" train xor --backend emu --out "$tmp/xor1.csv" --save "$tmp/xor.weights" >"$tmp/xor1.txt" 2>&1 || fail "xor exited $?"
"$h" train xor --backend emu --out "$tmp/xor2.csv" >"$tmp/xor2.txt" 2>&1 || fail "xor (second run) exited $?"
tail -n 12 "$tmp/xor1.txt" | head -n 9
final=$(grep '^Final loss: ' "$tmp/xor1.txt" | awk '{print $3}')
[ -n "$final" ] || fail "no 'Final loss:' line"
awk -v l="$final" 'BEGIN { exit !(l < 1e-3) }' || fail "XOR final loss $final is not below 1e-3"
grep -q '^Final predictions:' "$tmp/xor1.txt" || fail "no final predictions"
grep -q '^Epoch \[1000/1000\], Loss: ' "$tmp/xor1.txt" || fail "no progress line for epoch 1000"
cmp -s <(grep -E '^(Epoch|Final|\[)' "$tmp/xor1.txt") <(grep -E '^(Epoch|Final|\[)' "$tmp/xor2.txt") ||
  fail "two runs of one seed printed different losses"
cmp -s <(cut -d, -f1-6 "$tmp/xor1.csv") <(cut -d, -f1-6 "$tmp/xor2.csv") || fail "two runs of one seed wrote different curves"
[ "$(wc -l <"$tmp/xor1.csv")" = 11 ] || fail "the XOR curve has $(wc -l <"$tmp/xor1.csv") lines, expected 11"
head -n 1 "$tmp/xor1.csv" | grep -q '^split,epoch,step,images,loss,accuracy' || fail "curve header: $(head -n 1 "$tmp/xor1.csv")"
grep -q "Where the time went" "$tmp/xor1.txt" || fail "no time per layer"
"$h" train xor --backend emu --seed 7 --epochs 100 --out "$tmp/xor3.csv" >"$tmp/xor3.txt" 2>&1
cmp -s <(grep '^Epoch \[100/' "$tmp/xor1.txt") <(grep '^Epoch \[100/' "$tmp/xor3.txt") && fail "another seed gave the same loss"
"$h" train xor --backend emu --optimizer sgd --lr 0.5 --epochs 300 --quiet --out "$tmp/sgd.csv" >"$tmp/sgd.txt" 2>&1 ||
  fail "sgd exited $?"
sgd=$(grep '^Final loss: ' "$tmp/sgd.txt" | awk '{print $3}')
awk -v l="$sgd" 'BEGIN { exit !(l < 1e-3) }' || fail "XOR with SGD (momentum 0.9, lr 0.5) ends at loss $sgd after 300 epochs"

echo "== weights saved and loaded"
out=$("$h" train xor --backend emu --epochs 0 --load "$tmp/xor.weights" --out "$tmp/xor0.csv" 2>&1)
[ $? = 0 ] || fail "--load exited: $out"
[ "$(printf '%s\n' "$out" | grep '^Final loss')" = "$(grep '^Final loss' "$tmp/xor1.txt")" ] ||
  fail "the loaded weights do not give the saved model's loss: $out"
printf 'HNWEIGHTS1\nlinear_1.weight 2 16 3\n' >"$tmp/other.weights"
expect 2 "expected tensor 'linear_1.weight 2 16 2' here" "$h" train xor --backend emu --epochs 0 --load "$tmp/other.weights" --out "$tmp/x.csv"
head -c 100 "$tmp/xor.weights" >"$tmp/short.weights"
expect 2 "truncated in linear_1.weight" "$h" train xor --backend emu --epochs 0 --load "$tmp/short.weights" --out "$tmp/x.csv"

echo "== --save-tensors"
"$h" train xor --backend emu --epochs 2 --save-tensors "$tmp/tensors" --quiet --out "$tmp/x.csv" >/dev/null 2>&1 || fail "--save-tensors exited $?"
for f in layers.json 01_linear_1.x.npy 01_linear_1.dx.npy 01_linear_1.dweight.npy 04_sigmoid_4.y.npy loss.dpred.npy; do
  [ -s "$tmp/tensors/$f" ] || fail "--save-tensors wrote no $f"
done
if [ -n "$py" ]; then
  "$py" "$root/tests/train_check_tensors.py" "$tmp/tensors" || fail "XOR's saved tensors disagree with numpy"
else
  echo "skipped the numpy checks: no python3 with numpy"
fi

echo "== the curve's chart"
if command -v gnuplot >/dev/null 2>&1 || [ -n "${HARNESS_GNUPLOT:-}" ]; then
  out=$("$h" plot "$tmp/xor1.csv" --out "$tmp/xor.png" 2>&1)
  [ $? = 0 ] && [ -s "$tmp/xor.png" ] || fail "harness plot of the curve: $out"
  case "$out" in *"training loss and accuracy"*) ;; *) fail "plot did not draw the training chart: $out" ;; esac
else
  echo "skipped: no gnuplot"
fi

echo "== bad training configs"
printf '{"layers": {"linear": {"forwrd": {}}}}' >"$tmp/c1.json"
expect 2 "c1.json: layers.linear.forwrd: unknown layer type and pass" "$h" train xor --backend emu --kernels "$tmp/c1.json"
sed -e 's|"ceil_div(out_f, TILE)", "ceil_div(batch, TILE)"|"ceil_div(out_features, TILE)", "ceil_div(batch, TILE)"|' \
    -e 's|"\.\./\.\./kernels/|"'"$root"'/kernels/|g' "$root/configs/train/default.json" >"$tmp/c2.json"
expect 2 "c2.json: layers.linear.forward.grid[0]: in 'ceil_div(out_features, TILE)': unknown name 'out_features'" \
  "$h" train xor --backend emu --kernels "$tmp/c2.json"
printf '{"layers": {"relu": {"forward": {"file": "x.cu", "kernel": "k", "block": [1], "grid": [1], "args": []}}}}' >"$tmp/c3.json"
expect 2 "layers.relu.forward.file: file 'x.cu' not found" "$h" train xor --backend emu --kernels "$tmp/c3.json"
printf '{"layers": {}}' >"$tmp/c4.json"
expect 2 "layers.linear.forward: missing (the model needs it)" "$h" train xor --backend emu --kernels "$tmp/c4.json"
printf '{"kernel": "no_such_kernel", "results": [{"defines": "TILE=8"}]}' >"$tmp/best.json"
expect 2 "it tunes kernel 'no_such_kernel', which no slot" "$h" train xor --backend emu --tuned "$tmp/best.json"
printf '{"kernel": "linear_tiled", "results": [{"defines": "TILE=8"}, {"defines": "TILE=32"}, {"defines": "TILE=8"}]}' >"$tmp/best.json"
out=$("$h" train xor --backend emu --epochs 5 --tuned "$tmp/best.json" --out "$tmp/x.csv" 2>&1)
[ $? = 0 ] || fail "--tuned exited: $out"
case "$out" in *"linear_tiled[TILE=8]"*"tuned: $tmp/best.json"*) ;; *) fail "--tuned did not take TILE=8: $out" ;; esac
expect 2 "unknown task 'cifar'" "$h" train cifar
expect 2 "--limit is not an option of this task" "$h" train xor --limit 5
expect 2 "--epochs is not an option of this task" "$h" train gradcheck --epochs 2
expect 2 "train mnist needs --data DIR" "$h" train mnist --backend emu
expect 2 "--optimizer: 'rmsprop' is not one of sgd, adam" "$h" train xor --backend emu --optimizer rmsprop --out "$tmp/x.csv"

echo "== IDX files"
if [ -n "$py" ]; then
  # a tiny MNIST-shaped set: 8x8 images, 24 training and 8 test samples
  "$py" - "$tmp/idx" <<'PY'
import gzip, os, struct, sys
import numpy as np
d = sys.argv[1]; os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(5)
def write(name, arr, gz=True):
    head = struct.pack(">BBBB", 0, 0, 8, arr.ndim) + b"".join(struct.pack(">I", s) for s in arr.shape)
    data = head + arr.astype(np.uint8).tobytes()
    path = os.path.join(d, name)
    if gz:
        with gzip.open(path + ".gz", "wb") as f: f.write(data)
    else:
        open(path, "wb").write(data)
for prefix, n in (("train", 24), ("t10k", 8)):
    labels = rng.integers(0, 10, n)
    images = rng.integers(0, 40, (n, 8, 8)) + 20 * labels[:, None, None]  # the label shows in the brightness
    write(f"{prefix}-images-idx3-ubyte", images, gz=(prefix == "train"))
    write(f"{prefix}-labels-idx1-ubyte", labels, gz=(prefix == "train"))
PY
  d="$tmp/idx"
  out=$("$h" train mnist --backend emu --data "$d" --epochs 2 --batch 8 --interval 1 --out "$tmp/m.csv" \
        --save-tensors "$tmp/mt" --kernels "$root/tests/configs/train_emu.json" 2>&1)
  [ $? = 0 ] || fail "mnist on the synthetic set exited: $out"
  printf '%s\n' "$out" | grep -E '^(Epoch|Test accuracy)' | tail -n 3
  case "$out" in *"Test accuracy: "*" %"*) ;; *) fail "no test accuracy line: $out" ;; esac
  case "$out" in *"Conv2D(16->32, k3, p1)"*) ;; *) fail "no per-layer time: $out" ;; esac
  "$py" "$root/tests/train_check_tensors.py" "$tmp/mt" || fail "the CNN's saved tensors disagree with numpy"
  # 7x9 images (odd, and neither pooling divides them: 7x9 -> 3x4 -> 1x2) in
  # batches of 3, on the default kernels: every layer's tensors against numpy
  "$py" - "$tmp/idx79" <<'PY'
import os, struct, sys
import numpy as np
d = sys.argv[1]; os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(7)
for prefix, n in (("train", 6), ("t10k", 3)):
    img = rng.integers(0, 256, (n, 7, 9)).astype(np.uint8)
    lab = rng.integers(0, 10, n).astype(np.uint8)
    open(os.path.join(d, prefix + "-images-idx3-ubyte"), "wb").write(struct.pack(">IIII", 2051, n, 7, 9) + img.tobytes())
    open(os.path.join(d, prefix + "-labels-idx1-ubyte"), "wb").write(struct.pack(">II", 2049, n) + lab.tobytes())
PY
  out=$("$h" train mnist --backend emu --data "$tmp/idx79" --epochs 1 --batch 3 --out "$tmp/m79.csv" \
        --save-tensors "$tmp/mt79" 2>&1)
  [ $? = 0 ] || fail "mnist on 7x9 images exited: $out"
  "$py" "$root/tests/train_check_tensors.py" "$tmp/mt79" >/dev/null || fail "the CNN's tensors on 7x9 images disagree with numpy"

  cp -r "$d" "$tmp/bad"
  b="$tmp/bad"
  # missing
  mv "$b/t10k-labels-idx1-ubyte" "$b/gone"
  expect 2 "$b: no t10k labels (tried t10k-labels-idx1-ubyte, t10k-labels.idx1-ubyte" "$h" train mnist --backend emu --data "$b"
  mv "$b/gone" "$b/t10k-labels-idx1-ubyte"
  # wrong magic (a labels file where the images should be)
  cp "$b/t10k-images-idx3-ubyte" "$b/keep"
  cp "$b/t10k-labels-idx1-ubyte" "$b/t10k-images-idx3-ubyte"
  expect 2 "$b/t10k-images-idx3-ubyte: wrong magic 00 00 08 01 (expected 00 00 08 03" "$h" train mnist --backend emu --data "$b"
  # truncated, plain
  head -c 300 "$b/keep" >"$b/t10k-images-idx3-ubyte"
  expect 2 "$b/t10k-images-idx3-ubyte: truncated: the header announces 512 bytes of data, the file holds 284" \
    "$h" train mnist --backend emu --data "$b"
  cp "$b/keep" "$b/t10k-images-idx3-ubyte"
  # truncated, gzipped
  cp "$b/train-images-idx3-ubyte.gz" "$b/keep.gz"
  head -c 200 "$b/keep.gz" >"$b/train-images-idx3-ubyte.gz"
  expect 2 "$b/train-images-idx3-ubyte.gz: truncated" "$h" train mnist --backend emu --data "$b"
  cp "$b/keep.gz" "$b/train-images-idx3-ubyte.gz"
  # counts that disagree
  "$py" -c "
import struct, sys
p = sys.argv[1]; b = open(p, 'rb').read()
open(p, 'wb').write(b[:4] + struct.pack('>I', 7) + b[8:15])" "$b/t10k-labels-idx1-ubyte"
  expect 2 "$b/t10k-images-idx3-ubyte holds 8 images but $b/t10k-labels-idx1-ubyte holds 7 labels" \
    "$h" train mnist --backend emu --data "$b"
  # a label that is not a class
  "$py" -c "
import struct, sys
p = sys.argv[1]; open(p, 'wb').write(bytes([0, 0, 8, 1]) + struct.pack('>I', 8) + bytes([1, 2, 3, 12, 4, 5, 6, 7]))" "$b/t10k-labels-idx1-ubyte"
  expect 2 "$b/t10k-labels-idx1-ubyte: label 12 of sample 3 is not a class (0 to 9)" "$h" train mnist --backend emu --data "$b"
  # more data than the header says
  cp "$d/t10k-labels-idx1-ubyte" "$b/t10k-labels-idx1-ubyte"
  printf 'x' >>"$b/t10k-labels-idx1-ubyte"
  expect 2 "$b/t10k-labels-idx1-ubyte: more data than the header announces" "$h" train mnist --backend emu --data "$b"
else
  echo "skipped the IDX checks: no python3 with numpy"
fi

finish
