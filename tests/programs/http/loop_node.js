// SPDX-License-Identifier: MIT
// loop_node.js URL... - GETs every URL at once with node's http module
// (libuv: non-blocking sockets, epoll) while a 10 ms interval measures how
// late the event loop runs it, for test_http_wait.sh.  Prints
// "statuses S,S,... max_lag_ms M"; exit 0 when every answer was 200.
const http = require("http");
const urls = process.argv.slice(2);
let lag = 0, last = Date.now(), left = urls.length;
const statuses = [];
const tick = setInterval(() => {
  const t = Date.now();
  lag = Math.max(lag, t - last - 10);
  last = t;
}, 10);
const done = () => {
  if (--left > 0) return;
  clearInterval(tick);
  console.log(`statuses ${statuses.join(",")} max_lag_ms ${lag}`);
  process.exit(statuses.every((s) => s === 200) ? 0 : 1);
};
setTimeout(() => { console.error("no answer within 20 s"); process.exit(2); }, 20000).unref();
for (const u of urls) {
  http.get(u, (res) => {
    res.resume();
    res.on("end", () => { statuses.push(res.statusCode); done(); });
  }).on("error", (e) => { console.error(e.message); statuses.push(0); done(); });
}
