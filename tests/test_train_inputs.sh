#!/usr/bin/env bash
# test_train_inputs.sh: harness train with the inputs an outside user brings, on
# the emulator, with tiny synthetic IDX files written here (bash and gzip; no
# python, no data set of the repository's):
#   - the data set as distributed in the wild: LeCun's .gz, unpacked, Kaggle's and
#     Windows unzips' dot names (train-images.idx3-ubyte), Kaggle's folders of the
#     file's own name, torchvision's MNIST/raw with the .gz next to the unpacked
#     file (--data MNIST or MNIST/raw); nothing found lists the names tried; a
#     broken file next to another candidate names both;
#   - broken files: a truncated .gz, trailing garbage after the gzip stream (read),
#     another IDX data type, idx2 images, zero images, labels past the classes,
#     5x7 images (the model adapts), 3x28 ones (refused), test images of another
#     size: each exit 2 naming the file and the problem, or a run that works;
#   - odd options: --batch 0 / --limit 0 / --interval 0 refused, a batch larger
#     than the data, --batch 1, a batch that does not divide the data (the last
#     partial batch trains and counts), --epochs 0, a divergent --lr (stops,
#     exit 1, says so, no NaN weights saved), --seed bit for bit, SGD, --load of
#     another task's weights and of a truncated file, the curve's chart;
#   - --kernels: a copy of the default config elsewhere (its relative paths),
#     other catalogue variants, a user's own kernel, kernels with bugs that the
#     gradient check must catch (a wrong backward, a forward that skips an
#     element), a missing slot, an unknown slot, an argument no slot has, a
#     block over the device's threads (exit 2 naming the JSON path, gradcheck too); --tuned of a tune of a kernel the
#     model runs and of one it does not.
# About half a minute on two cores.
. "$(dirname "$0")/lib.sh"
emu=(--backend emu)
# (--out "$tmp/c.csv" unless the call gives its own: an option given twice is an error)
train() {
  case " $* " in
    *" --out "*) "$h" train mnist "${emu[@]}" "$@" ;;
    *) "$h" train mnist "${emu[@]}" --out "$tmp/c.csv" "$@" ;;
  esac
}

# --- synthetic IDX files ---------------------------------------------------
u32() { printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) $(($1 >> 8 & 255)) $(($1 & 255)); }
label_of() { echo $((($1 * 7 + 3) % 10)); }
# images FILE N ROWS COLS: the label shows in the brightness
images() {
  local n=$2 r=$3 c=$4 s i p
  s="\\x00\\x00\\x08\\x03$(u32 "$n")$(u32 "$r")$(u32 "$c")"
  for ((i = 0; i < n; i++)); do
    local l
    l=$(label_of $i)
    for ((p = 0; p < r * c; p++)); do s+=$(printf '\\x%02x' $(((p * 37 + i * 11) % 40 + 20 * l))); done
  done
  printf "$s" >"$1"
}
labels() {
  local n=$2 s i
  s="\\x00\\x00\\x08\\x01$(u32 "$n")"
  for ((i = 0; i < n; i++)); do s+=$(printf '\\x%02x' "$(label_of $i)"); done
  printf "$s" >"$1"
}
# set DIR [ROWS COLS]: LeCun's four files, unpacked (24 training, 8 test images)
set_plain() {
  mkdir -p "$1"
  images "$1/train-images-idx3-ubyte" 24 "${2:-8}" "${3:-8}"
  labels "$1/train-labels-idx1-ubyte" 24
  images "$1/t10k-images-idx3-ubyte" 8 "${2:-8}" "${3:-8}"
  labels "$1/t10k-labels-idx1-ubyte" 8
}
set_plain "$tmp/plain"
P="$tmp/plain"
NAMES="train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte"

echo "== data sets as distributed"
mkdir -p "$tmp/lecun" "$tmp/kaggle" "$tmp/kagglegz" "$tmp/kfolders" "$tmp/tv/MNIST/raw"
for f in $NAMES; do
  gzip -c "$P/$f" >"$tmp/lecun/$f.gz"
  dot=${f/-idx/.idx}
  cp "$P/$f" "$tmp/kaggle/$dot"
  gzip -c "$P/$f" >"$tmp/kagglegz/$dot.gz"
  mkdir -p "$tmp/kfolders/$f" && cp "$P/$f" "$tmp/kfolders/$f/$f"
  cp "$P/$f" "$tmp/tv/MNIST/raw/$f" && gzip -c "$P/$f" >"$tmp/tv/MNIST/raw/$f.gz"
done
ref=""
for d in plain lecun kaggle kagglegz kfolders tv/MNIST tv/MNIST/raw; do
  out=$(train --data "$tmp/$d" --epochs 1 --batch 8 --seed 1 2>&1)
  rc=$?
  [ "$rc" = 0 ] || { fail "--data $d exited $rc: $out"; continue; }
  files=$(printf '%s\n' "$out" | grep '^Files: ')
  case "$d" in
    lecun) case "$files" in *"lecun/train-images-idx3-ubyte.gz, "*) ;; *) fail "lecun: $files" ;; esac ;;
    kaggle) case "$files" in *"kaggle/train-images.idx3-ubyte, "*"kaggle/t10k-labels.idx1-ubyte") ;; *) fail "kaggle: $files" ;; esac ;;
    kfolders) case "$files" in *"kfolders/train-images-idx3-ubyte/train-images-idx3-ubyte, "*) ;; *) fail "kfolders: $files" ;; esac ;;
    tv/*) # the unpacked copy is read, its .gz is no news
      case "$files" in *"MNIST/raw/train-images-idx3-ubyte, "*) ;; *) fail "$d: $files" ;; esac
      printf '%s\n' "$out" | grep -q 'also there' && fail "$d: a note about the .gz next to the unpacked file: $out" ;;
  esac
  res=$(printf '%s\n' "$out" | grep -E '^(Epoch \[1/1\], Step|Test accuracy)' | sed 's/, [0-9]* images\/s//; s/evaluated in.*//')
  if [ -z "$ref" ]; then ref=$res; elif [ "$res" != "$ref" ]; then fail "--data $d trained otherwise than plain: $res vs $ref"; fi
done
expect 0 "Files: $tmp/tv/MNIST/raw/train-images-idx3-ubyte, " train --data "$tmp/tv/MNIST/" --epochs 0
expect 2 "no train images (tried train-images-idx3-ubyte, train-images.idx3-ubyte, train-images-idx3-ubyte.gz, train-images.idx3-ubyte.gz, in $tmp/tv and in $tmp/tv/raw" \
  train --data "$tmp/tv"
expect 2 "--data $tmp/nowhere: no such folder" train --data "$tmp/nowhere"
expect 2 "--data $tmp/lecun/train-images-idx3-ubyte.gz: is a file; --data names the folder holding the four IDX files (here $tmp/lecun)" \
  train --data "$tmp/lecun/train-images-idx3-ubyte.gz"
mkdir -p "$tmp/half" && cp "$P"/train-* "$tmp/half/"
expect 2 "$tmp/half: no t10k images (tried t10k-images-idx3-ubyte" train --data "$tmp/half"
# ambiguity: the unpacked file is read before its .gz; when it is broken, both are named
cp -r "$tmp/tv/MNIST" "$tmp/amb"
head -c 300 "$P/train-images-idx3-ubyte" >"$tmp/amb/raw/train-images-idx3-ubyte"
expect 2 "$tmp/amb/raw/train-images-idx3-ubyte: truncated: the header announces 1536 bytes of data, the file holds 284 ($tmp/amb/raw/train-images-idx3-ubyte.gz is there too, not read" \
  train --data "$tmp/amb" --epochs 0
# two different names: the -idx one is read, the other named
cp -r "$P" "$tmp/two" && cp "$P/t10k-labels-idx1-ubyte" "$tmp/two/t10k-labels.idx1-ubyte"
out=$(train --data "$tmp/two" --epochs 0 2>&1) || fail "two names: $out"
case "$out" in *"(also there, not read: $tmp/two/t10k-labels.idx1-ubyte)"*) ;; *) fail "two names, no note: $out" ;; esac

echo "== broken files"
b="$tmp/bad"
reset() { rm -rf "$b"; cp -r "$tmp/lecun" "$b"; }
reset
gzip -c "$P/train-images-idx3-ubyte" | head -c 120 >"$b/train-images-idx3-ubyte.gz"
expect 2 "$b/train-images-idx3-ubyte.gz: truncated: the header announces 1536 bytes of data, the file holds" train --data "$b" --epochs 0
reset
printf 'trailing garbage' >>"$b/train-images-idx3-ubyte.gz" # gzip -d says "trailing garbage ignored"; so do we
expect 0 "Test accuracy: " train --data "$b" --epochs 0
reset
{ printf '\x00\x00\x0d\x03'; tail -c +5 "$P/train-images-idx3-ubyte"; } | gzip -c >"$b/train-images-idx3-ubyte.gz"
expect 2 "$b/train-images-idx3-ubyte.gz: wrong magic 00 00 0d 03 (expected 00 00 08 03: an idx3 file of unsigned bytes): an IDX file of 32-bit floats (type byte 0x0d); only unsigned bytes (0x08) are read" \
  train --data "$b" --epochs 0
reset
gzip -c "$P/train-labels-idx1-ubyte" >"$b/train-images-idx3-ubyte.gz"
expect 2 "$b/train-images-idx3-ubyte.gz: wrong magic 00 00 08 01 (expected 00 00 08 03: an idx3 file of unsigned bytes): an idx1 file (1 dimension) where images (count, rows, cols) are expected" \
  train --data "$b" --epochs 0
reset
printf 'just text, no IDX header' | gzip -c >"$b/train-images-idx3-ubyte.gz"
expect 2 "$b/train-images-idx3-ubyte.gz: wrong magic 6a 75 73 74 (expected 00 00 08 03: an idx3 file of unsigned bytes): not an IDX file" \
  train --data "$b" --epochs 0
reset
printf "\\x00\\x00\\x08\\x03$(u32 0)$(u32 8)$(u32 8)" | gzip -c >"$b/t10k-images-idx3-ubyte.gz"
printf "\\x00\\x00\\x08\\x01$(u32 0)" | gzip -c >"$b/t10k-labels-idx1-ubyte.gz"
expect 2 "$b/t10k-images-idx3-ubyte.gz: holds no images (the header's count is 0)" train --data "$b" --epochs 0
reset
{ printf "\\x00\\x00\\x08\\x01$(u32 8)"; printf '\x01\x02\x03\x0a\x04\x05\x06\x07'; } >"$b/t10k-labels-idx1-ubyte" && rm "$b/t10k-labels-idx1-ubyte.gz"
expect 2 "$b/t10k-labels-idx1-ubyte: label 10 of sample 3 is not a class (0 to 9)" train --data "$b" --epochs 0
reset
{ printf "\\x00\\x00\\x08\\x01$(u32 24)"; printf '\xff'; tail -c +10 "$P/train-labels-idx1-ubyte"; } | gzip -c >"$b/train-labels-idx1-ubyte.gz"
expect 2 "$b/train-labels-idx1-ubyte.gz: label 255 of sample 0 is not a class (0 to 9)" train --data "$b" --epochs 0
# other image sizes: the model adapts (5x7: 32 x 1 x 1 features), refuses what two poolings cannot take
set_plain "$tmp/s57" 5 7
out=$(train --data "$tmp/s57" --epochs 1 --batch 8 2>&1)
[ $? = 0 ] || fail "5x7 images: $out"
case "$out" in *"Linear(32->128)"*"5x7"*"Test accuracy: "*) ;; *) fail "5x7 images: $out" ;; esac
set_plain "$tmp/s3" 3 28
expect 2 "$tmp/s3/train-images-idx3-ubyte: 3x28 images are too small for two 2x2 poolings" train --data "$tmp/s3"
reset
cp "$tmp/s57/t10k-images-idx3-ubyte" "$tmp/s57/t10k-labels-idx1-ubyte" "$b/" && rm "$b"/t10k-*.gz
expect 2 "$b/train-images-idx3-ubyte.gz holds 8x8 images but $b/t10k-images-idx3-ubyte holds 5x7" train --data "$b"

echo "== odd options"
for o in batch limit test-limit interval; do
  expect 2 "--$o 0: must be at least 1" train --data "$P" --$o 0
done
expect 2 "--interval 0: must be at least 1" "$h" train xor "${emu[@]}" --interval 0
# a batch past the data: one step of all 24, the rest said; the same numbers as --batch 24
out=$(train --data "$P" --epochs 1 --batch 1000 --seed 3 2>&1) || fail "--batch 1000: $out"
case "$out" in *"1 epoch of 1 step, batch 24 (--batch 1000 is more than the 24 images: one step takes them all)"*) ;; *) fail "--batch 1000: $out" ;; esac
out24=$(train --data "$P" --epochs 1 --batch 24 --seed 3 2>&1) || fail "--batch 24: $out24"
[ "$(printf '%s\n' "$out" | grep '^Test accuracy' | cut -d, -f1-2)" = "$(printf '%s\n' "$out24" | grep '^Test accuracy' | cut -d, -f1-2)" ] ||
  fail "--batch 1000 and --batch 24 differ"
# a batch that does not divide the data: the last step has 4 images, trains and counts
out=$(train --data "$P" --epochs 1 --batch 5 --interval 1 2>&1) || fail "--batch 5: $out"
case "$out" in *"1 epoch of 5 steps (the last of 4 images), batch 5"*"Step [5/5]"*) ;; *) fail "--batch 5: $out" ;; esac
[ "$(grep -c '^train,' "$tmp/c.csv")" = 5 ] || fail "--batch 5: the curve has $(grep -c '^train,' "$tmp/c.csv") training rows: $(cat "$tmp/c.csv")"
grep -q '^train,1,5,24,' "$tmp/c.csv" || fail "--batch 5: the last row does not count 24 images: $(cat "$tmp/c.csv")"
# the running accuracy is right answers of all 24: a multiple of 1/24
acc=$(grep '^train,1,5,' "$tmp/c.csv" | cut -d, -f6)
awk -v a="$acc" 'BEGIN { r = a * 24; exit !(r - int(r + 0.5) < 1e-4 && int(r + 0.5) - r < 1e-4) }' || fail "accuracy $acc is not k/24"
expect 0 "1 epoch of 3 steps, batch 1," train --data "$P" --epochs 1 --batch 1 --limit 3
# a batch past the training images but not the 8 test images: the 4 training images in one step
expect 0 "1 epoch of 1 step, batch 4 (--batch 1000 is more than the 4 images: one step takes them all)" \
  train --data "$P" --epochs 1 --batch 1000 --limit 4
# XOR's too: a batch past its 4 samples is one step of all 4, as --batch 4
expect 0 "batch 4 (--batch 9 is more than the 4 samples: one step takes them all)" \
  "$h" train xor "${emu[@]}" --epochs 20 --batch 9 --out "$tmp/x.csv"
[ "$(printf '%s\n' "$out" | grep '^Final loss')" = "$("$h" train xor "${emu[@]}" --epochs 20 --out "$tmp/x.csv" 2>&1 | grep '^Final loss')" ] ||
  fail "xor --batch 9 trains otherwise than --batch 4: $out"
# --save and --save-tensors in a place that cannot be written: said before training, not after it
expect 2 "--save $tmp/c.csv/w.bin: $tmp/c.csv: cannot create folder: $tmp/c.csv is a file, not a folder" "$h" train xor "${emu[@]}" --epochs 5 --save "$tmp/c.csv/w.bin" --out "$tmp/x.csv"
case "$out" in *"Starting training"*) fail "--save under a file: trained before saying so: $out" ;; esac
expect 2 "--save-tensors $tmp/c.csv: is a file (expected a folder)" "$h" train xor "${emu[@]}" --epochs 5 --save-tensors "$tmp/c.csv" --out "$tmp/x.csv"
expect 2 "--save-tensors writes the first training step's tensors, and --epochs 0 trains none" \
  "$h" train xor "${emu[@]}" --epochs 0 --save-tensors "$tmp/st0" --out "$tmp/x.csv"
expect 0 "no training (--epochs 0): the initial weights, batch 8 (the default batch 64 is more than the 8 test images)" train --data "$P" --epochs 0
expect 0 "1 training images (of 24)" train --data "$P" --epochs 1 --limit 1
expect 0 "Test accuracy: " train --data "$P" --epochs 0
# Ctrl-C in the test pass stops it (exit 130), as in training: 5000 blank 8x8 test
# images in batches of 1 take long enough (seconds) to be interrupted; the weights are saved
big="$tmp/bigtest"
mkdir -p "$big"
cp "$P/train-images-idx3-ubyte" "$P/train-labels-idx1-ubyte" "$big/"
{ printf "\\x00\\x00\\x08\\x03$(u32 5000)$(u32 8)$(u32 8)"; head -c $((5000 * 64)) /dev/zero; } >"$big/t10k-images-idx3-ubyte"
{ printf "\\x00\\x00\\x08\\x01$(u32 5000)"; head -c 5000 /dev/zero | tr '\0' '\3'; } >"$big/t10k-labels-idx1-ubyte"
"$h" train mnist "${emu[@]}" --out "$tmp/ev.csv" --data "$big" --epochs 0 --batch 1 --save "$tmp/ev.bin" >"$tmp/ev.out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q '^Evaluating on' "$tmp/ev.out" && break; sleep 0.1; done
sleep 0.3
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 130 ] || fail "SIGINT in the test pass: exit $rc, expected 130: $(tail -n 5 "$tmp/ev.out")"
grep -q '^Interrupted in the test pass after [0-9]* of 5000 test images' "$tmp/ev.out" ||
  fail "SIGINT in the test pass: $(tail -n 5 "$tmp/ev.out")"
grep -q '^Test accuracy' "$tmp/ev.out" && fail "SIGINT in the test pass: it went on to the end"
[ -s "$tmp/ev.bin" ] || fail "SIGINT in the test pass: the weights were not saved"
# divergence: said, exit 1, no NaN weights written, the curve ends at the row that showed it
rm -f "$tmp/w.bin"
expect 1 "training diverged at epoch 1/2, step 2/3: the running loss is NaN. The learning rate (Adam 1e+09) is too high" \
  train --data "$P" --epochs 2 --batch 8 --lr 1e9 --interval 1 --save "$tmp/w.bin"
[ -e "$tmp/w.bin" ] && fail "diverged weights were saved"
[ "$(tail -n 1 "$tmp/c.csv" | cut -d, -f1-3)" = "train,1,2" ] || fail "the diverged curve: $(cat "$tmp/c.csv")"
expect 1 "training diverged at epoch 100/1000 (step 100): the running loss is NaN" "$h" train xor "${emu[@]}" --lr 1e30 --out "$tmp/x.csv"
# optimizers
expect 0 "SGD (no momentum) lr 0.5" "$h" train xor "${emu[@]}" --optimizer sgd --momentum 0 --lr 0.5 --epochs 20 --out "$tmp/x.csv"
expect 0 "SGD (momentum 0.5) lr 0.5" "$h" train xor "${emu[@]}" --optimizer SGD --momentum 0.5 --lr 0.5 --epochs 20 --out "$tmp/x.csv"
a=$("$h" train xor "${emu[@]}" --optimizer sgd --momentum 0 --lr 0.5 --epochs 20 --out "$tmp/x.csv" 2>&1 | grep '^Final loss')
b=$("$h" train xor "${emu[@]}" --optimizer sgd --lr 0.5 --epochs 20 --out "$tmp/x.csv" 2>&1 | grep '^Final loss')
[ -n "$a" ] && [ "$a" != "$b" ] || fail "--momentum 0 trains as momentum 0.9: $a / $b"
expect 0 "Adam lr 0.01" "$h" train xor "${emu[@]}" --optimizer Adam --epochs 20 --out "$tmp/x.csv"
expect 2 "--optimizer: 'adamw' is not one of sgd, adam" "$h" train xor "${emu[@]}" --optimizer adamw --out "$tmp/x.csv"
expect 2 "--momentum is SGD's (--optimizer sgd)" "$h" train xor "${emu[@]}" --momentum 0.5 --out "$tmp/x.csv"
expect 2 "--momentum 1: must be below 1" "$h" train xor "${emu[@]}" --optimizer sgd --momentum 1 --out "$tmp/x.csv"
# --seed: the same curve bit for bit, on 1 and 2 emulator threads; another seed another
train --data "$P" --epochs 2 --batch 8 --interval 1 --seed 9 --save "$tmp/s1.bin" --out "$tmp/s1.csv" >/dev/null 2>&1 || fail "seed run 1"
train --data "$P" --epochs 2 --batch 8 --interval 1 --seed 9 --save "$tmp/s2.bin" --out "$tmp/s2.csv" --emu-threads 1 >/dev/null 2>&1 || fail "seed run 2"
train --data "$P" --epochs 2 --batch 8 --interval 1 --seed 10 --out "$tmp/s3.csv" >/dev/null 2>&1 || fail "seed run 3"
cmp -s <(cut -d, -f1-6 "$tmp/s1.csv") <(cut -d, -f1-6 "$tmp/s2.csv") || fail "one seed, two curves"
cmp -s "$tmp/s1.bin" "$tmp/s2.bin" || fail "one seed, two sets of weights"
cmp -s <(cut -d, -f1-6 "$tmp/s1.csv") <(cut -d, -f1-6 "$tmp/s3.csv") && fail "another seed, the same curve"
# weights of another task, another image size, a truncated file
"$h" train xor "${emu[@]}" --epochs 5 --save "$tmp/xor.bin" --out "$tmp/x.csv" >/dev/null 2>&1 || fail "xor --save"
expect 2 "--load $tmp/xor.bin: expected tensor 'conv2d_1.weight 4 16 1 3 3' here, found 'linear_1.weight 2 16 2' (weights of another model?)" \
  train --data "$P" --epochs 0 --load "$tmp/xor.bin"
expect 2 "--load $tmp/s1.bin: expected tensor 'linear_1.weight 2 16 2' here, found 'conv2d_1.weight 4 16 1 3 3'" \
  "$h" train xor "${emu[@]}" --epochs 0 --load "$tmp/s1.bin" --out "$tmp/x.csv"
expect 2 "expected tensor 'linear_8.weight 2 128 32' here, found 'linear_8.weight 2 128 128'" train --data "$tmp/s57" --epochs 0 --load "$tmp/s1.bin"
# weights that are finite but so large that the output overflows: evaluated, the
# test loss is NaN, exit 1 (a failure of the run, not of its input), with --epochs 0 too
{
  printf 'HNWEIGHTS1\n'
  for t in "conv2d_1.weight 4 16 1 3 3:144" "conv2d_1.bias 1 16:16" "conv2d_4.weight 4 32 16 3 3:4608" "conv2d_4.bias 1 32:32" \
    "linear_8.weight 2 128 32:4096" "linear_8.bias 1 128:128" "linear_10.weight 2 10 128:1280" "linear_10.bias 1 10:10"; do
    printf '%s\n' "${t%:*}"
    head -c $((${t##*:} * 4)) /dev/zero | tr '\0' '\177' # 0x7f7f7f7f: 3.4e38
  done
} >"$tmp/huge.bin"
expect 1 "the test loss is NaN: the model's output is not a number (--load's weights are too large: the output overflowed)" \
  train --data "$tmp/s57" --epochs 0 --load "$tmp/huge.bin"
head -c 2000 "$tmp/s1.bin" >"$tmp/short.bin"
expect 2 "--load $tmp/short.bin: truncated in conv2d_4.weight" train --data "$P" --epochs 0 --load "$tmp/short.bin"
head -n 2 "$tmp/s1.bin" >"$tmp/head.bin" # the magic and the normalisation, no tensor
expect 2 "--load $tmp/head.bin: truncated before tensor 'conv2d_1.weight 4 16 1 3 3'" train --data "$P" --epochs 0 --load "$tmp/head.bin"
expect 0 "Test accuracy: " train --data "$P" --epochs 0 --load "$tmp/s1.bin"
# the input's normalisation travels with the weights: trained on the first 8
# images (their mean), evaluated with all 24 (another mean), the same test numbers
train --data "$P" --epochs 1 --batch 8 --limit 8 --save "$tmp/l8.bin" >"$tmp/l8.txt" 2>&1 || fail "--limit 8 --save: $(cat "$tmp/l8.txt")"
expect 0 "(from $tmp/l8.bin, as trained)" train --data "$P" --epochs 0 --load "$tmp/l8.bin"
case "$out" in *"Starting training"*) fail "--epochs 0 said it starts training: $out" ;; esac
case "$out" in *"no training (--epochs 0): $tmp/l8.bin, batch 8 "*) ;; *) fail "--epochs 0 --load: $out" ;; esac
[ "$(printf '%s\n' "$out" | grep '^Test accuracy' | cut -d, -f1-2)" = "$(grep '^Test accuracy' "$tmp/l8.txt" | cut -d, -f1-2)" ] ||
  fail "weights trained with --limit 8 evaluate otherwise when loaded: $(grep '^Test accuracy' "$tmp/l8.txt") / $out"
# a file without the line (written before it was added) loads, the normalisation from the data
{ head -n 1 "$tmp/l8.bin"; tail -n +3 "$tmp/l8.bin"; } >"$tmp/old.bin"
expect 0 "Test accuracy: " train --data "$P" --epochs 0 --load "$tmp/old.bin"
case "$out" in *"as trained"*) fail "a file without the normalisation: $out" ;; esac
{ head -n 1 "$tmp/l8.bin"; echo "input.normalise 0.5 0"; tail -n +3 "$tmp/l8.bin"; } >"$tmp/badnorm.bin"
expect 2 "--load $tmp/badnorm.bin: a broken 'input.normalise' line" train --data "$P" --epochs 0 --load "$tmp/badnorm.bin"
cp "$tmp/s1.bin" "$tmp/nan.bin" # the last bias made NaN
printf '\xff\xff\xff\x7f' | dd of="$tmp/nan.bin" bs=1 seek=$(($(stat -c %s "$tmp/nan.bin") - 4)) conv=notrunc 2>/dev/null
expect 2 "--load $tmp/nan.bin: linear_10.bias[9] is NaN: these weights cannot be trained or evaluated" \
  train --data "$P" --epochs 1 --load "$tmp/nan.bin"
# the curve's chart
if command -v gnuplot >/dev/null 2>&1; then
  out=$("$h" plot "$tmp/s1.csv" --out "$tmp/s1.png" 2>&1)
  [ $? = 0 ] && [ -s "$tmp/s1.png" ] || fail "harness plot of the curve: $out"
fi

echo "== --kernels and --tuned"
k="$tmp/cfg"
mkdir -p "$k"
cp "$root/configs/train/default.json" "$k/my.json" # its ../../kernels/ paths do not exist from here
xo=(--epochs 30 --out "$tmp/x.csv")
ref=$("$h" train xor "${emu[@]}" "${xo[@]}" 2>&1 | grep '^Final loss')
[ -n "$ref" ] || fail "xor with the default config"
[ "$(cd "$k" && "$h" train xor "${emu[@]}" "${xo[@]}" --kernels my.json 2>&1 | grep '^Final loss')" = "$ref" ] ||
  fail "a copy of the default config, relative name, other folder: $(cd "$k" && "$h" train xor "${emu[@]}" "${xo[@]}" --kernels my.json 2>&1 | tail -n 3)"
sed 's|"\.\./\.\./kernels/activation/relu.cu", "kernel": "relu_grid_stride"|"nothere.cu", "kernel": "relu_grid_stride"|' "$k/my.json" >"$k/nofile.json"
expect 2 "$k/nofile.json: layers.relu.forward.file: file 'nothere.cu' not found (looked for $k/nothere.cu, then " \
  "$h" train xor "${emu[@]}" "${xo[@]}" --kernels "$k/nofile.json"
# other catalogue variants: TILE 8 and 32 of the tiled linear, the naive kernels
for t in 8 32; do
  sed "0,/\"TILE\": 16/s//\"TILE\": $t/" "$k/my.json" >"$k/tile$t.json"
  out=$("$h" train xor "${emu[@]}" "${xo[@]}" --kernels "$k/tile$t.json" 2>&1)
  case "$out" in *"linear_tiled[TILE=$t]"*"Final loss"*) ;; *) fail "TILE $t: $out" ;; esac
  expect 0 "every gradient matches" "$h" train gradcheck "${emu[@]}" --kernels "$k/tile$t.json"
done
expect 0 "linear_naive" "$h" train xor "${emu[@]}" "${xo[@]}" --kernels "$root/tests/configs/train_emu.json"
# a user's own kernels for ReLU: one right, two wrong
cat >"$k/myrelu.cu" <<'EOF'
#include "hn_kernel.h"
#define EACH for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
__global__ void my_relu(const float *x, float *y, int n) { EACH y[i] = x[i] > 0.0f ? x[i] : 0.0f; }
/* wrong: leaks half the gradient where x < 0 */
__global__ void my_relu_bwd_leaky(const float *x, const float *dy, float *dx, int n) {
    EACH dx[i] = x[i] > 0.0f ? dy[i] : 0.5f * dy[i];
}
/* wrong: never writes the last element */
__global__ void my_relu_skips_last(const float *x, float *y, int n) {
    EACH if (i < n - 1) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
/* faults: writes through a null pointer */
__global__ void my_relu_faults(const float *x, float *y, int n) {
    float *out = n > 0 ? (float *)0 : y;
    EACH out[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
EOF
own() { sed "s|\"\\.\\./\\.\\./kernels/activation/relu.cu\", \"kernel\": \"$1\"|\"myrelu.cu\", \"kernel\": \"$2\"|" "$k/my.json" >"$k/$3.json"; }
own relu_grid_stride my_relu own
own relu_backward_grid_stride my_relu_bwd_leaky leaky
own relu_grid_stride my_relu_skips_last skips
own relu_grid_stride my_relu_faults faults
grep -q my_relu_skips_last "$k/skips.json" || fail "the config with the user's kernel was not made"
out=$("$h" train xor "${emu[@]}" "${xo[@]}" --kernels "$k/own.json" 2>&1)
case "$out" in *"relu.forward"*"my_relu "*"myrelu.cu"*) ;; *) fail "own kernel: $out" ;; esac
[ "$(printf '%s\n' "$out" | grep '^Final loss')" = "$ref" ] || fail "own ReLU trains otherwise: $out"
expect 0 "every gradient matches" "$h" train gradcheck "${emu[@]}" --kernels "$k/own.json"
out=$("$h" train gradcheck "${emu[@]}" --kernels "$k/leaky.json" 2>&1)
[ $? = 1 ] || fail "gradcheck of a leaky ReLU backward exited 0"
case "$out" in *"ReLU (3x10)                  dx"*FAIL*) ;; *) fail "gradcheck missed the leaky backward: $out" ;; esac
out=$("$h" train gradcheck "${emu[@]}" --kernels "$k/skips.json" 2>&1)
[ $? = 1 ] || fail "gradcheck of a ReLU that skips an element exited 0"
case "$out" in *"ReLU (3x10)                  y "*"FAIL (1 over tolerance; worst [29]: kernel nan, reference "*) ;; *) fail "gradcheck missed the unwritten element: $out" ;; esac
# a user's SGD update with the wrong sign: gradcheck runs the optimizers' updates against PyTorch's rule
cat >"$k/myopt.cu" <<'EOF'
__global__ void my_sgd(float *param, const float *grad, float *velocity, int n, float lr, float momentum, float wd) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float b = momentum * velocity[i] + grad[i]; velocity[i] = b; param[i] += lr * b; }
}
EOF
sed '/"sgd": {/,/"adam": {/ { s|"\.\./\.\./kernels/train/optim.cu", "kernel": "sgd_momentum"|"myopt.cu", "kernel": "my_sgd"|; s|"min(ceil_div(n, 256), 1024)"|"ceil_div(n, 256)"| }' \
  "$k/my.json" >"$k/sgd.json"
grep -q my_sgd "$k/sgd.json" || fail "the config with the user's SGD was not made"
expect 1 "  SGD (momentum 0.9), 3 steps  param     1230 values" "$h" train gradcheck "${emu[@]}" --kernels "$k/sgd.json"
case "$out" in *"SGD (momentum 0.9), 3 steps  param"*FAIL*"]: kernel "*", reference "*) ;; *) fail "gradcheck missed the wrong SGD: $out" ;; esac
# a batch gather that forgets the shuffled order: the gather is checked too
cat >"$k/mydata.cu" <<'EOF'
__global__ void my_gather(const unsigned char *images, const unsigned char *labels_all, const int *order, float *x,
                          int *labels, int batch, int offset, int pixels, float mean, float inv_std) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x, b = blockIdx.y * blockDim.y + threadIdx.y;
    if (b < batch && j < pixels) {
        const long long src = offset + b; /* wrong: order[offset + b] */
        x[(long long)b * pixels + j] = ((float)images[src * pixels + j] / 255.0f - mean) * inv_std;
        if (j == 0) labels[b] = labels_all[src];
    }
}
EOF
sed 's|"\.\./\.\./kernels/train/data.cu", "kernel": "gather_batch"|"mydata.cu", "kernel": "my_gather"|' "$k/my.json" >"$k/gather.json"
grep -q my_gather "$k/gather.json" || fail "the config with the user's gather was not made"
expect 1 "  data.gather                  labels       5 values" "$h" train gradcheck "${emu[@]}" --kernels "$k/gather.json"
case "$out" in *"data.gather                  x "*FAIL*) ;; *) fail "gradcheck missed the gather that ignores the order: $out" ;; esac
# a kernel that faults: training stops at once (exit 2 in the first step: nothing
# trained), gradcheck says which (exit 1, a check that failed)
expect 2 "kernel 'my_relu_faults'" "$h" train xor "${emu[@]}" "${xo[@]}" --kernels "$k/faults.json"
expect 1 "kernel 'my_relu_faults'" "$h" train gradcheck "${emu[@]}" --kernels "$k/faults.json"
# config errors: exit 2 naming the JSON path, gradcheck too
expect 2 "$root/configs/relu_sweep.json: a sweep config (it has \"variants\"), not a training config" \
  "$h" train xor "${emu[@]}" "${xo[@]}" --kernels "$root/configs/relu_sweep.json"
sed '/"relu": {/,/"sigmoid"/ s|"backward": {|"//": {|' "$k/my.json" >"$k/missing.json"
sed '/"relu": {/,/"sigmoid"/ s|"backward": {|"sideways": {|' "$k/my.json" >"$k/unknown.json"
sed '0,/"args": \["x", "y", "n"\]/s//"args": ["x", "out", "n"]/' "$k/my.json" >"$k/badarg.json"
sed '0,/"args": \["x", "y", "n"\]/s//"args": ["x", "y"]/' "$k/my.json" >"$k/fewargs.json"
sed "0,/\"TILE\": 16/s//\"TILE\": 64/" "$k/my.json" >"$k/tile64.json" # a 64 x 64 block: over the device's 1024 threads
for task in xor gradcheck; do
  o=()
  [ "$task" = xor ] && o=("${xo[@]}")
  expect 2 "$k/missing.json: layers.relu.backward: missing (the model needs it)" "$h" train $task "${emu[@]}" "${o[@]}" --kernels "$k/missing.json"
  expect 2 "$k/unknown.json: layers.relu.sideways: unknown layer type and pass" "$h" train $task "${emu[@]}" "${o[@]}" --kernels "$k/unknown.json"
  expect 2 "$k/badarg.json: layers.relu.forward.args[1]: unknown argument 'out' (relu.forward buffers: x,y" \
    "$h" train $task "${emu[@]}" "${o[@]}" --kernels "$k/badarg.json"
  expect 2 "$k/fewargs.json: layers.relu.forward.args: kernel relu_grid_stride takes 3 parameters but the config binds 2" \
    "$h" train $task "${emu[@]}" "${o[@]}" --kernels "$k/fewargs.json"
  expect 2 "$k/tile64.json: layers.linear.forward.block: 64 x 64 x 1 = 4096 threads exceeds the device limit of 1024" \
    "$h" train $task "${emu[@]}" "${o[@]}" --kernels "$k/tile64.json"
done
# --tuned: a tune of the tiled linear kernel (the model's linear.forward) and of one the model does not run
cat >"$k/lt.json" <<EOF
{"name": "lt", "op": "linear", "axes": {"batch": [16], "in_f": [128], "out_f": [10]},
 "check": {"atol": "1e-4 * sqrt(in_f)", "rtol": 1e-4, "min_match": 1.0},
 "tuning": {"strategy": "random", "budget": 2, "top": 1},
 "variants": [{"file": "$root/kernels/linear/linear_tiled.cu", "kernel": "linear_tiled", "tune": {"TILE": [4, 8]},
   "block": ["TILE", "TILE", 1], "grid": ["ceil_div(out_f, TILE)", "ceil_div(batch, TILE)", 1],
   "args": ["x", "weight", "bias", "y", "batch", "in_f", "out_f"]}]}
EOF
if "$h" tune "$k/lt.json" "${emu[@]}" --out "$k/lt" >"$k/tune.txt" 2>&1 && [ -s "$k/lt.best.json" ]; then
  win=$(grep -o '"defines":[^,]*' "$k/lt.best.json" | head -n 1 | grep -o 'TILE=[0-9]*')
  out=$("$h" train xor "${emu[@]}" "${xo[@]}" --tuned "$k/lt.best.json" 2>&1)
  [ $? = 0 ] || fail "--tuned of a real tune: $out"
  case "$out" in *"linear_tiled[$win]"*"tuned: $k/lt.best.json"*) ;; *) fail "--tuned did not take $win: $out" ;; esac
  expect 0 "every gradient matches" "$h" train gradcheck "${emu[@]}" --tuned "$k/lt.best.json"
  # a stale or edited tune: the error says the value came from --tuned, not from the config it names
  sed 's/"TILE=[0-9]*"/"TILE=64"/' "$k/lt.best.json" >"$k/big.best.json"
  expect 2 "with the defines of --tuned $k/big.best.json: $root/configs/train/default.json: layers.linear.forward.block: 64 x 64 x 1 = 4096 threads exceeds" \
    "$h" train xor "${emu[@]}" "${xo[@]}" --tuned "$k/big.best.json"
  sed 's/"linear_tiled"/"conv2d_igemm"/' "$k/lt.best.json" >"$k/other.best.json"
  expect 2 "--tuned $k/other.best.json: it tunes kernel 'conv2d_igemm', which no slot of $root/configs/train/default.json runs (they run linear_tiled, " \
    "$h" train xor "${emu[@]}" "${xo[@]}" --tuned "$k/other.best.json"
  expect 2 "--tuned $k/lt.json: not a best.json written by harness tune" "$h" train xor "${emu[@]}" "${xo[@]}" --tuned "$k/lt.json"
else
  fail "harness tune of the tiled linear kernel: $(tail -n 5 "$k/tune.txt")"
fi

finish
