// bench/agent/agent.mjs is bench/agent (see its main.go) on the official TypeScript
// SDK: the same flags (-url, -token, -tool, -args, -n, -warmup, -c, -d, -list, -hold,
// then a stdio command) and the same one JSON line of figures. The SDK is the one
// pinned in testdata/npm (pass its folder as -sdk, default that folder from the module
// root); durations like 5s or 500ms for -d.
import { pathToFileURL } from "node:url";
import path from "node:path";
import readline from "node:readline";

const opts = { url: "", token: "", tool: "", args: '{"id":"mcp-overview"}', n: 2000, warmup: 100, c: 0, d: "5s", list: false, hold: false,
  sdk: "testdata/npm/node_modules/@modelcontextprotocol/sdk" };
const argv = process.argv.slice(2);
let cmd = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--") { cmd = argv.slice(i + 1); break; }
  const k = a.replace(/^--?/, "");
  if (!(k in opts)) { fail(new Error("unknown flag " + a)); }
  if (typeof opts[k] === "boolean") { opts[k] = true; continue; }
  opts[k] = typeof opts[k] === "number" ? Number(argv[++i]) : argv[++i];
}
const dur = (s) => { const m = /^([\d.]+)(ms|s|m)$/.exec(s); if (!m) fail(new Error("bad duration " + s)); return Number(m[1]) * { ms: 1, s: 1e3, m: 6e4 }[m[2]]; };
const sdk = (p) => import(pathToFileURL(path.resolve(opts.sdk, "dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const args = JSON.parse(opts.args);

function print(r) { process.stdout.write(JSON.stringify({ sdk: "typescript", ...r }) + "\n"); }
function fail(err) { print({ error: String(err && err.message || err) }); process.exit(1); }

async function connect() {
  const client = new Client({ name: "bench-agent", version: "1" });
  let t;
  if (opts.url) {
    const headers = opts.token ? { Authorization: "Bearer " + opts.token } : {};
    t = new StreamableHTTPClientTransport(new URL(opts.url), { requestInit: { headers } });
  } else {
    if (cmd.length === 0) fail(new Error("-url or a stdio command"));
    t = new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), env: process.env });
  }
  await client.connect(t);
  return client;
}

async function call(client) {
  const start = process.hrtime.bigint();
  const res = await client.callTool({ name: opts.tool, arguments: args });
  const took = Number(process.hrtime.bigint() - start) / 1e3; // µs
  if (res.isError) throw new Error("tool error: " + JSON.stringify(res.content));
  return took;
}

function summary(lat, tookMs, sessions) {
  lat.sort((a, b) => a - b);
  const r = { calls: lat.length, sessions };
  if (lat.length) {
    r.p50_us = lat[Math.floor(lat.length / 2)];
    r.p99_us = lat[Math.floor(lat.length * 99 / 100)];
    r.calls_per_s = lat.length / (tookMs / 1e3);
  }
  return r;
}

try {
  if (opts.c === 0) {
    const cl = await connect();
    for (let i = 0; i < opts.warmup; i++) await call(cl);
    const lat = [];
    const start = performance.now();
    for (let i = 0; i < opts.n; i++) lat.push(await call(cl));
    print(summary(lat, performance.now() - start, 1));
    await cl.close();
  } else {
    const sessions = await Promise.all(Array.from({ length: opts.c }, async () => {
      const cl = await connect();
      await cl.listTools();
      await call(cl);
      return cl;
    }));
    process.stdout.write(JSON.stringify({ connected: opts.c }) + "\n");
    if (opts.hold) {
      await new Promise((res) => readline.createInterface({ input: process.stdin }).once("line", res));
    }
    const all = [];
    const start = performance.now();
    const stop = start + dur(opts.d);
    await Promise.all(sessions.map(async (cl) => {
      while (performance.now() < stop) {
        if (opts.list) await cl.listTools();
        all.push(await call(cl));
      }
    }));
    print(summary(all, performance.now() - start, opts.c));
    await Promise.all(sessions.map((cl) => cl.close()));
  }
  process.exit(0);
} catch (err) {
  fail(err);
}
