# ncu's view of the kernels kernel_limits reads without a GPU: each case once under backend tile, then inductor.
# Usage: bash .probe/limits_ncu.sh [tile] [inductor]   (default both; ~60 s each, most of it compiling)
[ -f .probe/prelude.sh ] && . .probe/prelude.sh || export PYTHONPATH=$PWD
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/nsight-compute*/ncu 2>/dev/null | head -1)
if [ -z "$NCU" ]; then echo "ncu not found on this machine: nothing measured"; exit 0; fi
OUT=${OUT:-/tmp/limits_out}; mkdir -p $OUT
METRICS=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__inst_executed.sum
CSVS=""
for backend in ${@:-tile inductor}; do
  timeout $((140 / $(echo ${@:-tile inductor} | wc -w))) $NCU --profile-from-start off --metrics $METRICS -f -o /tmp/limits_$backend \
    python3 .probe/limits_ncu.py run $backend > $OUT/run_$backend.log 2>&1
  rc=$?
  if [ ! -f /tmp/limits_$backend.ncu-rep ]; then
    echo "$backend: ncu made no report (rc=$rc); last lines:"; grep -v "^ready" $OUT/run_$backend.log | tail -4 | cut -c1-300
    continue
  fi
  grep "^failed" $OUT/run_$backend.log | cut -c1-200
  $NCU -i /tmp/limits_$backend.ncu-rep --csv --page raw > $OUT/$backend.csv 2>&1
  CSVS="$CSVS $OUT/$backend.csv"
done
[ -n "$CSVS" ] && python3 .probe/limits_ncu.py table $CSVS | cut -c1-110 | head -c 2900
exit 0
