#!/usr/bin/env bash
# test_hostile.sh: `harness list` on configs written to break it (what a hostile
# user tried, and what made it die with SIGSEGV): expressions nested 20,000 deep,
# 30,000 chained '-' or '!', sums of 30,000 terms, in where, grid and check.atol;
# JSON nested past cJSON's limit; a NUL byte; huge numbers; an axis of 200,000
# values (loads in seconds). Each is exit 2 with
# the file, the JSON path and the limit in the message; a config at the limits
# loads (exit 0).
. "$(dirname "$0")/lib.sh"

expect_show=400 # (expect's failures: the outputs here can be huge)

# rep STRING N: STRING repeated N times
rep() { printf "%${2}s" "" | sed "s/ /$1/g"; }

kernel="$root/kernels/conv2d/conv2d_pad.cu"
# cfg TOP GRID: a valid config with TOP spliced into the top level and GRID as its grid
cfg() {
  cat <<JSON
{"op": "conv2d", "axes": {"in_ch": [1, 2], "out_ch": [1], "filter_size": [3], "img_size": [8]} $1,
 "variants": [{"file": "$kernel", "kernel": "conv2d_pad", "block": [8, 8],
   "grid": [${2:-\"ceil_div(w, 8)\", \"ceil_div(h, 8)\"}],
   "args": ["in", "out", "filter", "h", "w", "in_ch", "out_ch", "filter_size", "pad"]}]}
JSON
}

parens="$(rep '(' 20000)1$(rep ')' 20000)"
minus="$(rep '-' 30000)1"
nots="$(rep '!' 30000)1"
sum="1$(rep '+1' 29999)"
deep="$(rep '(' 300)1$(rep ')' 300)"
limit="$(rep '(' 256)1$(rep ')' 256)"
terms="1$(rep '+1' 600)"

cfg ", \"where\": \"$parens\"" >"$tmp/where_parens.json"
expect 2 "where_parens.json: where: in '((((" "$h" list "$tmp/where_parens.json"
expect 2 "...': expression longer than 4096 characters (40001)" "$h" list "$tmp/where_parens.json"
cfg ", \"where\": [\"in_ch > 0\", \"$nots\"]" >"$tmp/where_not.json"
expect 2 "where_not.json: where[1]: in '!!!!" "$h" list "$tmp/where_not.json"
cfg ", \"where\": \"$deep\"" >"$tmp/where_deep.json"
expect 2 "where_deep.json: where: in '((((" "$h" list "$tmp/where_deep.json"
expect 2 "at column 257: expression nested deeper than 256 levels" "$h" list "$tmp/where_deep.json"
cfg "" "\"$sum\"" >"$tmp/grid_sum.json"
expect 2 "grid_sum.json: variants[0].grid[0]: in '1+1+1" "$h" list "$tmp/grid_sum.json"
expect 2 "longer than 4096 characters" "$h" list "$tmp/grid_sum.json"
cfg "" "1, \"$terms\"" >"$tmp/grid_terms.json"
expect 2 "grid_terms.json: variants[0].grid[1]: in '1+1+1" "$h" list "$tmp/grid_terms.json"
expect 2 "expression has more than 1024 terms" "$h" list "$tmp/grid_terms.json"
cfg "" "\"$minus\"" >"$tmp/grid_minus.json"
expect 2 "grid_minus.json: variants[0].grid[0]: in '----" "$h" list "$tmp/grid_minus.json"
cfg ", \"check\": {\"atol\": \"$minus\"}" >"$tmp/atol_minus.json"
expect 2 "atol_minus.json: check.atol: in '----" "$h" list "$tmp/atol_minus.json"
expect 2 "longer than 4096 characters (30001)" "$h" list "$tmp/atol_minus.json"
cfg ", \"check\": {\"atol\": \"1e-4 * $deep\"}" >"$tmp/atol_deep.json"
expect 2 "atol_deep.json: check.atol: in '1e-4 * ((((" "$h" list "$tmp/atol_deep.json"
expect 2 "nested deeper than 256 levels" "$h" list "$tmp/atol_deep.json"
# At the limit: loads.
cfg ", \"where\": \"$limit\", \"check\": {\"atol\": \"1e-4 * $limit\"}" "\"ceil_div(w, 8) * $limit\"" >"$tmp/at_limit.json"
expect 0 "2 cases" "$h" list "$tmp/at_limit.json"

# JSON nested past cJSON's limit; a NUL byte; huge numbers.
printf '%s' "$(rep '[' 5000)" >"$tmp/json_deep.json"
expect 2 "json_deep.json:1:1001: JSON nested deeper than 1000 levels" "$h" list "$tmp/json_deep.json"
{ cfg ""; printf '\0{}'; } >"$tmp/nul.json"
expect 2 "nul.json:5:1: a NUL byte" "$h" list "$tmp/nul.json"
cfg ", \"params\": {\"in_ch\": \"9223372036854775807\"}" >"$tmp/big_param.json"
expect 2 "big_param.json: params.in_ch ('9223372036854775807') = 9223372036854775807 is out of range" \
  "$h" list "$tmp/big_param.json"
cat >"$tmp/big_shape.json" <<JSON
{"op": "conv2d", "axes": {"in_ch": 1073741824, "out_ch": 1073741824, "filter_size": 1073741824,
 "img_size": 1073741824}, "variants": [{"file": "$kernel", "kernel": "conv2d_pad", "block": [8],
 "grid": [1], "args": []}]}
JSON
expect 2 "big_shape.json: axes: case 0 (in_ch=1073741824, out_ch=1073741824, filter_size=1073741824, img_size=1073741824): conv2d: buffer 'in' would have 1237940039285380274899124224 elements" "$h" list "$tmp/big_shape.json"

# An axis of 200,000 values (the duplicate check compared every pair: minutes).
python3 -c "
import json, sys
json.dump({'op': 'conv2d', 'axes': {'in_ch': [1], 'out_ch': [1], 'filter_size': [1], 'img_size': [8],
                    'rep': list(range(1, 200001))},
           'variants': [{'file': sys.argv[1], 'kernel': 'conv2d_pad', 'block': [8], 'grid': [1], 'args': []}]},
          open(sys.argv[2], 'w'))" "$kernel" "$tmp/long_axis.json"
expect 0 "200000 cases" timeout 60 "$h" list "$tmp/long_axis.json"
sed 's/"rep": \[1, 2, /"rep": [2, 1, 2, /' "$tmp/long_axis.json" >"$tmp/long_dup.json"
expect 2 "long_dup.json: axes.rep[2]: value 2 appears twice" timeout 60 "$h" list "$tmp/long_dup.json"
# Objects of many keys: 20,000 axes, a timing object of 200,000 keys (its duplicate
# check compared every pair before the first unknown key was named).
python3 -c "
import json, sys
c = json.load(open(sys.argv[1]))
c['axes'].update({'a%d' % i: 1 for i in range(20000)})
json.dump(c, open(sys.argv[2], 'w'))
c = json.load(open(sys.argv[1]))
c['axes']['rep'] = [1]
c['timing'] = {'k%d' % i: 1 for i in range(200000)}
json.dump(c, open(sys.argv[3], 'w'))" "$tmp/long_axis.json" "$tmp/many_axes.json" "$tmp/many_keys.json"
expect 2 "many_axes.json: axes: 20005 axes: at most 16384" timeout 60 "$h" list "$tmp/many_axes.json"
expect 2 "many_keys.json: timing.k0: unknown key" timeout 60 "$h" list "$tmp/many_keys.json"

finish
