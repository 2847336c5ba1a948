"""Compact a micro log: kernel size backend kernel-GB/s %copy check."""
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"(\S+ \S+)\s+(\S+)\s+(\S+)\s+.*?kernels\s+([\d.]+) GB/s\s+(\d+)%.*?\)\s+(\S*)", line)
    if m:
        print(" ".join(m.groups()))
    elif "copy" in line.lower() and "device" in line.lower():
        print(line.strip()[:120])
