// A box of bench-fleet: test/support/sim-device.ts's SimDevice (the real protocol: enrolment, signed hello, signed
// batches, the signed catalogue poll) over one shared node:http keep-alive agent, with the two loops a box runs
// against its central (docs/sync.md "Talking to the central"): the sender (a hello, then every heartbeat, and its
// backlog in batches) and the catalogue's long poll, each retrying with the box's own backoff and Retry-After.
import http from 'node:http';

/** One agent for the whole fleet: a socket per long poll, more for hellos and batches, kept alive. */
export const fleetAgent = (boxes) =>
  new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, maxFreeSockets: boxes * 2 });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * What the boxes count, per phase: answers by route and status (`conn` for no answer), and hello round trips.
 * `since` is the time the current phase began: only requests sent from then on are counted.
 */
export function fleetStats() {
  return {
    since: 0,
    answers: {},
    helloMs: [],
    /** Why: each refusal's message, counted. */
    why: {},
    count(route, status, sentAt, message) {
      if (sentAt < this.since) return;
      this.answers[route] ??= {};
      this.answers[route][status] = (this.answers[route][status] ?? 0) + 1;
      const why = `${route} ${status}: ${message}`;
      if (message) this.why[why] = (this.why[why] ?? 0) + 1;
    },
    reset(now) {
      this.since = now;
      this.answers = {};
      this.why = {};
      this.helloMs = [];
    },
  };
}

/**
 * The FleetBox class over `lib` (scripts/lib/fleet-lib.mjs): SimDevice with its requests on `agent`, and `sync`
 * the box's defaults (resolveConfig({}).sync).
 */
export function fleetBoxClass(lib, agent, sync, stats) {
  const { SimDevice, retryDelay, CentralError } = lib;
  const loopOptions = { retryMinMs: sync.retryMinMs, retryMaxMs: sync.retryMaxMs };
  const heartbeatMs = sync.heartbeatSeconds * 1000;
  const timeoutMs = sync.requestTimeoutSeconds * 1000;
  const waitS = sync.catalogueWaitSeconds;
  const helloAfterBusy = process.env.HELLO_AFTER_BUSY !== '0';

  return class FleetBox extends SimDevice {
    acked = 0;
    rev = 0;
    stopped = false;
    /** When the box's backlog was last all acknowledged, and when its poll was last held by a central. */
    ackedAt = 0;
    pollHeldAt = 0;
    /** The first time a poll was held from `heldMark` on (0: none yet). */
    firstHeldAt = 0;
    heldMark = Number.POSITIVE_INFINITY;
    /** Called with (box, rev, at) when a poll brings a newer rev. */
    onRev = () => undefined;
    #wake;
    #woken = false;
    #route = 'other';

    /** Where the box is, for a report of those that did not catch up. */
    state() {
      const { acked, lastSeq, rev, ackedAt, firstHeldAt, lastError } = this;
      return { deviceId: this.deviceId, acked, lastSeq, rev, ackedAt, firstHeldAt, lastError };
    }

    /** SimDevice's one exchange, on the fleet's agent, with the box's request timeout. */
    request(method, path, body, headers) {
      const sentAt = performance.now();
      const route = this.#route;
      const ms = route === 'poll' ? timeoutMs + waitS * 1000 : timeoutMs;
      return new Promise((resolve, reject) => {
        const h = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
        const req = http.request(
          `${this.baseUrl}${path}`,
          { method, agent, headers: h, signal: AbortSignal.timeout(ms) },
          (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('error', (err) => {
              stats.count(route, 'conn', sentAt, err.code ?? err.name);
              reject(new CentralError(0, `central stopped answering (${err.message})`));
            });
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              let parsed = text;
              try {
                parsed = JSON.parse(text);
              } catch {
                // not JSON: kept as text
              }
              stats.count(
                route,
                res.statusCode,
                sentAt,
                res.statusCode >= 300 && (parsed?.message ?? text.slice(0, 80)),
              );
              resolve({ status: res.statusCode, body: parsed, headers: { get: (n) => res.headers[n.toLowerCase()] } });
            });
          },
        );
        req.on('error', (err) => {
          stats.count(route, err.name === 'AbortError' ? 'timeout' : 'conn', sentAt, err.code ?? err.name);
          reject(new CentralError(0, `central unreachable (${err.code ?? err.name})`));
        });
        req.end(body);
      });
    }

    /** The answer as the box's client takes it: a 2xx body, else a CentralError with Retry-After. */
    #check(a) {
      if (a.status >= 200 && a.status < 300) return a.body;
      const ra = a.headers.get('retry-after');
      const retry = typeof ra === 'string' && /^\d{1,6}$/.test(ra) ? Number(ra) : undefined;
      throw new CentralError(a.status, `central answered ${a.status}`, a.body, retry);
    }

    async #hello() {
      this.#route = 'hello';
      this.clockMs = Date.now();
      const t0 = performance.now();
      const answer = this.#check(await this.hello());
      if (t0 >= stats.since) stats.helloMs.push(performance.now() - t0);
      // Where the central is: what it holds is acknowledged (a lost acknowledgement, docs/sync.md "On the box").
      this.acked = Math.max(this.acked, answer.head.seq);
    }

    /** One batch of the backlog (at most 500 events); false when there is nothing to send. */
    async #sendBatch() {
      if (this.acked >= this.lastSeq) return false;
      this.#route = 'batch';
      this.clockMs = Date.now();
      const to = Math.min(this.lastSeq, this.acked + 500);
      const a = await this.send(this.acked + 1, to);
      if (a.status === 409 && a.body?.expectedSeq) {
        this.acked = a.body.expectedSeq - 1;
        return true;
      }
      this.acked = this.#check(a).ackedSeq;
      if (this.acked >= this.lastSeq) this.ackedAt = performance.now();
      return true;
    }

    /** New events (orders) in the outbox; the sender sends them within flushDelayMs, as the box's sender. */
    addOrders(n) {
      for (let i = 0; i < n; i++) this.order();
      if (this.#wake) this.#wake(sync.flushDelayMs);
      else this.#woken = true;
    }

    /** The sender's loop until `until` (performance.now() ms): hello every heartbeat, batches while any. */
    async runSender(until, firstHeartbeatMs = heartbeatMs) {
      let attempt = 0;
      let helloDone = false;
      let nextHello = 0;
      for (let i = 0; i < 100_000 && !this.stopped && performance.now() < until; i++) {
        let next;
        this.#woken = false;
        try {
          if (!helloDone || performance.now() >= nextHello) {
            await this.#hello();
            nextHello = performance.now() + (helloDone ? heartbeatMs : firstHeartbeatMs);
            helloDone = true;
          }
          next = (await this.#sendBatch()) ? 0 : nextHello - performance.now();
          attempt = 0;
        } catch (err) {
          if (!(err instanceof CentralError)) throw err;
          this.lastError = `${performance.now().toFixed(0)} ${err.message}`;
          // The box's sender says hello again after any failure; HELLO_AFTER_BUSY=0 tries a sender that keeps
          // its hello after a 429, the central's "busy" (docs/performance.md "A thousand boxes").
          if (err.status !== 429 || helloAfterBusy) helloDone = false;
          await sleep(retryDelay(err, ++attempt, loopOptions));
          continue;
        }
        if (this.#woken) next = Math.min(next, sync.flushDelayMs);
        await this.#sleepWakeable(Math.max(0, Math.min(next, until - performance.now())));
      }
    }

    #sleepWakeable(ms) {
      return new Promise((resolve) => {
        let timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.#wake = (soonMs) => {
          clearTimeout(timer);
          timer = setTimeout(done, soonMs);
        };
      }).finally(() => {
        this.#wake = undefined;
      });
    }

    /** The catalogue's long poll until `until`: one in flight, the next at once after an answer. */
    async runPoller(until) {
      let attempt = 0;
      for (let i = 0; i < 100_000 && !this.stopped && performance.now() < until; i++) {
        try {
          this.#route = 'poll';
          const sentAt = performance.now();
          const answer = this.#check(await this.catalogue(this.rev, waitS));
          const at = performance.now();
          // An answer with nothing new came when the central's wait ran out: it held the poll from waitS before.
          const idle = answer.rev === this.rev && answer.items.length === 0 && at - sentAt >= waitS * 1000;
          this.pollHeldAt = idle ? at - waitS * 1000 : at;
          if (this.firstHeldAt === 0 && this.pollHeldAt >= this.heldMark) this.firstHeldAt = this.pollHeldAt;
          if (answer.rev > this.rev) {
            const before = this.rev;
            this.rev = answer.rev;
            if (before > 0) this.onRev(this, answer.rev, at);
          }
          attempt = 0;
        } catch (err) {
          if (!(err instanceof CentralError)) throw err;
          await sleep(retryDelay(err, ++attempt, loopOptions));
        }
      }
    }
  };
}
