# bash .probe/suite.sh "M1,M2,..." [extra args]: the pinned code first on PYTHONPATH, Inductor and tile, fp16, isolated
export PINNED=$PWD/.probe/pinned
. .probe/prelude.sh
timeout ${SUITE_T:-3000} python3 -m model_benchmarks --backends inductor,tile --precision fp16 --repeats 5 --warmup 2 --isolate --no-progress \
  --models "$1" --out $OUT/suite "${@:2}" > $OUT/suite.log 2>&1; echo rc=$?; tar czf $OUT/suite.tgz -C $OUT suite; rm -rf $OUT/suite
rm -rf /tmp/sx; mkdir -p /tmp/sx; tar xzf $OUT/suite.tgz -C /tmp/sx; python3 .probe/sumcsv.py /tmp/sx
grep -i "error\|Traceback" $OUT/suite.log | head -5
