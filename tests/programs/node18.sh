#!/bin/sh
# SPDX-License-Identifier: MIT
# node18.sh - Debian's own node (bookworm's nodejs 18 with libnode108),
# for the https tests: it links the system's libssl 3 (and so can be
# followed), where the node such machines often carry (nodesource's)
# links OpenSSL in statically and is out of reach.  Debian's packages are
# fetched once with `apt-get download` into a cache and unpacked there;
# the installed nodejs is left alone.  Prints the path of a runner (use
# it as `node`), or says why not on standard error and exits 1.
#
# libnode.so.108 looks for some of its JavaScript at fixed paths under
# /usr/share/nodejs: the runner lays the unpacked copy over that folder
# in a private mount namespace (unshare -m), seen by node alone.
set -eu
D=${RS_NODE18_DIR:-/var/cache/resolute-tests/node18}
R=$D/root
run=$D/node
if [ ! -x "$run" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "node18.sh: root needed to fetch it" >&2; exit 1; }
	command -v apt-get >/dev/null 2>&1 || { echo "node18.sh: no apt-get" >&2; exit 1; }
	# The newest Debian build of libnode108, and nodejs of the same.
	v=$(apt-cache show libnode108 2>/dev/null | sed -n 's/^Version: //p' | head -1)
	[ -n "$v" ] || { echo "node18.sh: no libnode108 in the package lists" >&2; exit 1; }
	mkdir -p "$D/debs"
	(cd "$D/debs" && timeout 300 apt-get download -q "nodejs=$v" \
		"libnode108=$v" node-cjs-module-lexer node-acorn node-undici \
		>/dev/null 2>&1) || { echo "node18.sh: apt-get download failed" >&2; exit 1; }
	# Its shared libraries, none of which touches the installed node.
	missing=$(for f in "$D"/debs/libnode108_*.deb; do
		dpkg-deb -f "$f" Depends; done | tr ',' '\n' | sed 's/[ (].*//; s/^ *//' |
		grep -E '^lib' | grep -v '^libnode' | while read -r p; do
			dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' ||
			    echo "$p"; done)
	if [ -n "$missing" ]; then
		# shellcheck disable=SC2086 # a list of package names
		DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -q \
			--no-install-recommends $missing >/dev/null 2>&1 ||
			{ echo "node18.sh: could not install$missing" >&2; exit 1; }
	fi
	rm -rf "$R"
	for f in "$D"/debs/*.deb; do dpkg-deb -x "$f" "$R"; done
	cat >"$run.new" <<EOS
#!/bin/sh
# Debian's node 18, unpacked in $R (tests/programs/node18.sh).
exec unshare -m sh -c 'mount -t overlay overlay -o lowerdir=$R/usr/share/nodejs:/usr/share/nodejs /usr/share/nodejs && LD_LIBRARY_PATH=$R/usr/lib/x86_64-linux-gnu exec $R/usr/bin/node "\$@"' node "\$@"
EOS
	chmod +x "$run.new"
	mv "$run.new" "$run"
fi
"$run" -e 'process.exit(process.versions.node.startsWith("18.") ? 0 : 1)' ||
	{ echo "node18.sh: $run does not start" >&2; exit 1; }
echo "$run"
