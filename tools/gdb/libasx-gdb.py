# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""gdb commands for libasx's ASC user threads.

gdb loads this file by itself for a program linked with libasx once it is
installed (make install puts it where gdb's auto-load looks:
$GDB_DATADIR/auto-load/<libasx.so's real path>-gdb.py); or load it by hand
with `source tools/gdb/libasx-gdb.py`.  Commands:

  asx ascs              every ASC: its policy, VPs (their kernel thread ids
                        and states, and the user thread each runs) and
                        thread count
  asx threads [ASC]     every user thread (of the ASC named): its address,
                        name, state, entry function, ASC and the VP running it
  asx bt THREAD [full]  the backtrace of a user thread that is not running,
                        from the context it saved when it last switched out
                        (THREAD: its address or name); a running one is
                        shown by gdb's own `thread N` + `bt` (asx threads
                        names the LWP)

They read libasx's own structures, so libasx must have its debug
information (a build with -g, as make builds it, or the distribution's
debug symbols).  `asx bt` moves the selected thread's registers to the
saved context for the duration of the backtrace and puts them back, so it
needs a live process, not a core file.  The ucontext build
(-DASX_ASC_UCONTEXT) is not supported by `asx bt`.
"""

import gdb

# the x86-64 switch (lib/src/asc/switch.c) pushes, from the saved stack
# pointer up: MXCSR and the x87 control word (8 bytes), r15, r14, r13, r12,
# rbx, rbp, then the return address of the call that switched
_SAVED = ("r15", "r14", "r13", "r12", "rbx", "rbp")
_FRAME = 8 + 8 * len(_SAVED)


class AsxError(gdb.GdbError):
    pass


def _sched():
    try:
        return gdb.parse_and_eval("asx__sched")
    except gdb.error:
        raise AsxError("asx: no libasx in this program, or no debug information for it "
                       "(build with -g, or install libasx's debug symbols)")


def _enum_names(tname):
    try:
        t = gdb.lookup_type(tname)
    except gdb.error:
        return {}
    return {int(f.enumval): f.name for f in t.fields()}


def _cstr(v):
    try:
        return v.string()
    except gdb.error:
        return "?"


def _ascs():
    a = _sched()["ascs"]
    while int(a):
        yield a
        a = a["next"]


def _vps(a):
    v = a["vps"]
    while int(v):
        yield v
        v = v["next"]


def _threads(a):
    t = a["threads"]
    while int(t):
        yield t
        t = t["all_next"]


def _running_on(t):
    """The VP running @t, or None."""
    for v in _vps(t["asc"]):
        if int(v["cur"]) == int(t):
            return v
    return None


def _fn_name(p):
    b = gdb.block_for_pc(int(p)) if int(p) else None
    if b and b.function:
        return b.function.print_name
    return "0x%x" % int(p)


class AsxPrefix(gdb.Command):
    """libasx's ASC user threads: asx ascs, asx threads, asx bt."""

    def __init__(self):
        super().__init__("asx", gdb.COMMAND_STACK, gdb.COMPLETE_NONE, True)


class AsxAscs(gdb.Command):
    """List every ASC with its VPs and the user thread each runs.

Usage: asx ascs"""

    def __init__(self):
        super().__init__("asx ascs", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        if arg.strip():
            raise AsxError("asx ascs: takes no arguments")
        vpst = _enum_names("enum vpstate")
        n = 0
        for a in _ascs():
            n += 1
            gdb.write("ASC %s (0x%x): policy %s, %d threads, %d VPs\n" % (
                _cstr(a["name"]), int(a), _cstr(a["pol"]["name"]),
                int(a["nthreads"]), int(a["nvps"])))
            for v in _vps(a):
                cur = v["cur"]
                gdb.write("  VP LWP %d %s%s\n" % (
                    int(v["tid"]), vpst.get(int(v["state"]), str(int(v["state"]))),
                    ", running 0x%x '%s'" % (int(cur), _cstr(cur["name"])) if int(cur)
                    else ""))
        if not n:
            gdb.write("no ASC\n")


class AsxThreads(gdb.Command):
    """List every ASC user thread, or those of the ASC named.

Usage: asx threads [ASC-NAME]"""

    def __init__(self):
        super().__init__("asx threads", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        want = arg.strip()
        tst = _enum_names("enum tstate")
        n = 0
        for a in _ascs():
            if want and _cstr(a["name"]) != want:
                continue
            for t in _threads(a):
                n += 1
                v = _running_on(t)
                gdb.write("0x%x '%s' %s fn %s asc %s%s\n" % (
                    int(t), _cstr(t["name"]),
                    tst.get(int(t["state"]), str(int(t["state"]))),
                    _fn_name(t["fn"]), _cstr(a["name"]),
                    " on VP LWP %d" % int(v["tid"]) if v else ""))
        if not n:
            gdb.write("no user thread%s\n" % (" in ASC " + want if want else ""))


def _find(spec):
    for a in _ascs():
        for t in _threads(a):
            if _cstr(t["name"]) == spec:
                return t
            try:
                if int(t) == int(gdb.parse_and_eval(spec)):
                    return t
            except gdb.error:
                pass
    raise AsxError("asx bt: no user thread %s (asx threads lists them)" % spec)


class AsxBt(gdb.Command):
    """The backtrace of a user thread from its saved context.

Usage: asx bt THREAD [full]
THREAD is the thread's address or name, as `asx threads` prints them."""

    def __init__(self):
        super().__init__("asx bt", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        args = arg.split()
        if not args or len(args) > 2 or (len(args) == 2 and args[1] != "full"):
            raise AsxError("usage: asx bt THREAD [full]")
        t = _find(args[0])
        v = _running_on(t)
        if v is not None:
            raise AsxError("asx bt: '%s' is running on LWP %d: select that thread "
                           "(info threads, thread N) and use bt" %
                           (_cstr(t["name"]), int(v["tid"])))
        ctx = t["ctx"]
        try:
            sp = int(ctx["sp"])
        except gdb.error:
            raise AsxError("asx bt: this libasx saves contexts with ucontext; not supported")
        if not sp or int(t["switching"]):
            raise AsxError("asx bt: '%s' has no saved context now" % _cstr(t["name"]))
        if not gdb.selected_inferior().pid:
            raise AsxError("asx bt: needs a live process")
        u64 = gdb.lookup_type("unsigned long")
        word = lambda off: int(gdb.Value(sp + off).cast(u64.pointer()).dereference())
        regs = {r: word(8 + 8 * i) for i, r in enumerate(_SAVED)}
        regs["rip"] = word(_FRAME)
        regs["rsp"] = sp + _FRAME + 8
        gdb.execute("frame 0", to_string=True)
        frame = gdb.selected_frame()
        saved = {r: int(frame.read_register(r)) for r in regs}
        try:
            for r, val in regs.items():
                gdb.execute("set $%s = %d" % (r, val), to_string=True)
            gdb.write("user thread 0x%x '%s':\n" % (int(t), _cstr(t["name"])))
            gdb.execute("bt full" if len(args) == 2 else "bt", from_tty)
        finally:
            for r, val in saved.items():
                gdb.execute("set $%s = %d" % (r, val), to_string=True)
            gdb.execute("frame 0", to_string=True)


AsxPrefix()
AsxAscs()
AsxThreads()
AsxBt()
