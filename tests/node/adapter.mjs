// A Tavily adapter as a Node team would write it: fetch with an AbortController deadline (cancelled twice:
// the second abort must send nothing), p-retry for 429/5xx (Retry-After honoured in onFailedAttempt, then
// p-retry's own delay: MIN_TIMEOUT ms, randomize), an opossum circuit breaker around every attempt. Driven by
// tests/test_node_clients.py:
//
//   node adapter.mjs BASE_URL PHASE MODE OUT.json
//
// PHASE: rate_limit (RATE_LIMIT_CALLS concurrent searches, 16 unless set), timeout (one search), partial (the gs-005 extract), storm (4
// searches into 5xx). MODE: good, nojitter (a fixed FIXED_TIMEOUT ms after Retry-After), nobreaker, noabort. Writes the call records to OUT.json, prints
// "done", and exits when nothing is pending (a request left un-aborted keeps the process alive).
import { writeFileSync } from "node:fs";
import pRetry, { AbortError } from "p-retry";
import CircuitBreaker from "opossum";

const [baseUrl, phase, mode, out] = process.argv.slice(2);
const QUERY = "registro sanitario COFEPRIS Laboratorios Sierra Madre";
// Far above what a busy machine adds to a 429 on loopback (at 300 ms, a load of 9 made answered calls time out);
// DEADLINE_MS shorter where no call is answered (the timeout phase: its one search is held).
const DEADLINE_MS = Number(process.env.DEADLINE_MS || 1500);
let ids = 0;

class ProviderError extends Error {
  constructor(status, requestId, retryAfter) {
    super(`HTTP ${status}`);
    this.status = status;
    this.requestId = requestId;
    this.retryAfter = retryAfter;          // seconds, or NaN
    this.retryable = status === 429 || status >= 500;
  }
}

async function once(path, body, callId, record) {
  const ctrl = new AbortController();
  const timer = setTimeout(() => { if (mode !== "noabort") { ctrl.abort(); ctrl.abort(); } }, DEADLINE_MS);
  const deadline = new Promise((_, reject) => setTimeout(() => reject(new Error("deadline")), DEADLINE_MS));
  const started = performance.now();
  try {
    const response = await Promise.race([fetch(`${baseUrl}${path}`, {
      method: "POST", body: JSON.stringify(body), signal: ctrl.signal,
      headers: { "content-type": "application/json", "x-centinela-call": callId },
    }), deadline]);
    record.latency_ms = Math.round(performance.now() - started);
    record.request_id = response.headers.get("x-centinela-request-id");
    const text = await response.text();
    if (response.status >= 400) {
      throw new ProviderError(response.status, record.request_id, Number(response.headers.get("retry-after")));
    }
    record.status = "ok";
    return JSON.parse(text);
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    Object.assign(record, { status: "timeout", error_class: "timeout", retryable: false, answered: false });
    throw new AbortError("timed out");       // never retried: an aborted call sends nothing more
  } finally {
    clearTimeout(timer);
  }
}

const breaker = new CircuitBreaker((fn) => fn(), {
  timeout: false, errorThresholdPercentage: 50, volumeThreshold: 5, resetTimeout: 60000,
  errorFilter: (err) => err instanceof ProviderError && err.status === 429,   // a rate limit is not ill health
});

async function call(op, path, body) {
  const callId = `node-${phase}-${++ids}`;     // unique within the serve log, across processes
  const records = [];
  let result = null;
  try {
    result = await pRetry(async (attempt) => {
      const record = { op, at: new Date().toISOString(), call_id: callId, attempt };
      records.push(record);
      const attemptOnce = () => once(path, body, callId, record);
      try {
        return mode === "nobreaker" ? await attemptOnce() : await breaker.fire(attemptOnce);
      } catch (err) {
        if (err.code === "EOPENBREAKER") {
          Object.assign(record, { status: "error", error_class: "circuit_open", retryable: false, sent: false });
          throw new AbortError("circuit open");
        }
        if (err instanceof ProviderError) {
          Object.assign(record, err.status === 429
            ? { status: "rate_limited", error_class: "rate_limit", retryable: true }
            : err.status >= 500 ? { status: "server_error", error_class: "server", retryable: true }
            : { status: "error", error_class: "client", retryable: false });
          if (!err.retryable) throw new AbortError(err.message);
        }
        throw err;
      }
    }, {
      // Retry-After first (awaited before p-retry schedules its own delay), so the jitter adds to it
      onFailedAttempt: async (err) => {
        if (err instanceof ProviderError && err.retryAfter > 0) await new Promise((r) => setTimeout(r, err.retryAfter * 1000));
      },
      ...(mode === "nojitter" ? { retries: 3, minTimeout: Number(process.env.FIXED_TIMEOUT || 250), factor: 1, randomize: false }
                              : { retries: 3, minTimeout: Number(process.env.MIN_TIMEOUT || 50), factor: 2, randomize: true }),
    });
  } catch {
    // the call failed: its records say how
  }
  return { records, result };
}

// Warm up first: a fresh process compiles fetch (undici) on its first use, which on a loaded machine holds the
// event loop long enough for every backoff timer set meanwhile to fire together (a control request: the checks
// ignore it).
await (await fetch(`${baseUrl}/_centinela/stats`)).text();

const records = [];
if (phase === "rate_limit") {
  const n = Number(process.env.RATE_LIMIT_CALLS || 16);
  for (const c of await Promise.all(Array.from({ length: n }, () => call("search", "/search", { query: QUERY })))) {
    records.push(...c.records);
  }
} else if (phase === "timeout" || phase === "storm") {
  for (let i = 0; i < (phase === "storm" ? 4 : 1); i++) records.push(...(await call("search", "/search", { query: QUERY })).records);
} else if (phase === "partial") {
  const urls = JSON.parse(process.env.PARTIAL_URLS);
  const { records: rs, result } = await call("extract", "/extract", { urls });
  if (result) {
    const returned = new Set(result.results.map((r) => r.url));
    const missing = urls.filter((u) => !returned.has(u));
    Object.assign(rs[rs.length - 1], { requested_urls: urls.length, returned_urls: urls.length - missing.length,
                                       partial: missing.length > 0, missing });
  }
  records.push(...rs);
}
writeFileSync(out, JSON.stringify(records));
console.log("done");
