# golden: release-only
# (The Python package is built in the release build only.)
# Spans as wide as recorded times: a Python context stamps every call's
# marker and Return with metadata time_ns (a monotonic clock), and the
# profile formats then use those times (speedscope in nanoseconds, the
# Trace Event Format in microseconds). Without a time on every call (here
# on the markers only) the spans stay as wide as their nodes.
cat > prog.py <<'PY'
import time
import irtrace


def leaf(x):
    s = 0.0
    for i in range(200):
        s = s + x * i
    return s


def tree(x, d):
    if d == 0:
        return leaf(x)
    return tree(x, d - 1) + tree(x * 0.5, d - 1)


class Clock(irtrace.Context):
    def __init__(self, kinds):
        super().__init__()
        self.kinds = kinds

    def on_node(self, node):
        if node.kind in self.kinds:
            return {"time_ns": time.perf_counter_ns()}
PY
PYTHONPATH="$IRT_BUILD/python:." /usr/bin/python3 -c '
import irtrace, prog
irtrace.track(prog.tree, 1.0, 3, out="timed.fb", context=prog.Clock(("Call", "Return")))
irtrace.track(prog.tree, 1.0, 3, out="half.fb", context=prog.Clock(("Call",)))'
irt-print --levels 2 timed.fb | sed -n '1,2p;5p' | sed -E 's/time_ns = [0-9]+/time_ns = T/'
irt-export --speedscope timed.fb > timed.json
/usr/bin/python3 "$IRT_SOURCE/tests/export/validate.py" speedscope "$("$IRT_SOURCE/tests/export/speedscope-schema.sh")" timed.json
jq -c '.profiles[0] | {unit, events: (.events | length), starts_at_0: (.events[0].at == 0),
  ends_at_end: (.events[-1].at == .endValue), increasing: ([.events[].at] | . == sort),
  wider_than_nodes: (.endValue > 1000)}' timed.json
irt-export --chrome-trace timed.fb > timed-chrome.json
/usr/bin/python3 "$IRT_SOURCE/tests/export/validate.py" chrome timed-chrome.json
jq -c '{unit: .otherData.unit, spans: [.traceEvents[] | select(.ph == "X")] | length,
  root_us_positive: ([.traceEvents[] | select(.ph == "X") | .dur] | max > 0)}' timed-chrome.json
irt-export --speedscope half.fb | jq -c '.profiles[0] | {unit, endValue}'
