/**
 * A persistent outbox: writes wait in localStorage until the server acknowledges them.
 *
 * Every entry is stored before it is sent, sent in order, and removed only when the server
 * answers 2xx (stored) or 409 with `reason: "already_recorded"` (stored already, from this tab
 * or another). Network errors, 5xx and 429 are retried with exponential back-off and jitter
 * (at least the server's `Retry-After`), for as long as the page is open, and again after a
 * reload. 401 means the session moved to another browser, and any other 409 that the study no
 * longer takes the answer as it stands (closed by the researcher, stimuli changed): sending
 * stops and the entries stay, in localStorage too, for a reload once the researcher has
 * sorted it out (`onStop(reason, message, body)` is called: the refusal's reason, the
 * server's message and its whole JSON answer). Each trial answer is sent with
 * `queued_ms`, how long it has waited here, so that the server does not count time spent
 * offline as reading or answering. Other 4xx answers mean the body itself is refused: the entry
 * moves to a "rejected" list (kept in localStorage for inspection) so that it cannot block the
 * entries after it, and `onReject(entry, message, body, status)` is called with the server's
 * message, its whole JSON answer (its `reason` is what the page words in the participant's
 * language) and the HTTP status. The server takes answers in
 * order, so the trial answers queued behind a refused one would all be refused in turn: they
 * are withheld (moved to the same list) instead of sent, and the page has the trials answered
 * again (see study.js). `add()` returns a promise of the server's reply to that entry (its
 * JSON on 2xx, null otherwise), for screens that show what the server made of an answer.
 */
/* exported TracktaleOutbox */
var TracktaleOutbox = (function () {
  "use strict";

  class MemoryStore {
    constructor() { this.data = {}; }
    get(key) { return key in this.data ? JSON.parse(this.data[key]) : null; }
    set(key, value) { this.data[key] = JSON.stringify(value); }
    remove(key) { delete this.data[key]; }
  }

  /** localStorage under a prefix, falling back to memory where storage is unavailable. */
  class Store {
    constructor(prefix) {
      this.prefix = prefix;
      this.persistent = true;
      try {
        const probe = prefix + "/probe";
        window.localStorage.setItem(probe, "1");
        window.localStorage.removeItem(probe);
        this.backend = window.localStorage;
      } catch (error) {
        this.persistent = false;
        this.memory = new MemoryStore();
      }
    }
    get(key) {
      if (!this.persistent) return this.memory.get(key);
      const raw = this.backend.getItem(this.prefix + "/" + key);
      try {
        return raw === null ? null : JSON.parse(raw);
      } catch (error) {
        return null;
      }
    }
    set(key, value) {
      if (!this.persistent) return this.memory.set(key, value);
      try {
        this.backend.setItem(this.prefix + "/" + key, JSON.stringify(value));
      } catch (error) {
        // Storage full or revoked: keep going in memory rather than losing the write.
        this.persistent = false;
        this.memory = new MemoryStore();
        this.memory.set(key, value);
      }
    }
    remove(key) {
      if (!this.persistent) return this.memory.remove(key);
      this.backend.removeItem(this.prefix + "/" + key);
    }
  }

  function randomId() {
    if (window.crypto && typeof window.crypto.randomUUID === "function") {
      return window.crypto.randomUUID();
    }
    const bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const MAX_QUEUED_MS = 30 * 86400000; // the most the server takes (30 days)

  async function readJson(response) {
    try {
      return await response.json();
    } catch (error) {
      return null; // an empty or non-JSON answer
    }
  }

  class Outbox {
    /**
     * @param {Store} store Where entries persist.
     * @param {string} token The session token sent with every write.
     * @param {object} options `onChange(state)` is called when the queue changes;
     *   `maxDelayMs` caps the back-off.
     */
    constructor(store, token, options = {}) {
      this.store = store;
      this.token = token;
      this.onChange = options.onChange || (() => {});
      this.onStop = options.onStop || (() => {});
      this.onReject = options.onReject || (() => {});
      this.maxDelayMs = options.maxDelayMs || 30000;
      this.replies = new Map(); // entry id -> resolve(reply), for entries added on this page
      this.entries = store.get("outbox") || [];
      this.running = false;
      this.stopped = false;
      this.failures = 0;
      this.waiters = [];
    }

    /**
     * Queue a POST of `body` to `url`; `meta` (kind, trial index) is kept for resuming.
     * Resolves with the server's JSON reply once acknowledged (null if refused or already
     * stored), whenever that is; never rejects.
     */
    add(url, body, meta = {}) {
      const entry = { id: randomId(), url: url, body: body, meta: meta, addedAt: Date.now() };
      const reply = new Promise((resolve) => this.replies.set(entry.id, resolve));
      this.entries.push(entry);
      this.persist();
      this.kick();
      return reply;
    }

    settle(entry, data) {
      const resolve = this.replies.get(entry.id);
      if (resolve) {
        this.replies.delete(entry.id);
        resolve(data);
      }
    }

    /** Trial indices still waiting to be acknowledged. */
    pendingTrialIndices() {
      return this.entries.filter((e) => e.meta.kind === "trial").map((e) => e.meta.index);
    }

    hasPending(kind) {
      return this.entries.some((e) => e.meta.kind === kind);
    }

    get size() {
      return this.entries.length;
    }

    persist() {
      this.store.set("outbox", this.entries);
      this.onChange(this.state());
    }

    state() {
      return { pending: this.entries.length, failures: this.failures, stopped: this.stopped };
    }

    kick() {
      if (!this.running && !this.stopped) this.run();
    }

    /** Resolves when every entry is acknowledged (rejects if sending stopped). */
    drain() {
      if (this.entries.length === 0) return Promise.resolve();
      if (this.stopped) return Promise.reject(new Error("session moved to another browser"));
      const waiting = new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
      this.kick();
      return waiting;
    }

    async run() {
      this.running = true;
      while (this.entries.length > 0 && !this.stopped) {
        const entry = this.entries[0];
        const outcome = await this.send(entry);
        if (outcome.kind === "ack" || outcome.kind === "reject") {
          this.entries.shift();
          const withheld = outcome.kind === "reject" ? this.reject(entry, outcome.message) : [];
          this.failures = 0;
          this.persist();
          this.settle(entry, outcome.data || null);
          withheld.forEach((later) => this.settle(later, null));
          if (outcome.kind === "reject") {
            this.onReject(entry, outcome.message, outcome.body || {}, outcome.status);
          }
        } else if (outcome.kind === "stop") {
          this.stopped = true;
          this.onChange(this.state());
          this.onStop(outcome.reason, outcome.message, outcome.body);
        } else {
          this.failures += 1;
          this.onChange(this.state());
          const base = Math.min(this.maxDelayMs, 500 * 2 ** Math.min(this.failures - 1, 10));
          const delay = Math.max(outcome.retryAfterMs || 0, base * (0.5 + Math.random()));
          await sleep(delay);
        }
      }
      this.running = false;
      const waiters = this.waiters.splice(0);
      for (const waiter of waiters) {
        if (this.entries.length === 0) waiter.resolve();
        else waiter.reject(new Error("session moved to another browser"));
      }
    }

    /** Keep a refused entry aside (and the trial answers behind it); returns those withheld. */
    reject(entry, message) {
      const rejected = this.store.get("rejected") || [];
      rejected.push({ entry: entry, error: message });
      console.error("tracktale: the server refused a write:", message, entry);
      let withheld = [];
      if (entry.meta.kind === "trial") {
        withheld = this.entries.filter((e) => e.meta.kind === "trial");
        this.entries = this.entries.filter((e) => e.meta.kind !== "trial");
        withheld.forEach((later) =>
          rejected.push({ entry: later, error: "withheld: an earlier answer was refused" })
        );
      }
      this.store.set("rejected", rejected);
      return withheld;
    }

    /** The body as sent now: a trial answer says how long it has waited in this outbox. */
    bodyToSend(entry) {
      if (entry.meta.kind !== "trial" || typeof entry.addedAt !== "number") return entry.body;
      const waited = Math.min(MAX_QUEUED_MS, Math.max(0, Date.now() - entry.addedAt));
      return Object.assign({}, entry.body, { queued_ms: waited });
    }

    async send(entry) {
      let response;
      try {
        response = await fetch(entry.url, {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-Session-Token": this.token },
          body: JSON.stringify(this.bodyToSend(entry)),
          cache: "no-store",
          credentials: "same-origin",
        });
      } catch (error) {
        return { kind: "retry" };
      }
      const status = response.status;
      if (status >= 200 && status < 300) return { kind: "ack", data: await readJson(response) };
      if (status === 409) {
        const data = (await readJson(response)) || {};
        if (data.reason === "already_recorded") return { kind: "ack", data: null };
        return {
          kind: "stop",
          reason: data.reason || "refused",
          message: data.error || "HTTP 409",
          body: data,
        };
      }
      if (status === 401) return { kind: "stop", reason: (await readJson(response) || {}).reason };
      if (status === 429 || status === 503) {
        const seconds = Number(response.headers.get("Retry-After") || "1");
        return { kind: "retry", retryAfterMs: seconds * 1000 };
      }
      if (status >= 400 && status < 500 && status !== 408) {
        const body = (await readJson(response)) || {};
        return { kind: "reject", message: body.error || "HTTP " + status, body: body, status: status };
      }
      return { kind: "retry" };
    }
  }

  return { Outbox: Outbox, Store: Store, randomId: randomId, sleep: sleep, readJson: readJson };
})();
