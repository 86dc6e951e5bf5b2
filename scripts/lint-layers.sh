#!/bin/sh
# lint-layers.sh - the tree's layering holds:
#   1. no file under src/core/ includes a header of src/preload/ (the build
#      compiles core with -Isrc/core alone; this says why when it fails);
#   2. no object of src/core/ references a symbol defined in src/preload/
#      (needs the objects: run after `make`; skipped, with a note, before);
#   3. no include cycle among the modules of src/ (X.c or X.h including
#      Y.h makes an edge X -> Y);
#   4. no file in src/ or tools/ over 600 lines.
set -u
cd "$(dirname "$0")/.." || exit 2
B=${B:-build}
exec python3 - "$B" <<'PY'
import os, re, subprocess, sys

build = sys.argv[1]
bad = []
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

def modules(d):
    return sorted({f.rsplit('.', 1)[0] for f in os.listdir(d)
                   if f.endswith(('.c', '.h'))})

layer = {m: 'core' for m in modules('src/core')}
layer.update({m: 'preload' for m in modules('src/preload')})

edges = {}
for d in ('src/core', 'src/preload'):
    for f in sorted(os.listdir(d)):
        if not f.endswith(('.c', '.h')):
            continue
        me = f.rsplit('.', 1)[0]
        with open(os.path.join(d, f)) as fh:
            for h in inc.findall(fh.read()):
                dep = h.rsplit('.', 1)[0]
                if dep not in layer or dep == me:
                    continue
                edges.setdefault(me, set()).add(dep)
                if layer[me] == 'core' and layer[dep] == 'preload':
                    bad.append('%s/%s includes preload header %s' % (d, f, h))

# Include cycles: a depth-first search that reports each back edge's loop.
state, stack = {}, []
def visit(m):
    state[m] = 1
    stack.append(m)
    for n in sorted(edges.get(m, ())):
        if state.get(n) == 1:
            bad.append('include cycle: ' + ' -> '.join(stack[stack.index(n):] + [n]))
        elif n not in state:
            visit(n)
    stack.pop()
    state[m] = 2
for m in sorted(layer):
    if m not in state:
        visit(m)

# Symbols: what core objects need must not come from preload objects.
def syms(obj, flag):
    out = subprocess.run(['nm', flag, obj], capture_output=True, text=True).stdout
    return {l.split()[-1] for l in out.splitlines() if l.strip()}
objdir = os.path.join(build, 'obj')
core_o = [os.path.join(objdir, 'core', m + '.o') for m in layer
          if layer[m] == 'core' and os.path.exists('src/core/%s.c' % m)]
pre_o = [os.path.join(objdir, 'preload', m + '.o') for m in layer
         if layer[m] == 'preload' and os.path.exists('src/preload/%s.c' % m)]
if all(map(os.path.exists, core_o + pre_o)):
    defined = set()
    for o in pre_o:
        defined |= syms(o, '--defined-only')
    for o in core_o:
        for s in sorted(syms(o, '-u') & defined):
            bad.append('%s references %s, defined in src/preload/' % (o, s))
else:
    print('lint-layers: objects not built in %s; symbol check skipped' % build)

for d in ('src/core', 'src/preload', 'tools'):
    for f in sorted(os.listdir(d)):
        if f.endswith(('.c', '.h')):
            with open(os.path.join(d, f)) as fh:
                n = sum(1 for _ in fh)
            if n > 600:
                bad.append('%s/%s has %d lines (at most 600)' % (d, f, n))

if bad:
    print('lint-layers:\n  ' + '\n  '.join(bad))
    sys.exit(1)
print('lint-layers: ok')
PY
