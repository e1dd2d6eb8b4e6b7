// Drives node-redlock (redlock@5.0.0-beta.2 with ioredis) through the same
// workloads as build/bin/redlock-bench, with the same flags, and prints the
// same one JSON line of figures at the end, so scripts/bench-compare.sh can
// put the two side by side.
//
//   node harness.mjs --nodes H:P[,H:P...] --workload latency|throughput|contention
//                    --duration DUR --concurrency C --ttl DUR --warmup DUR --hold DUR
//                    [--key-prefix P] [--hold-log FILE]
//
// A DUR has a unit, as in redlock-bench: 500ms, 20s, 1.5m, 1h (a bare number
// other than 0 is refused).
//
// The packages are looked up in $NODE_REDLOCK_DIR (a directory where
// `npm install redlock@5.0.0-beta.2 ioredis` was run), else from this file's
// directory upwards.
//
// Contention uses node-redlock's own retry loop; its settings come from
// $NODE_REDLOCK_RETRY_DELAY_MS (default 10) and $NODE_REDLOCK_RETRY_JITTER_MS
// (default 10): each retry waits delay + uniform(-jitter, +jitter) ms, so
// 0 to 20 ms, far shorter than node-redlock's default 200 +- 100 ms.
//
// --key-prefix P names every key P... (default node-redlock-bench:<pid>:), so
// that processes given the same P contend for one resource. --hold-log FILE
// (contention) writes "window <measured from> <until>" and then one line per
// hold: wait start, acquired, release start, in ns of process.hrtime (the
// system's monotonic clock, the same in every process), as redlock-bench does.

import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import process from "node:process";

const require = createRequire(
  process.env.NODE_REDLOCK_DIR
    ? path.join(path.resolve(process.env.NODE_REDLOCK_DIR), "package.json")
    : import.meta.url,
);
const Redlock = require("redlock").default;
const Redis = require("ioredis");

// ---- flags, as redlock-bench takes them ------------------------------------

function usage(problem) {
  process.stderr.write(
    `node-redlock harness: ${problem}\n` +
      "usage: harness.mjs --nodes H:P[,H:P...] [--workload latency|throughput|contention]\n" +
      "       [--duration DUR] [--concurrency C] [--ttl DUR] [--warmup DUR] [--hold DUR]\n" +
      "       [--key-prefix P] [--hold-log FILE]\n",
  );
  process.exit(2);
}

function count(flag, text) {
  if (!/^[0-9]+$/.test(text)) usage(`${flag} needs a non-negative whole number, not '${text}'`);
  return Number(text);
}

// Milliseconds, from "<number><unit>" (unit ms, s, m or h) or "0", as
// cli/args/duration.cpp reads it for redlock-bench.
function duration(flag, text) {
  if (text === "0") return 0;
  const match = /^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ms|s|m|h)$/.exec(text);
  if (!match) {
    const bare = /^[0-9.]+$/.test(text);
    const why = bare
      ? "needs a unit: ms, s, m or h (e.g. 30s)"
      : "is not a duration (e.g. 500ms, 30s, 5m, 1h)";
    usage(`${flag}: '${text}' ${why}`);
  }
  const unitMs = { ms: 1, s: 1000, m: 60000, h: 3600000 }[match[2]];
  return Math.ceil(Number(match[1]) * unitMs);
}

function parseNodes(text) {
  const nodes = [];
  for (const part of text.split(",")) {
    const colon = part.lastIndexOf(":");
    const host = colon > 0 ? part.slice(0, colon) : "";
    const port = colon > 0 ? Number(part.slice(colon + 1)) : NaN;
    if (!host || !Number.isInteger(port) || port < 1 || port > 65535) {
      usage(`bad node '${part}' (want host:port)`);
    }
    nodes.push({ host, port });
  }
  return nodes;
}

function parse(argv) {
  // duration and warmup in seconds, ttl and hold in milliseconds
  const o = {
    nodes: [],
    workload: "latency",
    duration: 10,
    concurrency: 1,
    ttl: 10000,
    warmup: 1,
    hold: 1,
    keyPrefix: "",
    holdLog: "",
  };
  let concurrencyGiven = false;
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    if (i + 1 >= argv.length) usage(`${flag} needs a value`);
    const value = argv[i + 1];
    switch (flag) {
      case "--nodes":
        o.nodes = parseNodes(value);
        break;
      case "--workload":
        if (!["latency", "throughput", "contention"].includes(value)) {
          usage(`unknown workload '${value}'`);
        }
        o.workload = value;
        break;
      case "--duration":
        o.duration = duration(flag, value) / 1000;
        break;
      case "--concurrency":
        o.concurrency = count(flag, value);
        concurrencyGiven = true;
        break;
      case "--ttl":
        o.ttl = duration(flag, value);
        break;
      case "--warmup":
        o.warmup = duration(flag, value) / 1000;
        break;
      case "--hold":
        o.hold = duration(flag, value);
        break;
      case "--key-prefix":
        o.keyPrefix = value;
        break;
      case "--hold-log":
        o.holdLog = value;
        break;
      default:
        usage(`unknown flag '${flag}'`);
    }
  }
  if (o.nodes.length === 0) usage("--nodes is required");
  if (!(o.duration > 0)) usage("--duration must be positive");
  if (!concurrencyGiven) {
    o.concurrency = o.workload === "throughput" ? 64 : o.workload === "contention" ? 8 : 1;
  }
  if (o.workload === "latency") o.concurrency = 1;
  if (o.concurrency === 0) usage("--concurrency must be at least 1");
  return o;
}

// ---- latency samples, summarised as bench/stats.hpp does -----------------------

class Samples {
  constructor() {
    this.values = new Float64Array(1 << 16);
    this.n = 0;
  }

  add(nanoseconds) {
    if (this.n === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.n++] = Number(nanoseconds) / 1e6;
  }

  // Nearest-rank percentile of the sorted values.
  percentile(sorted, p) {
    if (sorted.length === 0) return 0;
    let rank = Math.floor(p * sorted.length + 0.999999);
    rank = Math.min(Math.max(rank, 1), sorted.length);
    return sorted[rank - 1];
  }

  json() {
    const sorted = this.values.subarray(0, this.n).sort();
    let sum = 0;
    for (const v of sorted) sum += v;
    const mean = sorted.length === 0 ? 0 : sum / sorted.length;
    const max = sorted.length === 0 ? 0 : sorted[sorted.length - 1];
    const f = (x) => x.toFixed(4);
    return (
      `{"n":${sorted.length},"mean":${f(mean)},"p50":${f(this.percentile(sorted, 0.5))},` +
      `"p90":${f(this.percentile(sorted, 0.9))},"p99":${f(this.percentile(sorted, 0.99))},` +
      `"max":${f(max)}}`
    );
  }
}

// ---- the run ------------------------------------------------------------------

const opts = parse(process.argv.slice(2));
const now = () => process.hrtime.bigint();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const retryDelay = Number(process.env.NODE_REDLOCK_RETRY_DELAY_MS ?? 10);
const retryJitter = Number(process.env.NODE_REDLOCK_RETRY_JITTER_MS ?? 10);

const r = {
  prefix: opts.keyPrefix || `node-redlock-bench:${process.pid}:`,
  acquire: new Samples(),
  release: new Samples(),
  wait: new Samples(),
  cycles: 0,
  errors: 0,
  firstError: "",
  nextResource: 0,
  holders: 0,
  overlaps: 0,
  holds: [],
};

function failed(error) {
  ++r.errors;
  if (!r.firstError) r.firstError = String(error?.message ?? error);
}

// One ioredis client per node, connected before the clock starts.
let clientErrors = 0;
const clients = opts.nodes.map(({ host, port }) => {
  const client = new Redis({ host, port, lazyConnect: true });
  client.on("error", (error) => {
    if (clientErrors++ === 0) {
      process.stderr.write(`node-redlock harness: ${host}:${port}: ${error.message}\n`);
    }
  });
  return client;
});
try {
  await Promise.all(clients.map((c) => c.connect()));
  await Promise.all(clients.map((c) => c.ping()));
} catch (error) {
  process.stderr.write(`node-redlock harness: cannot reach the nodes: ${error.message}\n`);
  process.exit(1);
}

// Latency and throughput try once (retryCount 0); contention overrides the
// retry settings per call.
const redlock = new Redlock(clients, {
  driftFactor: 0.01,
  retryCount: 0,
  retryDelay,
  retryJitter,
});
const contentionSettings = {
  // About 10 s of attempts at the default delay, like redlock-bench's 10 s wait_timeout.
  retryCount: Math.max(1, Math.ceil(10000 / Math.max(1, retryDelay))),
  retryDelay,
  retryJitter,
};

const start = now();
const measureFrom = start + BigInt(Math.round(opts.warmup * 1e9));
const stopAt = measureFrom + BigInt(Math.round(opts.duration * 1e9));
const measuring = (t) => t >= measureFrom;

// CPU and memory are read when the measured period starts, after warm-up.
let cpuStart = process.cpuUsage();
let rssAfterWarmup = 0;
const warmupTimer = setTimeout(() => {
  cpuStart = process.cpuUsage();
  rssAfterWarmup = Math.round(process.memoryUsage.rss() / 1024);
}, opts.warmup * 1000);

// Acquire then release a fresh resource, again and again.
async function cycleWorker() {
  while (now() < stopAt) {
    const resource = `${r.prefix}r${r.nextResource++}`;
    const t0 = now();
    let lock;
    try {
      lock = await redlock.acquire([resource], opts.ttl);
    } catch (error) {
      failed(error);
      continue;
    }
    const t1 = now();
    try {
      await lock.release();
    } catch (error) {
      failed(error);
    }
    const t2 = now();
    if (measuring(t0)) {
      r.acquire.add(t1 - t0);
      r.release.add(t2 - t1);
      ++r.cycles;
    }
  }
}

// Everyone wants one resource: wait for it (node-redlock's retry loop), hold
// it, release it.
async function contentionWorker() {
  const resource = `${r.prefix}contended`;
  while (now() < stopAt) {
    const t0 = now();
    let lock;
    try {
      lock = await redlock.acquire([resource], opts.ttl, contentionSettings);
    } catch (error) {
      failed(error);
      continue;
    }
    const t1 = now();
    // All workers share one thread, so this counter sees every holder.
    if (r.holders++ > 0) ++r.overlaps;
    await sleep(opts.hold);
    --r.holders;
    const t2 = now();
    if (opts.holdLog) r.holds.push(`${t0} ${t1} ${t2}`);
    try {
      await lock.release();
    } catch (error) {
      failed(error);
    }
    const t3 = now();
    if (measuring(t0)) {
      r.wait.add(t1 - t0);
      r.acquire.add(t1 - t0);
      r.release.add(t3 - t2);
      ++r.cycles;
    }
  }
}

const worker = opts.workload === "contention" ? contentionWorker : cycleWorker;
const workers = [];
for (let i = 0; i < opts.concurrency; ++i) workers.push(worker());
await Promise.all(workers);
clearTimeout(warmupTimer);

const cpu = process.cpuUsage(cpuStart);
const maxRssKb = process.resourceUsage().maxRSS;
const rssEnd = Math.round(process.memoryUsage.rss() / 1024);
for (const c of clients) c.disconnect();
if (opts.holdLog) {
  fs.writeFileSync(opts.holdLog, [`window ${measureFrom} ${stopAt}`, ...r.holds, ""].join("\n"));
}

if (r.firstError) {
  process.stderr.write(`node-redlock harness: ${r.errors} errors, first: ${r.firstError}\n`);
}

const seconds = opts.duration;
const user = cpu.user / 1e6;
const system = cpu.system / 1e6;
let extra = "";
if (opts.workload === "contention") {
  extra =
    `,"acquisitions_per_s":${(r.cycles / seconds).toFixed(1)},"wait_ms":${r.wait.json()},` +
    `"overlap_violations":${r.overlaps}`;
}
process.stdout.write(
  `{"workload":"${opts.workload}","concurrency":${opts.concurrency},` +
    `"duration_s":${seconds.toFixed(1)},"cycles":${r.cycles},` +
    `"cycles_per_s":${(r.cycles / seconds).toFixed(1)},` +
    `"acquire_ms":${r.acquire.json()},"release_ms":${r.release.json()},"errors":${r.errors},` +
    `"client_cpu_s":{"user":${user.toFixed(3)},"system":${system.toFixed(3)}},` +
    `"client_cpu_s_per_1000_cycles":${
      r.cycles === 0 ? "0.0000" : (((user + system) * 1000) / r.cycles).toFixed(4)
    },` +
    `"max_rss_kb":${maxRssKb},"rss_kb_after_warmup":${rssAfterWarmup},"rss_kb_end":${rssEnd}` +
    `${extra}}\n`,
);
process.exitCode = r.errors === 0 || r.cycles > 0 ? 0 : 1;
