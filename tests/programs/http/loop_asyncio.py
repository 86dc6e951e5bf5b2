#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""loop_asyncio.py URL... - GETs every URL at once on one asyncio loop
(non-blocking sockets, epoll) while a ticker measures how late the loop
runs its 10 ms timer, for test_http_wait.sh.  Prints
"statuses S,S,... max_lag_ms M" and exits 0 when every answer was 200."""
import asyncio
import sys
import time
import urllib.parse


async def get(url):
    u = urllib.parse.urlsplit(url)
    r, w = await asyncio.open_connection(u.hostname, u.port)
    w.write(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (u.path, u.netloc)).encode())
    await w.drain()
    status = (await r.readline()).split()[1].decode()
    n = 0
    while (line := await r.readline()) not in (b"\r\n", b""):
        k, _, v = line.decode().partition(":")
        if k.lower() == "content-length":
            n = int(v)
    await r.readexactly(n)
    w.close()
    return status


async def ticker(lag, stop):
    while not stop.is_set():
        t = time.monotonic()
        await asyncio.sleep(0.01)
        lag[0] = max(lag[0], time.monotonic() - t - 0.01)


async def main(urls):
    lag, stop = [0.0], asyncio.Event()
    tick = asyncio.create_task(ticker(lag, stop))
    statuses = await asyncio.wait_for(asyncio.gather(*map(get, urls)), 20)
    stop.set()
    await tick
    print("statuses %s max_lag_ms %d" % (",".join(statuses), lag[0] * 1000))
    return all(s == "200" for s in statuses)


sys.exit(0 if asyncio.run(main(sys.argv[1:])) else 1)
