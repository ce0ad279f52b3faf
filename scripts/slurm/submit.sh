#!/bin/bash
# submit.sh: a sweep on a Slurm cluster, one shard per GPU, then the merge.
#
#   scripts/slurm/submit.sh CONFIG N OUTDIR [harness run options...] [-- sbatch options...]
#
# Queues a job array of N tasks (harness_shard.sbatch: --gres=gpu:1 each; task I
# runs shard I/N) and a merge job (harness_merge.sbatch) that starts once every
# task succeeded (--dependency=afterok). Prints both job ids. Run it from the
# repository (or set HARNESS_BIN); the config, OUTDIR and the binary must be on a
# filesystem every node sees. Example:
#
#   scripts/slurm/submit.sh configs/conv2d_sweep.json 8 results/cluster-run --quick -- --partition=gpu --time=1:00:00
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
config=$(realpath "$1")
n=$2
outdir=$(realpath -m "$3")
shift 3
args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  args+=("$1")
  shift
done
[ "${1:-}" = "--" ] && shift
sbatch_opts=("$@")
case "$n" in '' | *[!0-9]* | 0) echo "submit.sh: N must be a positive number of shards" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${HARNESS_BIN:-$repo/build/harness}
[ -x "$bin" ] || { echo "submit.sh: no harness binary at $bin (build it, or set HARNESS_BIN)" >&2; exit 2; }
mkdir -p "$outdir"
# the jobs take these from the environment (sbatch --export=ALL)
export HARNESS_CONFIG=$config HARNESS_OUTDIR=$outdir HARNESS_BIN=$bin HARNESS_ARGS="${args[*]:-}"
array=$(sbatch --parsable --export=ALL --array="0-$((n - 1))" --output="$outdir/shard-%a.log" \
  ${sbatch_opts[@]+"${sbatch_opts[@]}"} "$here/harness_shard.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --export=ALL --dependency="afterok:$array" --output="$outdir/merge.log" \
  ${sbatch_opts[@]+"${sbatch_opts[@]}"} "$here/harness_merge.sbatch")
merge=${merge%%;*}
echo "shards: job array $array ($n tasks), merge: job $merge -> $outdir/merged.csv"
echo "$array $merge" >"$outdir/jobs"
