#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""kvsvc-drive.py - the clients tools/test-kvsvc.sh drives the example
key-value service (examples/kvsvc) with.  Every wait is bounded.

  ask PORT SECONDS LINE...      one connection: each LINE, its reply printed
                                ("(no answer)" after SECONDS, "(closed)" at EOF)
  session PORT GOFILE L1 L2     connect, L1 and its reply; wait (60 s at most)
                                for GOFILE to exist; L2 and its reply, or
                                "(closed)"; each reply printed as it comes
  load PORT CLIENTS KEYS        CLIENTS concurrent connections, each with its
                                own KEYS keys: SET all (pipelined), GET all,
                                DEL the even ones, GET those (NOTFOUND), QUIT;
                                then KEYS on a new connection must list every
                                odd key of every client and no even one.
                                Prints the counts; exit 0 if all held.
"""
import os
import socket
import sys
import threading
import time

TIMEOUT = 30.0


def connect(port, timeout=TIMEOUT):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.settimeout(timeout)
    return s, s.makefile("rb")


def reply(f):
    line = f.readline()
    return line.decode().rstrip("\n") if line else "(closed)"


def ask(port, seconds, lines):
    s, f = connect(port)
    s.settimeout(seconds)
    for line in lines:
        try:
            s.sendall(line.encode() + b"\n")
            print(reply(f), flush=True)
        except socket.timeout:
            print("(no answer)", flush=True)
            return
        except ConnectionResetError:
            print("(closed)", flush=True)
            return


def session(port, gofile, l1, l2):
    s, f = connect(port, 60)
    s.sendall(l1.encode() + b"\n")
    print(reply(f), flush=True)
    for _ in range(1200):
        if os.path.exists(gofile):
            break
        time.sleep(0.05)
    else:
        print("(no go file)", flush=True)
        return
    t0 = time.monotonic()
    s.sendall(l2.encode() + b"\n")
    try:
        r = reply(f)
    except ConnectionResetError:
        r = "(closed)"
    print("%s after %.2f s" % (r, time.monotonic() - t0), flush=True)


def load(port, clients, keys):
    errors = []
    counts = {"set": 0, "get": 0, "del": 0, "notfound": 0}
    lock = threading.Lock()
    nonce = os.getpid()

    def value(c, k):
        return "v-%d-%d-%d with blanks" % (c, k, nonce)

    def expect(f, n, want, what):
        got = 0
        for i in range(n):
            r = reply(f)
            w = want(i)
            if r != w:
                errors.append("%s %d: got %r, want %r" % (what, i, r, w))
                return got
            got += 1
        return got

    def client(c):
        try:
            s, f = connect(port)
            ks = ["c%d:k%d" % (c, k) for k in range(keys)]
            s.sendall("".join("SET %s %s\n" % (ks[k], value(c, k))
                              for k in range(keys)).encode())
            n_set = expect(f, keys, lambda i: "OK", "client %d SET" % c)
            s.sendall("".join("GET %s\n" % k for k in ks).encode())
            n_get = expect(f, keys, lambda i: "VALUE " + value(c, i), "client %d GET" % c)
            even = ks[0::2]
            s.sendall("".join("DEL %s\n" % k for k in even).encode())
            n_del = expect(f, len(even), lambda i: "OK", "client %d DEL" % c)
            s.sendall("".join("GET %s\n" % k for k in even).encode())
            n_nf = expect(f, len(even), lambda i: "NOTFOUND", "client %d GET deleted" % c)
            s.sendall(b"QUIT\n")
            if reply(f) != "BYE" or reply(f) != "(closed)":
                errors.append("client %d: QUIT did not say BYE and close" % c)
            with lock:
                counts["set"] += n_set
                counts["get"] += n_get
                counts["del"] += n_del
                counts["notfound"] += n_nf
        except Exception as e:	# a timeout, a reset: the run failed
            errors.append("client %d: %r" % (c, e))

    t0 = time.monotonic()
    ts = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    took = time.monotonic() - t0
    try:
        s, f = connect(port)
        s.sendall(b"KEYS\n")
        words = reply(f).split()
    except OSError as e:
        errors.append("KEYS: %r" % e)
        words = []
    listed = set(w for w in words[2:] if w.startswith("c"))
    want = set("c%d:k%d" % (c, k) for c in range(clients) for k in range(1, keys, 2))
    if words[:1] != ["KEYS"] or listed != want:
        errors.append("KEYS: %d of the %d odd keys, %d keys not wanted" % (
            len(listed & want), len(want), len(listed - want)))
    print("load: %d clients x %d keys in %.2f s: %d SET, %d GET read back as written, "
          "%d DEL, %d NOTFOUND after DEL, KEYS listed %d of %d; %d errors" % (
              clients, keys, took, counts["set"], counts["get"], counts["del"],
              counts["notfound"], len(listed & want), len(want), len(errors)))
    for e in errors[:10]:
        print("  " + e)
    return 1 if errors else 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "ask":
        return ask(int(argv[2]), float(argv[3]), argv[4:]) or 0
    if len(argv) == 6 and argv[1] == "session":
        return session(int(argv[2]), argv[3], argv[4], argv[5]) or 0
    if len(argv) == 5 and argv[1] == "load":
        return load(int(argv[2]), int(argv[3]), int(argv[4]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
