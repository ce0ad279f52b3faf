#!/usr/bin/env bash
# test_slurm.sh: the Slurm scripts (scripts/slurm/) on a real one-node cluster:
# munged, slurmctld and slurmd from Debian's packages (scripts/setup.sh installs
# them), configured here in a temporary folder (the node's real CPUs and memory
# from `slurmd -C`, two stand-in GPUs so that --gres=gpu:1 is honoured, free
# ports, state and spool folders in the folder), run as the current user and
# stopped at the end. submit.sh queues the job array (3 shards of
# tests/configs/scale_small.json on the emulator) and the merge after it; the
# merged CSV must hold the same rows, statuses and check results as a
# single-process run of the same config. Skips (77) where Slurm is not installed
# or does not start here.
. "$(dirname "$0")/lib.sh"
skip() { echo "SKIP: $*"; exit 77; }
for c in munged slurmctld slurmd sbatch squeue scontrol sinfo; do
  command -v "$c" >/dev/null 2>&1 || skip "$c not found (scripts/setup.sh installs munge, slurmctld, slurmd, slurm-client)"
done
[ "$(id -u)" = 0 ] || skip "the test cluster runs its daemons as root (SlurmUser=root); run as root"
. "$root/tests/scale_lib.sh"
# munged wants its folders private and not under a group-writable tree: /tmp,
# not lib.sh's folder (under HARNESS_TMP); the trap below removes this one
rmdir "$tmp"
tmp=$(mktemp -d /tmp/hn-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
  if [ -n "${SLURM_CONF:-}" ] && [ -e "$SLURM_CONF" ]; then
    scancel --quiet --user="$(id -un)" 2>/dev/null
    sleep 1
  fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  [ -n "${HN_KEEP_SLURM_TMP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

# two free TCP ports
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
node=hn$$
read -r cpus mem < <(slurmd -C | head -1 | sed -E 's/.*CPUs=([0-9]+).*RealMemory=([0-9]+).*/\1 \2/')
[ -n "${cpus:-}" ] && [ -n "${mem:-}" ] || skip "slurmd -C did not describe the node: $(slurmd -C 2>&1 | head -2)"

echo "== munged"
mkdir -m 700 "$tmp/munge"
head -c 1024 /dev/urandom >"$tmp/munge/munge.key"
chmod 400 "$tmp/munge/munge.key"
munged -F -f --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/socket" --pid-file="$tmp/munge/pid" \
  --log-file="$tmp/munge/log" --seed-file="$tmp/munge/seed" >"$tmp/munge/out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$tmp/munge/socket" ] && break; sleep 0.1; done
[ -S "$tmp/munge/socket" ] || skip "munged did not start: $(tail -3 "$tmp/munge/log" 2>/dev/null)"

echo "== slurmctld and slurmd ($cpus CPUs, $mem MB; ports $ctld_port, $slurmd_port)"
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/log" "$tmp/run"
cat >"$tmp/slurm.conf" <<CONF
ClusterName=hntest$$
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
GresTypes=gpu
NodeName=$node NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem Gres=gpu:2 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
# two stand-in GPUs: Slurm counts GPUs by device file; nothing opens them (the emulator runs)
printf 'AutoDetect=off\nName=gpu File=/dev/null\nName=gpu File=/dev/zero\n' >"$tmp/gres.conf"
export SLURM_CONF=$tmp/slurm.conf
slurmctld -D -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" >"$tmp/log/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 60); do
  state=$(sinfo -h -n "$node" -o %t 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || skip "the test cluster did not come up (node state '$state'): $(tail -3 "$tmp/log/slurmctld.log" "$tmp/log/slurmd.log" 2>/dev/null)"

echo "== a single-process run for reference"
cfg="$root/tests/configs/scale_small.json"
"$h" run "$cfg" --backend emu --out "$tmp/single.csv" >"$tmp/single.out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "single run: exit $rc, expected 1 (planted mismatches): $(tail -3 "$tmp/single.out")"

echo "== submit.sh: a job array of 3 shards, then the merge"
t0=$(date +%s)
out=$(cd "$tmp" && HARNESS_BIN=$h "$root/scripts/slurm/submit.sh" "$cfg" 3 "$tmp/run1" --backend emu 2>&1)
[ $? = 0 ] || fail "submit.sh: $out"
echo "$out"
read -r array merge <"$tmp/run1/jobs" || fail "submit.sh wrote no job ids"
merge_state=""
for _ in $(seq 240); do
  merge_state=$(scontrol show job "$merge" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  case "$merge_state" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
  sleep 0.5
done
echo "merge job $merge: $merge_state after $(($(date +%s) - t0)) s"
[ "$merge_state" = COMPLETED ] ||
  fail "merge job $merge: '$merge_state'; array: $(scontrol show job "$array" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort | uniq -c | tr '\n' ' ') $(tail -5 "$tmp/run1/merge.log" "$tmp"/run1/shard-*.log 2>/dev/null)"
for i in 0 1 2; do
  [ -s "$tmp/run1/shard-$i.csv" ] || fail "no shard $i"
  grep -q "harness shard $i/3 on .*CUDA_VISIBLE_DEVICES=[01]" "$tmp/run1/shard-$i.log" ||
    fail "shard $i: no GPU given: $(head -2 "$tmp/run1/shard-$i.log")"
done
if [ -s "$tmp/run1/merged.csv" ]; then
  d=$(same_rows "$tmp/single.csv" "$tmp/run1/merged.csv")
  [ -z "$d" ] || fail "merged vs single: $d"
  [ -s "$tmp/run1/merged.best.csv" ] || fail "no merged.best.csv"
  grep -q "merged 3 shard files of 3: 24 rows" "$tmp/run1/merge.log" || fail "merge log: $(tail -3 "$tmp/run1/merge.log")"
else
  fail "no merged.csv"
fi

finish
