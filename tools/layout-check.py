#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""layout-check.py - the layout of libasx's public structs against lib/libasx.layout.

Usage: tools/layout-check.py [--update] [--cc CC] [--layout FILE]

Compiles a probe that includes every public header (lib/include/asx/*.h)
with -g, reads from its debug information the size of every complete
struct and union named asx_* and, for each member (members of anonymous
structs and unions flattened), its offset (bits for a bit-field) and size,
and compares them with the committed lib/libasx.layout.  A struct that
changed size, a member that moved, grew, appeared or went fails the check
the way a changed symbol fails tools/abi-check.sh: an application compiled
against the old header would read the wrong bytes.  When the change is
meant (a new struct, a new opaque type, SONAME bump), regenerate the file
with --update and say so in the commit.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

DIE = re.compile(r'^\s*<(\d+)><([0-9a-f]+)>: Abbrev Number: \d+(?: \((DW_TAG_\w+)\))?')
ATTR = re.compile(r'^\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s*(.*)$')


def parse_dies(text):
    """DIEs as dicts {tag, attrs, children, off}; returns (root list, by offset)."""
    by_off, stack, roots = {}, [], []
    cur = None
    for line in text.splitlines():
        m = DIE.match(line)
        if m:
            level, off, tag = int(m.group(1)), int(m.group(2), 16), m.group(3)
            if tag is None:  # the null entry closing a sibling list
                cur = None
                continue
            cur = {'tag': tag, 'attrs': {}, 'children': [], 'off': off}
            by_off[off] = cur
            del stack[level:]
            if stack:
                stack[-1]['children'].append(cur)
            else:
                roots.append(cur)
            stack.append(cur)
            continue
        m = ATTR.match(line)
        if m and cur is not None:
            # readelf may name the form first: "(data1) 88", "(strp) (offset: 0x9): x"
            cur['attrs'][m.group(1)] = re.sub(r'^\((?:data|sdata|udata|string|strp|strx|line_strp|ref|'
                                              r'implicit_const|flag|sec_offset|exprloc)\w*\)\s*', '',
                                              m.group(2).strip())
    return roots, by_off


def attr_name(d):
    v = d['attrs'].get('DW_AT_name')
    if v is None:
        return None
    return v.rsplit(': ', 1)[-1] if v.startswith('(') else v


def attr_int(d, a):
    v = d['attrs'].get(a)
    if v is None:
        return None
    m = re.match(r'(?:0x)?([0-9a-f]+)', v.split()[0])
    try:
        return int(v.split()[0], 0)
    except ValueError:
        return int(m.group(1), 16) if m else None


def attr_ref(d, a):
    v = d['attrs'].get(a)
    m = re.match(r'<0x([0-9a-f]+)>', v or '')
    return int(m.group(1), 16) if m else None


def type_size(by_off, ref, depth=0):
    """sizeof the type at DIE offset @ref, or '?' (flexible arrays: 0)."""
    if ref is None or depth > 32 or ref not in by_off:
        return '?'
    t = by_off[ref]
    bs = attr_int(t, 'DW_AT_byte_size')
    if bs is not None:
        return bs
    if t['tag'] == 'DW_TAG_array_type':
        n = 1
        for sub in t['children']:
            if sub['tag'] != 'DW_TAG_subrange_type':
                continue
            ub, cnt = attr_int(sub, 'DW_AT_upper_bound'), attr_int(sub, 'DW_AT_count')
            if cnt is None and ub is None:
                return 0  # flexible array member
            n *= cnt if cnt is not None else ub + 1
        el = type_size(by_off, attr_ref(t, 'DW_AT_type'), depth + 1)
        return el * n if isinstance(el, int) else '?'
    if t['tag'] in ('DW_TAG_typedef', 'DW_TAG_const_type', 'DW_TAG_volatile_type',
                    'DW_TAG_atomic_type', 'DW_TAG_restrict_type'):
        return type_size(by_off, attr_ref(t, 'DW_AT_type'), depth + 1)
    return '?'


def strip_cv(by_off, ref):
    while ref in by_off and by_off[ref]['tag'] in ('DW_TAG_const_type', 'DW_TAG_volatile_type',
                                                    'DW_TAG_atomic_type'):
        ref = attr_ref(by_off[ref], 'DW_AT_type')
    return ref


def members(by_off, d, base, prefix, out):
    for m in d['children']:
        if m['tag'] != 'DW_TAG_member':
            continue
        off = attr_int(m, 'DW_AT_data_member_location') or 0
        name = attr_name(m)
        tref = attr_ref(m, 'DW_AT_type')
        bits = attr_int(m, 'DW_AT_bit_size')
        if name is None:
            t = by_off.get(strip_cv(by_off, tref))
            if t and t['tag'] in ('DW_TAG_structure_type', 'DW_TAG_union_type'):
                members(by_off, t, base + off, prefix, out)
            continue
        if bits is not None:
            boff = attr_int(m, 'DW_AT_data_bit_offset')
            if boff is None:
                boff = off * 8
            out.append(('%s%s' % (prefix, name), 'bit %d' % ((base * 8) + boff), 'bits %d' % bits))
        else:
            out.append(('%s%s' % (prefix, name), str(base + off), str(type_size(by_off, tref))))


def probe(cc, top):
    hdrs = sorted(h for h in os.listdir(os.path.join(top, 'lib/include/asx')) if h.endswith('.h'))
    with tempfile.TemporaryDirectory() as tmp:
        src, obj = os.path.join(tmp, 'probe.c'), os.path.join(tmp, 'probe.o')
        with open(src, 'w') as f:
            f.write(''.join('#include <asx/%s>\n' % h for h in hdrs))
            f.write('int asx_layout_probe;\n')
        subprocess.run([cc, '-std=gnu11', '-D_GNU_SOURCE', '-I', os.path.join(top, 'lib/include'),
                        '-I', os.path.join(top, 'uapi'), '-g', '-O0',
                        '-fno-eliminate-unused-debug-types', '-c', src, '-o', obj], check=True)
        text = subprocess.run(['readelf', '--wide', '--debug-dump=info', obj], check=True,
                              capture_output=True, text=True).stdout
    roots, by_off = parse_dies(text)
    layout = {}
    for cu in roots:
        for d in cu['children']:
            if d['tag'] not in ('DW_TAG_structure_type', 'DW_TAG_union_type'):
                continue
            name = attr_name(d)
            if not name or not name.startswith('asx_') or 'DW_AT_declaration' in d['attrs']:
                continue
            kind = 'struct' if d['tag'] == 'DW_TAG_structure_type' else 'union'
            ms = []
            members(by_off, d, 0, '', ms)
            layout['%s %s' % (kind, name)] = (attr_int(d, 'DW_AT_byte_size'), ms)
    return layout


def render(layout):
    lines = ['# libasx public struct layouts: size, then each member\'s offset and size in bytes',
             '# (bit-fields in bits).  Checked by tools/layout-check.py (make check, stage abi);',
             '# regenerate with tools/layout-check.py --update when a change is meant.']
    for key in sorted(layout):
        size, ms = layout[key]
        lines.append('%s size %s' % (key, size))
        for name, off, sz in ms:
            lines.append('\t%s %s %s' % (name, off if off.startswith('bit') else 'offset ' + off,
                                         sz if sz.startswith('bits') else 'size ' + sz))
    return '\n'.join(lines) + '\n'


def load(path):
    layout, cur = {}, None
    for line in open(path, encoding='utf-8'):
        if line.startswith('#') or not line.strip():
            continue
        if not line.startswith('\t'):
            f = line.split()
            cur = '%s %s' % (f[0], f[1])
            layout[cur] = (int(f[3]), [])
        else:
            f = line.split()
            layout[cur][1].append((f[0], ' '.join(f[1:3]), ' '.join(f[3:5])))
    return layout


def compare(old, new):
    msgs = []
    for key in sorted(set(old) | set(new)):
        if key not in new:
            msgs.append('%s: gone from the public headers' % key)
            continue
        if key not in old:
            msgs.append('%s: new (size %s), not in the committed layout' % (key, new[key][0]))
            continue
        if old[key][0] != new[key][0]:
            msgs.append('%s: size %s -> %s' % (key, old[key][0], new[key][0]))
        om = {n: (o, s) for n, o, s in old[key][1]}
        nm = {n: (o, s) for n, o, s in new[key][1]}
        for n in [x[0] for x in old[key][1]]:
            if n not in nm:
                msgs.append('%s: member %s (%s) removed' % (key, n, om[n][0]))
            elif om[n] != nm[n]:
                msgs.append('%s: member %s: %s, %s -> %s, %s' % (key, n, om[n][0], om[n][1],
                                                                 nm[n][0], nm[n][1]))
        for n in [x[0] for x in new[key][1]]:
            if n not in om:
                msgs.append('%s: member %s added at %s' % (key, n, nm[n][0]))
        order_old = [n for n, _, _ in old[key][1] if n in nm]
        order_new = [n for n, _, _ in new[key][1] if n in om]
        if order_old != order_new:
            msgs.append('%s: members reordered' % key)
    return msgs


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--update', action='store_true', help='rewrite the layout file')
    ap.add_argument('--cc', default=os.environ.get('CC', 'cc'))
    ap.add_argument('--layout', default=os.path.join(top, 'lib/libasx.layout'))
    a = ap.parse_args()
    new = probe(a.cc, top)
    if not new:
        print('layout-check: no asx_* struct found in the probe', file=sys.stderr)
        return 1
    text = render(new)
    if a.update:
        with open(a.layout, 'w') as f:
            f.write(text)
        print('layout-check: wrote %s (%d structs)' % (a.layout, len(new)))
        return 0
    if not os.path.exists(a.layout):
        print('layout-check: %s missing: run tools/layout-check.py --update' % a.layout,
              file=sys.stderr)
        return 1
    msgs = compare(load(a.layout), load_text(text))
    if msgs:
        for m in msgs:
            print('layout-check: ' + m, file=sys.stderr)
        print('layout-check: the public struct layouts differ from %s: an ABI change for '
              'programs built against the old headers.  If it is meant, run '
              'tools/layout-check.py --update and commit the file.' % os.path.relpath(a.layout, top),
              file=sys.stderr)
        return 1
    print('layout-check: %d public structs, layouts as in %s' % (len(new), os.path.relpath(a.layout, top)))
    return 0


def load_text(text):
    with tempfile.NamedTemporaryFile('w', suffix='.layout', delete=False) as f:
        f.write(text)
        path = f.name
    try:
        return load(path)
    finally:
        os.unlink(path)


if __name__ == '__main__':
    sys.exit(main())
