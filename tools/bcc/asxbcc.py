# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""asxbcc - what the asx-* bcc tools share.

Finding libasx (a shared library, or a program linked with libasx.a),
its USDT probe list (bcc's USDT enumeration), the bcc command-line
conventions (-p PID, interval [count], -T, -j), units, and the loop that
prints an interval, a final summary on Ctrl-C, or when the traced process
exits.  The tools import it from their own directory (installed together
under PREFIX/lib/asx/bcc, with links in PREFIX/sbin).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

LIB_NAMES = ("libasx.so.0", "libasx.so")
LIB_DIRS = ("/usr/local/lib", "/usr/local/lib/x86_64-linux-gnu",
            "/usr/lib/x86_64-linux-gnu", "/usr/lib", "/lib/x86_64-linux-gnu")


class ToolError(Exception):
    """A condition the user must fix; the message says how."""


def die(prog, msg, code=1):
    sys.stderr.write("%s: %s\n" % (prog, msg))
    sys.exit(code)


# ----------------------------------------------------------------- USDT


def usdt_probes(path, provider="asx"):
    """@provider's USDT probes in the ELF file @path: {name: arguments},
    as bcc's USDT(path=...).enumerate_probes() lists them (the notes
    <sys/sdt.h> emits); an empty set means the file was built without
    <sys/sdt.h>.  Raises ToolError if the file is missing or not an ELF
    file bcc can read.
    """
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise ToolError("cannot read %s: %s" % (path, e.strerror))
    from bcc import USDT, USDTException
    try:
        probes = USDT(path=path).enumerate_probes()
    except USDTException:
        raise ToolError("%s is not a 64-bit little-endian ELF file" % path)
    want = provider.encode()
    return {p.name.decode(): p.num_arguments for p in probes if p.provider == want}


# -------------------------------------------------------------- finding


def mapped_libasx(pid):
    """The libasx.so a running process has mapped, or None."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    path = parts[5].strip()
                    if os.path.basename(path).startswith("libasx.so"):
                        return path
    except OSError:
        raise ToolError("no process %d" % pid)
    return None


def find_libasx(lib, pid):
    """Where to attach: --lib, the process's own libasx (or its program,
    statically linked), or the installed library."""
    if lib:
        if not os.path.exists(lib):
            raise ToolError("%s: no such file" % lib)
        return os.path.realpath(lib)
    if pid:
        check_pid(pid)
        path = mapped_libasx(pid)
        if path:
            return path
        # statically linked: the probes are in the program itself
        return os.path.realpath("/proc/%d/exe" % pid)
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.strip().startswith(LIB_NAMES[0] + " "):
                return os.path.realpath(line.rsplit("=>", 1)[1].strip())
    except OSError:
        pass
    for d in LIB_DIRS:
        for n in LIB_NAMES:
            p = os.path.join(d, n)
            if os.path.exists(p):
                return os.path.realpath(p)
    raise ToolError("libasx not found: give its path with --lib (the libasx.so.0, "
                    "or a program linked with libasx.a), or trace a process with -p PID")


def check_probes(path, wanted):
    """Raises ToolError unless @path carries every probe in @wanted (names,
    or {name: the arguments the tool reads})."""
    have = usdt_probes(path)
    if not have:
        raise ToolError("%s has no USDT probes: libasx was built without <sys/sdt.h> "
                        "(install systemtap-sdt-dev and rebuild it)" % path)
    if not isinstance(wanted, dict):
        wanted = {name: 0 for name in wanted}
    old = sorted(n for n, a in wanted.items() if n not in have or have[n] < a)
    if old:
        raise ToolError("%s lacks the probes (or their arguments) %s: is it an older "
                        "libasx than the tool?" % (path, ", ".join(old)))


def check_pid(pid):
    """Raises ToolError unless process @pid exists (when given)."""
    if pid and not os.path.exists("/proc/%d" % pid):
        raise ToolError("no process %d" % pid)
    if pid:
        comm_of(pid)	# remembered for the last report, after it exits


def check_tracepoints(names):
    """Raises ToolError unless the kernel has every tracepoint "group:name"."""
    for tp in names:
        group, name = tp.split(":")
        if not any(os.path.exists("%s/events/%s/%s" % (d, group, name))
                   for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")):
            if group == "asx":
                raise ToolError("no tracepoint %s: asx.ko is not loaded, or it is older "
                                "than this tool (or was built without that feature)" % tp)
            raise ToolError("the kernel has no tracepoint %s" % tp)


def check_root(prog):
    if os.geteuid() != 0:
        die(prog, "must be run as root (BPF needs CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN)")


# --------------------------------------------------------- command line


def positive_int(s):
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a number" % s)
    if v <= 0:
        raise argparse.ArgumentTypeError("must be positive, not %s" % s)
    return v


def common_args(parser, lib=True):
    """bcc's usual options: -p, -l (tools of libasx's probes), -T, -j,
    interval [count]."""
    if lib:
        parser.add_argument("-p", "--pid", type=positive_int,
                            help="trace this process only (its libasx, or its program if "
                                 "linked statically); the tool ends when the process does")
        parser.add_argument("-l", "--lib", metavar="PATH",
                            help="the libasx.so.0 to trace, or a program linked with libasx.a "
                                 "(default: the process's own with -p, else the installed one)")
    else:
        parser.add_argument("-p", "--pid", type=positive_int,
                            help="trace this process only; the tool ends when the process does")
    parser.add_argument("-T", "--timestamp", action="store_true",
                        help="print a timestamp with each interval")
    parser.add_argument("-j", "--json", action="store_true",
                        help="print each interval as one JSON object per line")
    parser.add_argument("interval", nargs="?", type=positive_int,
                        help="print every INTERVAL seconds (default: once, at the end)")
    parser.add_argument("count", nargs="?", type=positive_int,
                        help="stop after COUNT intervals")


# ---------------------------------------------------------------- units


def fmt_ns(ns):
    """A duration in the largest unit that keeps it above 1."""
    if ns is None:
        return "-"
    if ns < 1000:
        return "%dns" % ns
    if ns < 1000000:
        return "%.1fus" % (ns / 1e3)
    if ns < 1000000000:
        return "%.2fms" % (ns / 1e6)
    return "%.2fs" % (ns / 1e9)


_comms = {}


def comm_of(pid):
    """The command of @pid, remembered: "[exited]" if it was never seen alive."""
    if pid not in _comms:
        try:
            with open("/proc/%d/comm" % pid) as f:
                _comms[pid] = f.read().strip()
        except OSError:
            return "[exited]"
    return _comms[pid]


class Symbols:
    """Names of code addresses in traced processes.

    bcc reads a process's maps and its modules' symbol tables through
    /proc/PID, so a name can only be looked up while the process lives.
    The first time a process is seen alive, the symbol tables of all its
    executable mappings are loaded (warm()); after that, its addresses are
    named from the tables even once it has exited.  An address of a
    process never seen alive stays a number ("0x..."), as does one that
    falls in no module the process had mapped when it was first seen (a
    library it loaded later and then exited)."""

    def __init__(self, bpf):
        self.bpf = bpf
        self.names = {}
        self.warmed = set()

    def warm(self, pid):
        """Loads the symbol tables of @pid's executable mappings, if it lives."""
        if pid in self.warmed:
            return True
        try:
            with open("/proc/%d/maps" % pid) as f:
                maps = f.read().splitlines()
        except OSError:
            return False
        self.warmed.add(pid)
        comm_of(pid)
        for line in maps:
            f = line.split(None, 5)
            if len(f) == 6 and "x" in f[1] and f[5].startswith("/"):
                self.bpf.sym(int(f[0].split("-")[0], 16), pid)
        return True

    def learn(self, pid, addr):
        if (pid, addr) in self.names or not self.warm(pid):
            return
        name = self.bpf.sym(addr, pid, show_module=True, show_offset=True)
        if not name.startswith(b"[unknown]"):
            self.names[(pid, addr)] = name.decode("utf-8", "replace")

    def name(self, pid, addr):
        self.learn(pid, addr)
        return self.names.get((pid, addr), "0x%x" % addr)


def log2_hist_rows(slots):
    """[(low, high, count)] of a log2 histogram {slot: count}."""
    if not slots:
        return []
    top = max(slots)
    # bcc's bpf_log2l(v) is the number of bits in v: slot s holds 2^(s-1) .. 2^s - 1
    return [((1 << s) >> 1, (1 << s) - 1, slots.get(s, 0)) for s in range(top + 1)]


def print_log2_hist(title, unit, slots, out=sys.stdout):
    rows = log2_hist_rows(slots)
    while rows and not rows[0][2]:
        rows.pop(0)
    if not rows:
        return
    peak = max(c for _, _, c in rows) or 1
    out.write("%s\n%22s : %-8s %s\n" % (title, unit, "count", "distribution"))
    for lo, hi, c in rows:
        bar = "*" * int(40 * c / peak)
        out.write("%10d -> %-10d : %-8d |%-40s|\n" % (lo, hi, c, bar))


# ----------------------------------------------------------------- intervals


class _View:
    """A map value with some of its fields replaced."""

    def __init__(self, fields):
        self.__dict__.update(fields)


class Interval:
    """Each table's figures from a BPF map that is never cleared.

    Reading a map and then clearing it loses every event counted between the
    read and the clear (a table's formatting, milliseconds: asx-qlat lost 15
    of 4,000 enqueues over 8 one-second tables that way).  So the map keeps
    counting, and each table shows, per entry, what its counters grew by
    since the previous table; the fields named in @keep (running maxima,
    identities) are shown as they are: a maximum is the largest since the
    tool started."""

    def __init__(self, keep=()):
        self.keep = set(keep)
        self.prev = {}

    def rows(self, table):
        """[(key, value)] of the entries of @table that changed since the
        last call, the value's counters replaced by their increase (a plain
        integer value, a histogram slot, has the attribute .value)."""
        out = []
        for k, v in table.items():
            names = [f[0] for f in getattr(v, "_fields_", ())] or ["value"]
            cur = {n: getattr(v, n) for n in names}
            kb = bytes(k)
            old = self.prev.get(kb, {})
            grew = False
            for n, x in cur.items():
                if n in self.keep or not isinstance(x, int):
                    continue
                d = x - old.get(n, 0)
                grew = grew or d != 0
                cur[n] = d
            self.prev[kb] = {n: getattr(v, n) for n in names}
            if grew:
                out.append((k, _View(cur)))
        return out


# ----------------------------------------------------------------- loop


def run(args, report, prog, tick=None):
    """Calls report(final) every interval, or once at the end: on Ctrl-C,
    after COUNT intervals, or when the process of -p exits.  report()
    prints and clears what it printed.  tick(), if given, runs ten
    times a second, while the traced processes live: the time to name what will
    be printed (symbols, commands) before they exit."""
    stop = {"sig": False}

    def on_signal(signum, frame):
        stop["sig"] = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    if not args.json:
        where = getattr(args, "path", None)
        what = ("process %d" % args.pid if args.pid else
                "every process using it" if where else "every process")
        sys.stderr.write("Tracing %s%s... Hit Ctrl-C to end.\n"
                         % (what, " in " + where if where else ""))
    else:
        sys.stderr.write("Tracing... Hit Ctrl-C to end.\n")
    sys.stderr.flush()
    n = 0
    interval = args.interval
    next_at = time.monotonic() + interval if interval else None
    while True:
        time.sleep(0.1)
        if tick:
            tick()
        gone = args.pid and not os.path.exists("/proc/%d" % args.pid)
        if stop["sig"] or gone:
            report(True)
            return 0
        if next_at and time.monotonic() >= next_at:
            n += 1
            last = args.count and n >= args.count
            report(bool(last))
            if last:
                return 0
            next_at += interval


def emit_json(obj):
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
    sys.stdout.flush()


def stamp(args):
    return time.strftime("%H:%M:%S")
