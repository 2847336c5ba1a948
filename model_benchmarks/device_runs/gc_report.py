"""Condense a `compile_times` output (gc.sh): first-call seconds, the phase table's gc-related columns, and
each full garbage collection's start, duration and site, with the objects tracked after each first call."""
import sys

COLUMNS = ("model", "backend", "run", "first_call_cpu_s", "inductor_import_s", "trace_s", "backend_s", "graph_load_s",
           "guards_s", "run_s", "gc_s", "gc_full", "gc_full_s", "kernel_load_s", "tuning_lookup_s")
SHORT = {"first_call_cpu_s": "cpu", "inductor_import_s": "ind.import", "graph_load_s": "graph_load",
         "kernel_load_s": "kernel_load", "tuning_lookup_s": "tuning"}
NAMES = {"GPT2ForSequenceClassification": "GPT2", "BertForMaskedLM": "BERT"}
header = None
for line in open(sys.argv[1]).read().splitlines():
    for long, short in NAMES.items():
        line = line.replace(long, short)
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if line.startswith("inference,") or "rror" in line:
        print(line[:300])
    elif line.startswith("| model | backend | run |"):
        header = cells
        print("| " + " | ".join(SHORT.get(c, c) for c in COLUMNS) + " |")
    elif line.startswith("| model |") or (line.startswith("| ") and not line.startswith("|-") and header is None):
        print(line)  # the first table
    elif line.startswith("| ") and header is not None and len(cells) == len(header):
        row = dict(zip(header, cells))
        print("| " + " | ".join(row.get(c, "-") for c in COLUMNS) + " |")
    elif (": " in line and "s +" in line and not line.startswith("|")) or line.startswith("objects tracked"):
        print(line[:230])
