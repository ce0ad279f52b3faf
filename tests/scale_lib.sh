# scale_lib.sh: helpers shared by the scale-out tests (test_scale_devices.sh,
# test_scale_shards.sh, test_slurm.sh); sourced, not run.

# same_rows A.csv B.csv: the same (case, variant) rows, each once, with the same
# status and check results (times differ; the device may). Prints what differs.
same_rows() {
  python3 - "$1" "$2" <<'PY'
import csv, sys
KEYS = ["status", "checked", "match_fraction", "max_abs_err", "max_rel_err", "nonfinite", "worst_output",
        "compile_key", "backend"]
def load(path):
    rows = {}
    for r in csv.DictReader(open(path, newline="")):
        k = (r["case"], r["variant"])
        if k in rows:
            print(f"{path}: case {k[0]} {k[1]} twice")
        rows[k] = tuple(r[c] for c in KEYS)
    return rows
a, b = load(sys.argv[1]), load(sys.argv[2])
for k in sorted(set(a) | set(b)):
    if k not in a: print(f"only in {sys.argv[2]}: case {k[0]} {k[1]}")
    elif k not in b: print(f"only in {sys.argv[1]}: case {k[0]} {k[1]}")
    elif a[k] != b[k]: print(f"case {k[0]} {k[1]} differs: {dict(zip(KEYS, a[k]))} vs {dict(zip(KEYS, b[k]))}")
PY
}

# in_plan_order A.csv: the rows sorted by case (as a single worker writes them).
in_plan_order() {
  python3 - "$1" <<'PY'
import csv, sys
cases = [int(r["case"]) for r in csv.DictReader(open(sys.argv[1], newline=""))]
if cases != sorted(cases): print("rows not in case order:", cases)
PY
}

# column A.csv NAME: the distinct values of a column, sorted, one line.
column() {
  python3 - "$1" "$2" <<'PY'
import csv, sys
print(" ".join(sorted({r[sys.argv[2]] for r in csv.DictReader(open(sys.argv[1], newline=""))})))
PY
}

# statuses A.csv [sorted]: "case variant status" of every row, ";"-separated, in
# file order (or sorted).
statuses() {
  python3 - "$1" "${2:-}" <<'PY'
import csv, sys
rows = [" ".join((r["case"], r["variant"], r["status"])) for r in csv.DictReader(open(sys.argv[1], newline=""))]
print(";".join(sorted(rows) if sys.argv[2] else rows))
PY
}
