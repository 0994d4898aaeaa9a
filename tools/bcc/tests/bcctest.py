# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""bcctest - what the bcc tools' tests share.

A workload that prints "ready PID" and waits for a line on stdin, the tool
attached to it (ready once it says "Tracing"), the two JSON results, and the
TAP document (ending "# bcc: N passed, N failed") that run.sh nests as a
subtest and tools/check.sh counts.
"""

import json
import subprocess
import time


class Fail(Exception):
    """The test cannot go on; the message says why."""


def last_json(text):
    """The last JSON object of @text (one per line)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise Fail("no JSON output")
    return json.loads(lines[-1])


def start_workload(argv):
    wl = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if not wl.stdout.readline().startswith("ready"):
        wl.kill()
        raise Fail("the workload %s did not start" % argv[0])
    return wl


def start_tool(argv, errname, timeout=240):
    """Starts the tool and waits until it traces (bcc compiles first: slow
    in the emulated VM). Its stderr goes to @errname."""
    errf = open(errname, "w+")
    tool = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errf, text=True)
    end = time.monotonic() + timeout
    seen = ""
    with open(errname) as er:
        while time.monotonic() < end and tool.poll() is None:
            seen += er.read()
            if "Tracing" in seen:
                return tool
            time.sleep(0.2)
    tool.kill()
    errf.seek(0)
    raise Fail("the tool did not attach: " + errf.read()[-2000:])


def run_traced(workload, tool_argv, errname):
    """Runs @workload (argv) under the tool (@tool_argv(pid)): the workload's
    last JSON line and the tool's last (final) JSON object."""
    wl = start_workload(workload)
    try:
        tool = start_tool(tool_argv(wl.pid), errname)
    except Fail:
        wl.kill()
        raise
    wl.stdin.write("go\n")
    wl.stdin.flush()
    out, _ = wl.communicate(timeout=600)
    tout, _ = tool.communicate(timeout=120)
    if wl.returncode:
        raise Fail("the workload exited %d" % wl.returncode)
    return last_json(out), last_json(tout)


def report(results):
    """@results: [(name, [errors])]; prints them as TAP, returns the exit status."""
    passed = failed = 0
    print("TAP version 13")
    print("1..%d" % len(results))
    for i, (name, errs) in enumerate(results, 1):
        name = name.replace("#", "\\#")  # not a TAP directive
        if errs:
            failed += 1
            print("not ok %d - %s: %s" % (i, name, "; ".join(errs)))
        else:
            passed += 1
            print("ok %d - %s" % (i, name))
    print("# bcc: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


TIMING = "timing: "


def check(name, fn, *args):
    """(name, errors) of fn(*args), a Fail being one error.

    A run whose only errors are timings (errors starting with TIMING: a
    total outside its tolerance, which a loaded host can cause by slowing
    the probes) is made once more, and the second run decides; a wrong
    count, row or attribution fails at once."""
    for attempt in (1, 2):
        try:
            errs = fn(*args)
        except Fail as e:
            return name, [str(e)]
        if attempt == 2 or not errs or not all(e.startswith(TIMING) for e in errs):
            return name, errs
        print("# %s: %s; measured again (a loaded host slows the probes)" % (name, "; ".join(errs)))
    return name, errs
