#!/bin/sh
# SPDX-License-Identifier: MIT
# get.sh CLIENT URL - one HTTP GET by a real client, for the HTTP retry
# tests: prints the body and exits 0 on a 200, non-zero otherwise.  Every
# client is used as it comes, with its defaults (wget: --tries=1, so that
# its own retries do not hide what the library does).
HERE=$(dirname "$0")

get_curl() { curl -s -f "$1"; }
get_wget() { wget -q -O - --tries=1 "$1"; }
get_urllib() {
	python3 -c 'import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1]).read().decode(), end="")' "$1"
}
get_httpclient() {
	python3 -c 'import sys, http.client, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port)
c.request("GET", u.path)
r = c.getresponse()
b = r.read().decode()
print(b, end="")
sys.exit(0 if r.status == 200 else 1)' "$1"
}
get_asyncio() {
	python3 -c 'import asyncio, sys, urllib.parse
async def main(url):
    u = urllib.parse.urlsplit(url)
    r, w = await asyncio.open_connection(u.hostname, u.port)
    w.write(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (u.path, u.netloc)).encode())
    await w.drain()
    status = (await r.readline()).split()[1]
    n = 0
    while (line := await r.readline()) not in (b"\r\n", b""):
        k, _, v = line.decode().partition(":")
        if k.lower() == "content-length":
            n = int(v)
    body = await r.readexactly(n)
    w.close()
    print(body.decode(), end="")
    return status == b"200"
sys.exit(0 if asyncio.run(main(sys.argv[1])) else 1)' "$1"
}
get_node() {
	node -e 'require("http").get(process.argv[1], (res) => {
  let b = ""; res.on("data", (d) => b += d);
  res.on("end", () => { process.stdout.write(b); process.exit(res.statusCode == 200 ? 0 : 1); });
}).on("error", (e) => { console.error(e.message); process.exit(2); });' "$1"
}
get_java() { java "$HERE/HttpGet.java" "$1"; }
get_php() {
	php -r '$b = @file_get_contents($argv[1]); if ($b === false) exit(1); echo $b;' "$1"
}

[ $# -eq 2 ] || { echo "usage: get.sh CLIENT URL" >&2; exit 2; }
"get_$1" "$2"
