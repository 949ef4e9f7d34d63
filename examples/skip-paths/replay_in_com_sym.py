# Replays a `parplan skip-paths --format json` schedule of the geo examples in
# SkipPipe's own simulator (schedulers/com_sym.py of a gensyn-ai/skippipe
# checkout, not part of this repository), with the network and task times its
# create_schedule.py builds for the geo-distributed setting: nodes cycled over
# its 12 locations, 8 samples of 4 x 1024 x 1024 bytes per micro-batch, 0.35 s
# added to every transfer, 4 layers per node. Each micro-batch is injected on
# its source as create_schedule.py does (tm = release, tm_receive = 10000),
# with ids below 100 (no SkipPipe agents).
#
#   python3 examples/skip-paths/replay_in_com_sym.py SKIPPIPE_DIR schedule.json [full]
#
# `full` replays the full-pipeline baseline instead of the schedule.
import json
import sys

skippipe_dir, schedule_file = sys.argv[1], sys.argv[2]
full = len(sys.argv) > 3 and sys.argv[3] == "full"
sys.path.insert(0, skippipe_dir)
from schedulers.com_sym import MB, ComNode  # noqa: E402
from schedulers.communication_costs import delay_map, get_computations, get_locations  # noqa: E402

SAMPLES_IN_MB = 8
MB_BYTES = 4 * 1024 * 1024 * SAMPLES_IN_MB
EXTRA_TRANSFER_S = 0.13 + 0.2 + 0.02
LAYERS_PER_DEVICE = 4
MEMORY = 3  # both geo examples

j = json.load(open(schedule_file))
n = sum(len(stage) for stage in j["partition"])
locations = get_locations("geo-distributed")
compute = get_computations("geo-distributed")
where = [locations[i % len(locations)] for i in range(n)]
cost = [[0 if x == y else delay_map(where[x], where[y], sz=MB_BYTES) + EXTRA_TRANSFER_S for y in range(n)]
        for x in range(n)]
nodes = {i: ComNode(compute[where[i]] * LAYERS_PER_DEVICE * SAMPLES_IN_MB, i, MEMORY)
         for i in range(n)}
schedule = j["full_pipeline"] if full else j
for mb_id, mb in enumerate(schedule["micro_batches"]):
    p = mb["path"]
    m = MB(mb_id, {p[k]: p[k + 1] for k in range(len(p) - 1)}, mb["source"])
    m.tm = mb["release_s"]
    m.tm_receive = 10000
    nodes[mb["source"]].receive(m)
sources = j["partition"][0]
total = len(schedule["micro_batches"])
# com_sym's run_simulation: 1 s time steps, 15 passes over the nodes in each;
# stopped once every micro-batch is back on its source.
for tm in range(10000):
    for _ in range(15):
        for idx in range(n):
            nodes[idx].send(cost, nodes, tm)
    if sum(len(nodes[s].received_sent) for s in sources) == total:
        break
done = sum(len(nodes[s].received_sent) for s in sources)
end_s = max(v[1] for s in sources for v in nodes[s].received_sent.values())
print("com_sym makespan %.3f s (micro-batches finished %d of %d); parplan's simulation %.3f s" %
      (end_s, done, total, schedule["makespan_s"]))
