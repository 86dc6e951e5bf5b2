#!/bin/sh
# SPDX-License-Identifier: MIT
# gets.sh CLIENT URL - one HTTPS GET by a real client, for the tests of
# HTTP retries over TLS: trusts the CA in $RS_CA, prints the body and
# exits 0 on a 200, non-zero otherwise (wget: --tries=1, so that its own
# retries do not hide what the library does).
[ $# -eq 2 ] && [ -n "${RS_CA:-}" ] || { echo "usage: RS_CA=CA.pem gets.sh CLIENT URL" >&2; exit 2; }
case $1 in
	curl) curl -s -f --cacert "$RS_CA" "$2" ;;
	wget) wget -q -O - --tries=1 --ca-certificate="$RS_CA" "$2" ;;
	urllib) python3 -c 'import ssl, sys, urllib.request
c = ssl.create_default_context(cafile=sys.argv[2])
print(urllib.request.urlopen(sys.argv[1], context=c).read().decode(), end="")' "$2" "$RS_CA" ;;
	urllib_timeout) python3 -c 'import ssl, sys, urllib.request
c = ssl.create_default_context(cafile=sys.argv[2])
print(urllib.request.urlopen(sys.argv[1], context=c, timeout=10).read().decode(), end="")' "$2" "$RS_CA" ;;
	httpclient) python3 -c 'import ssl, sys, http.client, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
c = http.client.HTTPSConnection(u.hostname, u.port,
    context=ssl.create_default_context(cafile=sys.argv[2]))
c.request("GET", u.path)
r = c.getresponse()
print(r.read().decode(), end="")
sys.exit(0 if r.status == 200 else 1)' "$2" "$RS_CA" ;;
	asyncio|asyncio_post) python3 -c 'import asyncio, ssl, sys, urllib.parse
async def main(url, post):
    u = urllib.parse.urlsplit(url)
    c = ssl.create_default_context(cafile=sys.argv[2])
    r, w = await asyncio.open_connection(u.hostname, u.port, ssl=c)
    body = ("Content-Type: application/x-www-form-urlencoded\r\n"
            "Content-Length: 3\r\n\r\nx=1") if post else "\r\n"
    w.write(("%s %s HTTP/1.1\r\nHost: %s\r\n%s" % ("POST" if post else "GET",
             u.path, u.netloc, body)).encode())
    await w.drain()
    head = (await r.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    size = [int(h.split(":")[1]) for h in head if h.lower().startswith("content-length:")]
    sys.stdout.write((await r.readexactly(size[0] if size else 0)).decode())
    w.close()
    return head[0].split()[1] == "200"
sys.exit(0 if asyncio.run(main(sys.argv[1], sys.argv[3] == "asyncio_post")) else 1)' "$2" "$RS_CA" "$1" ;;
	node|node18_close) NODE_EXTRA_CA_CERTS=$RS_CA ${RS_NODE:-node} -e 'require("https").get(process.argv[1], (res) => {
  let b = ""; res.on("data", (d) => b += d);
  res.on("end", () => { process.stdout.write(b); process.exit(res.statusCode == 200 ? 0 : 1); });
}).on("error", (e) => { console.error(e.message); process.exit(2); });' "$2" ;;
	node18_keepalive) NODE_EXTRA_CA_CERTS=$RS_CA ${RS_NODE:-node} -e 'const https = require("https");
https.get(process.argv[1], { agent: new https.Agent({ keepAlive: true }) }, (res) => {
  let b = ""; res.on("data", (d) => b += d);
  res.on("end", () => { process.stdout.write(b); process.exit(res.statusCode == 200 ? 0 : 1); });
}).on("error", (e) => { console.error(e.message); process.exit(2); });' "$2" ;;
	node18_tls) NODE_EXTRA_CA_CERTS=$RS_CA ${RS_NODE:-node} -e 'const tls = require("tls");
const u = new URL(process.argv[1]);
const s = tls.connect({ host: u.hostname, port: u.port, servername: "localhost" });
let b = "";
s.on("secureConnect", () => s.write("GET " + u.pathname + " HTTP/1.1\r\nHost: " + u.host + "\r\n\r\n"));
s.on("data", (d) => {
  b += d; const i = b.indexOf("\r\n\r\n"); if (i < 0) return;
  const m = /content-length: *(\d+)/i.exec(b.slice(0, i));
  if (b.length < i + 4 + (m ? +m[1] : 0)) return;
  process.stdout.write(b.slice(i + 4)); process.exit(/^HTTP\/1\.1 200/.test(b) ? 0 : 1);
});
s.on("error", (e) => { console.error(e.message); process.exit(2); });' "$2" ;;
	nodefetch|node18_fetch) NODE_EXTRA_CA_CERTS=$RS_CA ${RS_NODE:-node} -e 'fetch(process.argv[1]).then(async (r) => {
  process.stdout.write(await r.text()); process.exit(r.status == 200 ? 0 : 1);
}).catch((e) => { console.error(e.message); process.exit(2); });' "$2" ;;
	ruby) ruby -rnet/http -ropenssl -e 'u = URI(ARGV[0])
h = Net::HTTP.new(u.host, u.port); h.use_ssl = true; h.ca_file = ARGV[1]
r = h.get(u.path); print r.body; exit(r.code == "200" ? 0 : 1)' "$2" "$RS_CA" ;;
	perl) perl -MHTTP::Tiny -e 'my $r = HTTP::Tiny->new(verify_SSL => 1,
  SSL_options => { SSL_ca_file => $ARGV[1] })->get($ARGV[0]);
print $r->{content}; exit($r->{status} == 200 ? 0 : 1)' "$2" "$RS_CA" ;;
	php) php -r '$c = stream_context_create(["ssl" => ["cafile" => $argv[2]]]);
$b = @file_get_contents($argv[1], false, $c); if ($b === false) exit(1); echo $b;' "$2" "$RS_CA" ;;
	esac

