#!/usr/bin/env bash
# Nsight Compute counters of one step's kernels, as rows of plots/data/profile.csv.
#
#   usage: scripts/profile.sh NN        (make profile STEP=NN builds ./stepNN, then runs this)
#          scripts/profile.sh NN-lab    (a step's lab: ./stepNN-lab, rows under step stepNN-lab)
#
# What it does, from the repository root:
#   1. Runs ./stepNN once at the profiling size (one repetition, no verification) with --csv, to
#      learn the step's kernels ("variants") in the harness's order, and the device, driver, date.
#   2. For each variant, runs Nsight Compute on `./stepNN --only "<variant>"` and profiles ONE
#      launch: the first launch whose kernel is not one of the harness's references (names with
#      copy_, geam, gemm or cublas), i.e. the variant's own first run. One ncu run per variant, so
#      every row carries the variant's name as the step's table prints it. (A variant whose name
#      is contained in an EARLIER variant's name cannot be isolated by --only and is skipped with
#      a warning: rename it.)
#   3. Converts ncu's raw CSV into rows `step,kernel,type,rows,cols,metric,value,unit,device,
#      driver,date` and replaces this step's earlier rows of the same shape and element type in
#      ${PROFILE_CSV:-plots/data/profile.csv} (other steps' and other shapes' rows and the header
#      are kept, so a step can carry counters at several shapes; with PROFILE_ONLY, only the rows
#      of the variants profiled now are replaced).
# The metric set is fixed (below): DRAM bytes read and written, global load/store sectors and
# requests (and sectors per request, derived), shared-memory bank conflicts and wavefronts on
# loads and stores, achieved occupancy, L2 sectors read and written, instructions executed. ncu
# runs with --clock-control none: it never changes the GPU's clocks, and these counters do not
# depend on them. ncu's default cache control flushes the caches before the profiled kernel, so
# DRAM bytes are cold-cache numbers.
#
# Environment: PROFILE_CSV (output file), PROFILE_ROWS and PROFILE_COLS (default 4096 x 4096),
# PROFILE_ONLY (only variants whose name contains this text), PROFILE_ARGS (more options for the
# step, e.g. "--type f64"), NCU (the ncu command, if it is not on PATH), PROFILE_KERNELS (ncu's
# --kernel-name filter, if the default below does not suit a step).
# Exit codes: 0 done; 2 a bad argument or no ./stepNN; 3 no ncu, no GPU, or ncu failed.
set -u -o pipefail
cd "$(dirname "$0")/.."

nn=${1:-}
if ! [[ $nn =~ ^[0-9][0-9](-lab)?$ ]]; then
  echo "usage: scripts/profile.sh NN   (two digits, e.g. 05, or 09-lab for a lab; or make profile STEP=05)" >&2
  exit 2
fi
step=step$nn
exe=./$step
if [ ! -x "$exe" ]; then
  echo "profile: $exe not found: build it first (make $step, or make profile STEP=$nn)" >&2
  exit 2
fi
ncu=${NCU:-$(command -v ncu || true)}
if [ -z "$ncu" ]; then  # the toolkit's usual places, newest first
  for c in /usr/local/cuda/bin/ncu $(ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -rV); do
    [ -x "$c" ] && { ncu=$c; break; }
  done
fi
if [ -z "$ncu" ] || ! command -v "$ncu" >/dev/null 2>&1; then
  echo "profile: Nsight Compute (ncu) not found: install it with the CUDA toolkit or set NCU=/path/to/ncu" >&2
  exit 3
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "profile: a CUDA device is needed to profile (nvidia-smi finds none)" >&2
  exit 3
fi

rows=${PROFILE_ROWS:-4096}
cols=${PROFILE_COLS:-4096}
out_csv=${PROFILE_CSV:-plots/data/profile.csv}
read -r -a extra <<<"${PROFILE_ARGS:-}"
metrics=dram__bytes_read.sum,dram__bytes_write.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
# Shared-memory wavefronts (passes): the conflict counters above also count some passes that are
# not bank conflicts; wavefronts per warp-wide access is the conflict degree itself.
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
# Sectors that the SMs read from and wrote into L2 (a partly written sector counts once per
# write), and warp instructions executed: what misaligned rows cost beyond DRAM bytes.
metrics+=,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum
metrics+=,smsp__inst_executed.sum
# Matched against the demangled name: anything but the copy-ceiling kernels and cuBLAS.
kernel_filter=${PROFILE_KERNELS:-'regex:^(?!.*(copy_|geam|gemm|cublas))'}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run=("$exe" --rows "$rows" --cols "$cols" --reps 1 --warmup 0 --no-verify "${extra[@]}")

# 1. The variants, in order.
if ! "${run[@]}" --csv "$tmp/list.csv" >"$tmp/list.log" 2>&1; then
  echo "profile: $exe failed at $rows x $cols:" >&2
  tail -5 "$tmp/list.log" >&2
  exit 3
fi
python3 - "$tmp/list.csv" "${PROFILE_ONLY:-}" >"$tmp/variants.txt" <<'PY' || exit 3
import csv, sys
path, only = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(path, newline="")))
# The harness's reference rows come first and are named "copy: ..." or "cuBLAS ...".
names = [r["kernel"] for r in rows
         if not r["kernel"].startswith(("copy:", "cuBLAS")) and r["verified"] != "refused"]
for i, name in enumerate(names):
    if only and only not in name:
        continue
    earlier = [n for n in names[:i] if name in n]
    if earlier:
        print(f"profile: skipping '{name}': --only would first match '{earlier[0]}'", file=sys.stderr)
        continue
    print(name)
PY
if [ ! -s "$tmp/variants.txt" ]; then
  echo "profile: no kernel of $step to profile${PROFILE_ONLY:+ matching '$PROFILE_ONLY'}" >&2
  exit 2
fi

# 2. One ncu run per variant.
i=0
status=0
while IFS= read -r name; do
  i=$((i + 1))
  echo "profile: $step: $name" >&2
  if ! "$ncu" --clock-control none --metrics "$metrics" --kernel-name-base demangled \
      --kernel-name "$kernel_filter" --launch-count 1 --export "$tmp/v$i" --force-overwrite \
      "${run[@]}" --only "$name" >"$tmp/v$i.log" 2>&1; then
    echo "profile: ncu failed on '$name':" >&2
    grep -E "ERR_NVGPUCTRPERM|==ERROR==" "$tmp/v$i.log" | head -3 >&2 || tail -5 "$tmp/v$i.log" >&2
    grep -q ERR_NVGPUCTRPERM "$tmp/v$i.log" &&
      echo "profile: the GPU's performance counters need permission (run as root, or see NVIDIA's ERR_NVGPUCTRPERM page)" >&2
    status=3
    continue
  fi
  if [ ! -f "$tmp/v$i.ncu-rep" ]; then
    echo "profile: ncu profiled no kernel of '$name' (see the kernel filter in $0)" >&2
    status=3
    continue
  fi
  "$ncu" --import "$tmp/v$i.ncu-rep" --csv --page raw --print-units base >"$tmp/v$i.csv" 2>"$tmp/v$i.err" ||
    { echo "profile: ncu could not read its report for '$name'" >&2; status=3; continue; }
  printf '%s\n' "$name" >"$tmp/v$i.name"
done <"$tmp/variants.txt"

# 3. ncu's raw CSV -> our rows; replace this step's rows in the output file.
mkdir -p "$(dirname "$out_csv")"
python3 - "$tmp" "$step" "$out_csv" "$metrics" "${PROFILE_ONLY:-}" <<'PY' || exit 3
import csv, glob, os, sys
tmp, step, out_path, wanted, only = sys.argv[1:4] + [sys.argv[4].split(","), sys.argv[5]]
header = ["step", "kernel", "type", "rows", "cols", "metric", "value", "unit", "device", "driver", "date"]
run = next(csv.DictReader(open(os.path.join(tmp, "list.csv"), newline="")))
# Byte prefixes, in case an ncu version ignores --print-units base.
scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12}

def number(text):
    try:
        return float(text.replace(",", ""))  # ncu may print thousands separators
    except ValueError:
        return None  # "n/a"

def counters(lines):
    """{metric: (value, unit)} of the first kernel in ncu's CSV, wide (--page raw: one column
    per metric, then a row of units) or long (one row per metric) format."""
    start = next((k for k, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return {}
    table = [r for r in csv.reader(lines[start:]) if r]
    names, found = table[0], {}
    if "Metric Name" in names:  # long format
        col = {n: k for k, n in enumerate(names)}
        first = next((r[0] for r in table[1:] if r[0].strip().isdigit()), None)
        for r in table[1:]:
            if r[0] == first and r[col["Metric Name"]] in wanted:
                found[r[col["Metric Name"]]] = (number(r[col["Metric Value"]]), r[col["Metric Unit"]])
    else:  # wide format
        units = table[1] if len(table) > 1 and not table[1][0].strip().isdigit() else []
        data = next((r for r in table[1:] if r[0].strip().isdigit()), None)
        if data is None:
            return {}
        for k, n in enumerate(names):
            if n in wanted and k < len(data):
                found[n] = (number(data[k]), units[k] if k < len(units) else "")
    return {m: vu for m, vu in found.items() if vu[0] is not None}

new_rows, profiled = [], set()
for name_file in sorted(glob.glob(os.path.join(tmp, "v*.name")),
                        key=lambda p: int(os.path.basename(p)[1:-5])):
    variant = open(name_file).read().rstrip("\n")
    profiled.add(variant)
    values = counters(open(name_file[:-5] + ".csv", newline="").read().splitlines())
    if not values:
        print(f"profile: no counters in ncu's report for '{variant}'", file=sys.stderr)
        continue
    for m, (v, unit) in list(values.items()):
        if unit in scale:
            values[m] = (v * scale[unit], "byte")
    for kind in ("ld", "st"):
        s = values.get(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{kind}.sum")
        q = values.get(f"l1tex__t_requests_pipe_lsu_mem_global_op_{kind}.sum")
        if s and q and q[0] > 0:
            values[f"global_{kind}_sectors_per_request"] = (s[0] / q[0], "sector/request")
    for metric in [m for m in wanted if m in values] + sorted(set(values) - set(wanted)):
        v, unit = values[metric]
        text = f"{v:.0f}" if v == int(v) else f"{v:.4g}"
        new_rows.append([step, variant, run["type"], run["rows"], run["cols"], metric, text, unit,
                         run["device"], run["driver"], run["date"]])

kept = []
if os.path.exists(out_path):
    with open(out_path, newline="") as f:
        # This step's rows at this shape and type go, all of them, or with PROFILE_ONLY those of
        # the variants just run.
        same = lambda r: (r.get("step") == step and r.get("type") == run["type"]
                          and r.get("rows") == run["rows"] and r.get("cols") == run["cols"])
        kept = [r for r in csv.DictReader(f)
                if not same(r) or (only and r.get("kernel") not in profiled)]
with open(out_path + ".tmp", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(header)
    for r in kept:
        w.writerow([r.get(h, "") for h in header])
    w.writerows(new_rows)
os.replace(out_path + ".tmp", out_path)
print(f"profile: {len(new_rows)} rows of {step} written to {out_path}", file=sys.stderr)
sys.exit(0 if new_rows else 1)
PY
exit $status
