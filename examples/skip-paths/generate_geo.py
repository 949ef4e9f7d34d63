# Synthetic large SkipPipe problems for docs/skip-paths.md ("Large networks"):
# N nodes in 8 equal stages over 12 sites, path length 6, memory 3, 4
# micro-batches per source, SkipPipe's task times, 32 MiB of activations.
#   python3 examples/skip-paths/generate_geo.py 256 > /tmp/skip256.yaml
import random, sys
random.seed(1)
n = int(sys.argv[1])
stages = [n // 8] * 8
lines = ["nodes: %d" % n, "stage_sizes: %s" % stages, "path_length: 6", "memory: 3",
         "micro_batches_per_source: 4", "stage_forward_s: 1.76", "backward_factor: 1.5", "loss_factor: 0.25",
         "task_overhead_s: 0.13", "activation_bytes: 33554432", "latency_ms:"]
loc = [random.randrange(12) for _ in range(n)]
L = [[0 if i == j else (1 if loc[i] == loc[j] else 20 + abs(loc[i] - loc[j]) * 10) for j in range(n)] for i in range(n)]
B = [[2 if loc[i] == loc[j] else 0.02 + 0.01 * ((loc[i] * 7 + loc[j] * 3) % 5) for j in range(n)] for i in range(n)]
for r in L: lines.append("  - [" + ", ".join(str(x) for x in r) + "]")
lines.append("bandwidth_gib_per_s:")
for r in B: lines.append("  - [" + ", ".join(str(x) for x in r) + "]")
print("\n".join(lines))
