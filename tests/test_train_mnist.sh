#!/usr/bin/env bash
# test_train_mnist.sh: `harness train mnist` learns: the chapter's CNN (the
# default model) on the first 2560 images of Fashion-MNIST (Debian's
# dataset-fashion-mnist, installed by scripts/setup.sh), one pass, batch 64,
# Adam 1e-3, then 500 test images: the test accuracy must be clearly above
# chance (over 50 % on 10 classes; about 65 % is usual), the running loss must
# fall, and the run reports time per epoch and per layer. On the emulator the
# training config is tests/configs/train_emu.json (the same results as the
# default config, with kernels that run faster there); about a minute on two
# cores. Skipped (77) where the data set is not installed.
. "$(dirname "$0")/lib.sh"
data=${HARNESS_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
if [ ! -e "$data/train-images-idx3-ubyte.gz" ] && [ ! -e "$data/train-images-idx3-ubyte" ]; then
  echo "FAIL: no Fashion-MNIST in $data (scripts/setup.sh installs dataset-fashion-mnist)"
  exit 1
fi

out=$("$h" train mnist --data "$data" --limit 2560 --test-limit 500 --epochs 1 --interval 8 \
      --kernels "$root/tests/configs/train_emu.json" --out "$tmp/curve.csv" 2>&1)
rc=$?
printf '%s\n' "$out" | grep -vE '^  [a-z_0-9]+\.[a-z_]+ ' | tail -n 30
[ "$rc" = 0 ] || fail "train mnist exited $rc"
case "$out" in
  *"Model (206922 parameters): Conv2D(1->16, k3, p1), ReLU, MaxPool2D(2), Conv2D(16->32, k3, p1), ReLU, MaxPool2D(2), Flatten, Linear(1568->128), ReLU, Linear(128->10)"*) ;;
  *) fail "the default model is not the chapter's CNN" ;;
esac
case "$out" in *"batch 64, Adam lr 0.001"*) ;; *) fail "not batch 64 and Adam 1e-3 by default" ;; esac
acc=$(printf '%s\n' "$out" | sed -n 's/^Test accuracy: \([0-9.]*\) %.*/\1/p')
[ -n "$acc" ] || fail "no 'Test accuracy: ... %' line"
awk -v a="${acc:-0}" 'BEGIN { exit !(a > 50) }' || fail "test accuracy $acc % is not above 50 %"
printf '%s\n' "$out" | grep -q '^Time per epoch: ' || fail "no time per epoch"
printf '%s\n' "$out" | grep -q 'Linear(1568->128) ' || fail "no time per layer"
printf '%s\n' "$out" | grep -qE '^Epoch \[1/1\], Step \[8/40\], Loss: [0-9.]+, Accuracy: [0-9.]+%, [0-9]+ images/s' ||
  fail "no progress line at step 8"
# the curve: 5 training rows and the test row; the running loss falls
[ "$(wc -l <"$tmp/curve.csv")" = 7 ] || fail "the curve has $(wc -l <"$tmp/curve.csv") lines, expected 7"
awk -F, 'NR == 2 { first = $5 } $1 == "train" { last = $5 } END { exit !(last < first) }' "$tmp/curve.csv" ||
  fail "the running loss did not fall: $(cat "$tmp/curve.csv")"
grep -q '^test,1,40,2560,' "$tmp/curve.csv" || fail "no test row in the curve"

finish "(test accuracy $acc %)"
