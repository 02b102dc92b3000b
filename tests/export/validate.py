#!/usr/bin/env python3
"""Checks the files irt-export writes against their formats' definitions.

  validate.py speedscope SCHEMA FILE   speedscope's published JSON schema
                                       (tests/export/speedscope-schema.sh
                                       fetches it), then what the schema
                                       cannot say: frame indices in range,
                                       events in order of "at", each "C"
                                       closing the innermost open frame, all
                                       closed by the end
  validate.py chrome FILE              the Trace Event Format, for which no
                                       JSON schema is published (the format
                                       is a Google document, "Trace Event
                                       Format"): the JSON Object Format's
                                       members and, per event, the fields its
                                       phase requires with their types;
                                       complete events ("X") on one thread
                                       nest, never overlap partially, and at
                                       most 512 deep (Perfetto's limit)

Prints "valid: N events, depth D" or the first problem (exit 1).
"""
import json
import sys


def fail(msg):
    print("invalid: " + msg)
    sys.exit(1)


def check_speedscope(schema_path, path):
    import jsonschema
    schema = json.load(open(schema_path))
    doc = json.load(open(path))
    validator = jsonschema.Draft7Validator(schema)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        fail("schema: %s at %s" % (e.message[:200], "/".join(map(str, e.path))))
    nframes = len(doc["shared"]["frames"])
    events = depth = 0
    for p in doc["profiles"]:
        if p["type"] != "evented":
            fail("expected evented profiles")
        stack, last = [], p["startValue"]
        for ev in p["events"]:
            events += 1
            if not 0 <= ev["frame"] < nframes or ev["frame"] != int(ev["frame"]):
                fail("frame %r out of range" % ev["frame"])
            if ev["at"] < last or ev["at"] > p["endValue"]:
                fail("event at %r out of order" % ev["at"])
            last = ev["at"]
            if ev["type"] == "O":
                stack.append(ev["frame"])
                depth = max(depth, len(stack))
            elif not stack or stack.pop() != ev["frame"]:
                fail("close of frame %r that is not the innermost open one" % ev["frame"])
        if stack:
            fail("%d frames never closed" % len(stack))
    print("valid: %d events, depth %d" % (events, depth))


PHASES = set("BEXiIC bnesStTpFfNODPM( ) R c".replace(" ", ""))


def is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def check_chrome(path):
    doc = json.load(open(path))
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("not the JSON Object Format: no traceEvents array")
    if "displayTimeUnit" in doc and doc["displayTimeUnit"] not in ("ms", "ns"):
        fail("displayTimeUnit must be ms or ns")
    if "otherData" in doc and not isinstance(doc["otherData"], dict):
        fail("otherData must be an object")
    spans = {}
    for i, ev in enumerate(doc["traceEvents"]):
        where = "event %d" % i
        if not isinstance(ev, dict):
            fail(where + ": not an object")
        ph = ev.get("ph")
        if not isinstance(ph, str) or ph not in PHASES:
            fail(where + ": unknown phase %r" % ph)
        if not isinstance(ev.get("name"), str):
            fail(where + ": name must be a string")
        for k in ("pid", "tid"):
            if not isinstance(ev.get(k), int) or isinstance(ev.get(k), bool):
                fail(where + ": %s must be an integer" % k)
        if "args" in ev and not isinstance(ev["args"], dict):
            fail(where + ": args must be an object")
        if "cat" in ev and not isinstance(ev["cat"], str):
            fail(where + ": cat must be a string")
        if ph == "M":
            if ev["name"] not in ("process_name", "process_labels", "process_sort_index",
                                  "thread_name", "thread_sort_index"):
                fail(where + ": unknown metadata event %r" % ev["name"])
            continue
        if not is_num(ev.get("ts")):
            fail(where + ": ts must be a number")
        if ph == "X":
            if not is_num(ev.get("dur")) or ev["dur"] < 0:
                fail(where + ": a complete event needs a duration >= 0")
            spans.setdefault((ev["pid"], ev["tid"]), []).append((ev["ts"], ev["dur"], i))
    depth = 0
    for evs in spans.values():
        evs.sort(key=lambda s: (s[0], -s[1], s[2]))
        stack = []
        for ts, dur, i in evs:
            while stack and stack[-1] <= ts:
                stack.pop()
            if stack and ts + dur > stack[-1]:
                fail("event %d overlaps its enclosing span partially" % i)
            stack.append(ts + dur)
            depth = max(depth, len(stack))
    if depth > 512:
        fail("spans nest %d deep, deeper than Perfetto keeps (512)" % depth)
    print("valid: %d events, depth %d" % (len(doc["traceEvents"]), depth))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "speedscope":
        check_speedscope(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "chrome":
        check_chrome(sys.argv[2])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
