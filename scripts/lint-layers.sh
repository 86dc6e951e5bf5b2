#!/bin/sh
# SPDX-License-Identifier: MIT
# lint-layers.sh - the tree's layering holds.  The layers and the order of
# their sub-layers (folders) are written once, in the `layers` block of
# doc/architecture.md, which this script reads:
#
#   src/core:     base policy ...             (bottom-up)
#   src/preload:  state ... entry    (also uses src/core)
#
# A file may use (include a header of, or call a function of) a file of
# its own folder, of a folder listed before its own in its layer, or of a
# layer its layer names as used; nothing else.  Checked:
#   1. every C file of src/ lies in a folder the block lists, and header
#      names are unique across src/ (sources include them by bare name);
#   2. includes: no header of a higher (or foreign) folder;
#   3. calls: no undefined symbol of an object resolved in the object of a
#      higher (or foreign) folder (needs the objects: run after `make`;
#      skipped, with a note, before);
#   4. no circle among the modules of src/ (X.c or X.h including Y.h, or
#      X.o calling into Y.o, makes an edge X -> Y);
#   5. no file in src/ over 600 lines.
set -u
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
DOC=${LAYERS_DOC:-doc/architecture.md}
exec python3 - "$B" "$DOC" <<'PY'
import os, re, subprocess, sys

build, doc = sys.argv[1], sys.argv[2]
bad = []

# The order: the ```layers block of the doc, one layer a line.
text = open(doc).read()
m = re.search(r'^```layers\n(.*?)^```', text, re.M | re.S)
if not m:
    sys.exit('lint-layers: no ```layers block in %s' % doc)
order = {}      # folder -> (layer, rank)
uses = {}       # layer -> layers it may use besides itself
for line in m.group(1).splitlines():
    lm = re.match(r'^(src/\w+):\s*([\w\s-]*?)\s*(?:\(also uses ([^)]*)\))?\s*$',
                  line)
    if not lm:
        if line.strip():
            sys.exit('lint-layers: cannot read %r in %s' % (line, doc))
        continue
    layer, subs = lm.group(1), lm.group(2).split()
    uses[layer] = set((lm.group(3) or '').split())
    if subs == ['-']:
        order[layer] = (layer, 0)
    for rank, s in enumerate(subs if subs != ['-'] else []):
        order['%s/%s' % (layer, s)] = (layer, rank)

def allowed(src, dst):
    """Whether folder src may use folder dst."""
    (ls, rs), (ld, rd) = order[src], order[dst]
    if ls == ld:
        return rd <= rs
    return ld in uses[ls]

# The files, their folders and modules (a module: X.c and X.h).
folder_of = {}  # module -> folder
files = []
for root, dirs, names in os.walk('src'):
    dirs.sort()
    for f in sorted(names):
        if not f.endswith(('.c', '.h', '.S')):
            continue
        path = os.path.join(root, f)
        files.append(path)
        if root not in order:
            bad.append('%s: folder %s is not in the layers of %s'
                       % (path, root, doc))
            continue
        mod = f.rsplit('.', 1)[0]
        if folder_of.get(mod, root) != root:
            bad.append('%s: module name also in %s (header names must be '
                       'unique across src/)' % (path, folder_of[mod]))
        folder_of[mod] = root

edges = {}
def edge(a, b):
    if a != b:
        edges.setdefault(a, set()).add(b)

inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
for path in files:
    if not path.endswith(('.c', '.h')):
        continue
    me = os.path.basename(path).rsplit('.', 1)[0]
    with open(path) as fh:
        body = fh.read()
    n = body.count('\n')
    if n > 600:
        bad.append('%s has %d lines (at most 600)' % (path, n))
    if me not in folder_of:
        continue
    for h in inc.findall(body):
        dep = h.rsplit('.', 1)[0]
        if dep not in folder_of:
            continue
        edge(me, dep)
        if not allowed(folder_of[me], folder_of[dep]):
            bad.append('%s includes %s of %s: a higher or foreign layer'
                       % (path, h, folder_of[dep]))

# Calls: what each object needs, resolved to the object that defines it.
def syms(obj, flag):
    out = subprocess.run(['nm', flag, obj], capture_output=True,
                         text=True).stdout
    return {l.split()[-1] for l in out.splitlines() if l.strip()}
objdir = os.path.join(build, 'obj')
objs = {}       # object -> module
for mod, folder in folder_of.items():
    for ext in ('.c', '.S'):
        src = os.path.join(folder, mod + ext)
        if os.path.exists(src):
            objs[os.path.join(objdir, os.path.relpath(src, 'src'))[:-2]
                 + '.o'] = mod
# The names the boundary exports are libc's to every other caller (a
# call to close() is libc's, which lint-calls.sh keeps out of src/).
exported = set()
for root, dirs, names in os.walk('src'):
    for f in names:
        if f.endswith('.map'):
            body = open(os.path.join(root, f)).read()
            g = re.search(r'global:(.*?)local:', body, re.S)
            if g:
                exported |= set(re.findall(r'([A-Za-z_]\w*)\s*;', g.group(1)))
if all(map(os.path.exists, objs)):
    definer = {}
    for o, mod in objs.items():
        for s in syms(o, '--defined-only') - exported:
            definer.setdefault(s, mod)
    for o, mod in sorted(objs.items()):
        for s in sorted(syms(o, '-u')):
            dep = definer.get(s)
            if dep is None or dep == mod:
                continue
            edge(mod, dep)
            if not allowed(folder_of[mod], folder_of[dep]):
                bad.append('%s calls %s, defined in %s: a higher or foreign '
                           'layer' % (o, s, folder_of[dep]))
else:
    print('lint-layers: objects not built in %s; symbol check skipped'
          % build)

# Circles: a depth-first search that reports each back edge's loop.
state, stack = {}, []
def visit(m):
    state[m] = 1
    stack.append(m)
    for n in sorted(edges.get(m, ())):
        if state.get(n) == 1:
            bad.append('circle: ' + ' -> '.join(stack[stack.index(n):] + [n]))
        elif n not in state:
            visit(n)
    stack.pop()
    state[m] = 2
sys.setrecursionlimit(10000)
for m in sorted(folder_of):
    if m not in state:
        visit(m)

# One circle shows as many loops; the first few say where it is.
circles = [b for b in bad if b.startswith('circle: ')]
if len(circles) > 5:
    bad = [b for b in bad if not b.startswith('circle: ')] + circles[:5] + \
        ['(and %d more loops through the same files)' % (len(circles) - 5)]
if bad:
    print('lint-layers:\n  ' + '\n  '.join(bad))
    sys.exit(1)
print('lint-layers: ok (%d folders, %d modules)' % (len(order), len(folder_of)))
PY
