#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""api-check.py - libasx's API conventions (Documentation/index.rst), checked.

Usage: tools/api-check.py [--headers DIR] [--src DIR] [--static LIBASX_A] [--shared LIBASX_SO]

1. Options: a public struct whose first member is `size_t sz` is an option
   struct named asx_*_opts, or an operations table a caller hands in,
   versioned the same way, named asx_*_ops; every asx_*_opts has `size_t
   sz` first.
   No public header defines its own ASX_*_OPTS/ASX_*_ATTR declaring macro
   (ASX_OPTS() in <asx/common.h> is the one), and no source of lib/src but
   core/opts.[ch] reads an options struct's sz itself (ASX__OPTS_COPY()).
2. Constructors: asx_*_create() and the Module factories asx_mod_*()
   returning a Module are `int f(struct asx_X **out, ...)`; a public
   function returning `struct asx_* *` is one of the listed exceptions
   (hot-path allocators) or accessors, so a new pointer-returning
   constructor fails here until it is reshaped or deliberately listed.
3. Internal names: every global symbol of libasx.a that libasx.so does not
   export starts asx__; no name in a public header or in libasx.so uses
   another internal prefix (asx_<x>__..., asx_rx_...).
Exits 1 with one line per violation.
"""
import argparse
import os
import re
import subprocess
import sys

# Pointer-returning calls that are not constructors of the int f(T **out) shape.
# Exceptions (documented in <asx/common.h> and Documentation/index.rst): the
# message allocators of the hot path, NULL meaning short memory.
PTR_EXCEPTIONS = {
    'asx_msg_alloc', 'asx_msg_wrap', 'asx_msg_dup', 'asx_msg_copy', 'asx_xdr_msg_finish',
}
# Accessors: they return an object that already exists.
PTR_ACCESSORS = {
    'asx_asc_thread_self', 'asx_asc_thread_asc', 'asx_mux_upper_map',
    'asx_module_wr', 'asx_module_rd', 'asx_task_module', 'asx_task_stream',
    'asx_task_sibling', 'asx_task_queue', 'asx_stream_head_queue', 'asx_stream_head',
    'asx_stream_tail', 'asx_xdr_chan_out', 'asx_xdr_chan_in',
    'asx_asc_vp_bound',
}
# *_create calls whose object is not a struct asx_X (a key, like pthread_key_create).
CREATE_NOT_OBJECT = {'asx_tss_create', 'asx_asc_key_create'}
# Module calls that are not factories.
MOD_NOT_FACTORY = {'asx_mod_counter_read', 'asx_mod_errors', 'asx_mod_xdr_stats'}

errors = []


def err(msg):
    errors.append(msg)


def strip_comments(s):
    s = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), s, flags=re.S)
    return re.sub(r'//[^\n]*', '', s)


def split_params(p):
    out, depth, cur = [], 0, ''
    for ch in p:
        if ch == '(':
            depth += 1
        elif ch == ')':
            depth -= 1
        if ch == ',' and depth == 0:
            out.append(cur.strip())
            cur = ''
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def check_headers(hdir):
    funcs = {}
    for name in sorted(os.listdir(hdir)):
        if not name.endswith('.h'):
            continue
        path = os.path.join(hdir, name)
        raw = open(path, encoding='utf-8').read()
        src = strip_comments(raw)
        where = lambda pos: '%s:%d' % (path, src.count('\n', 0, pos) + 1)

        # 1. option structs
        for m in re.finditer(r'\bstruct\s+(asx_\w+)\s*\{\s*([^;{}]*);', src):
            sname, first = m.group(1), ' '.join(m.group(2).split())
            sized = first == 'size_t sz'
            if sname.endswith('_opts') and not sized:
                err('%s: struct %s: an option struct starts with `size_t sz` (has `%s`)'
                    % (where(m.start()), sname, first))
            if sized and not sname.endswith(('_opts', '_ops')):
                err('%s: struct %s starts with `size_t sz`: name it asx_*_opts (or *_ops)'
                    % (where(m.start()), sname))
        for m in re.finditer(r'#\s*define\s+(ASX_\w+_(?:OPTS|ATTR))\s*\(', src):
            err('%s: %s(): declare option structs with ASX_OPTS() (asx/common.h)'
                % (where(m.start()), m.group(1)))

        # 3. internal prefixes in public headers
        for m in re.finditer(r'\b(asx_[a-z0-9]+__\w+|asx_rx_\w+|ASX_[A-Z0-9]+__\w+)', src):
            err('%s: %s: internal names start asx__ (ASX__)' % (where(m.start()), m.group(1)))

        # 2. constructors
        for m in re.finditer(r'\bASX_API\b([^;{]*)', src):
            decl = ' '.join(m.group(1).split())
            d = re.match(r'(.*?)\b(asx_\w+)\s*\((.*)\)', decl)
            if not d:
                continue
            ret, fname, params = d.group(1).strip(), d.group(2), split_params(d.group(3))
            ret = re.sub(r'__attribute__\s*\(\(.*?\)\)', '', ret).strip()
            returns_ptr = re.fullmatch(r'(const\s+)?struct\s+asx_\w+\s*\*', ret) is not None
            is_ctor = (fname.endswith('_create') and fname not in CREATE_NOT_OBJECT) or \
                (fname.startswith('asx_mod_') and fname not in MOD_NOT_FACTORY)
            if is_ctor:
                first = params[0] if params else ''
                if ret != 'int' or not re.match(r'struct\s+asx_\w+\s*\*\*', first):
                    err('%s: %s(): a constructor is `int %s(struct asx_X **out, ...)`'
                        % (where(m.start()), fname, fname))
            elif returns_ptr and fname not in PTR_EXCEPTIONS | PTR_ACCESSORS:
                err('%s: %s() returns a pointer: make it `int f(struct asx_X **out, ...)`, or '
                    'list it in tools/api-check.py (and common.h) as an exception or accessor'
                    % (where(m.start()), fname))
            if fname.endswith('_new'):
                err('%s: %s(): a constructor is named *_create' % (where(m.start()), fname))
            funcs[fname] = where(m.start())
    for fname, loc in sorted(funcs.items()):
        if fname.endswith('_free') and fname[:-5] + '_create' in funcs:
            err('%s: %s(): what %s_create() makes, %s_destroy() frees'
                % (loc, fname, fname[:-5], fname[:-5]))


def check_sources(sdir):
    """Option structs are read only through ASX__OPTS_COPY() (core/opts.h)."""
    for root, _, files in os.walk(sdir):
        for name in sorted(files):
            path = os.path.join(root, name)
            if not name.endswith(('.c', '.h')) or os.path.relpath(path, sdir).startswith('core/opts.'):
                continue
            src = strip_comments(open(path, encoding='utf-8').read())
            for line in sorted({src.count('\n', 0, m.start()) + 1
                                for m in re.finditer(r'->sz\b', src)}):
                err('%s:%d: reads an option struct\'s sz by hand: use ASX__OPTS_COPY() '
                    '(core/opts.h)' % (path, line))


def symbols(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    syms = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in 'TDBRVWG' and f[1] != 'U':
            syms.add(f[2].split('@')[0])
    return syms


def check_symbols(static, shared):
    exported = symbols(['nm', '-D', '--defined-only', shared])
    defined = symbols(['nm', '-g', '--defined-only', static])
    for s in sorted(defined - exported):
        if s.startswith('asx__') or s.startswith('_.stapsdt') or s.startswith('LIBASX_'):
            continue
        err('%s: global symbol %s is not exported: internal names start asx__' % (static, s))
    for s in sorted(exported):
        if s.startswith('LIBASX_'):
            continue
        if re.match(r'asx_[a-z0-9]+__|asx_rx_', s):
            err('%s: %s: internal names start asx__' % (shared, s))


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--headers', default=os.path.join(top, 'lib/include/asx'))
    ap.add_argument('--src', default=os.path.join(top, 'lib/src'))
    ap.add_argument('--static', default=os.path.join(top, 'build/lib/libasx.a'))
    ap.add_argument('--shared', default=os.path.join(top, 'build/lib/libasx.so.0'))
    a = ap.parse_args()
    check_headers(a.headers)
    check_sources(a.src)
    check_symbols(a.static, a.shared)
    for e in errors:
        print('api-check: ' + e, file=sys.stderr)
    if errors:
        print('api-check: %d violation(s) of the conventions in Documentation/index.rst'
              % len(errors), file=sys.stderr)
        return 1
    print('api-check: options, constructors and internal names follow the conventions')
    return 0


if __name__ == '__main__':
    sys.exit(main())
