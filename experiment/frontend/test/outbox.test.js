// The persistent outbox (static/outbox.js) against a scripted server: which answers it treats
// as acknowledged, which it keeps, and what it tells the page (issue 30).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { JSDOM } from "jsdom";
import { until } from "./page.js";

/** A page with outbox.js, whose fetch answers with `replies` in turn (the last one repeats). */
function pageWith(replies) {
  const dom = new JSDOM("<!doctype html><html><body></body></html>", {
    runScripts: "outside-only",
    url: "http://localhost/",
  });
  const window = dom.window;
  const sent = [];
  window.fetch = async (url, options) => {
    sent.push({ url: url, body: JSON.parse(options.body), at: Date.now() });
    const [status, body, headers] = replies[Math.min(sent.length - 1, replies.length - 1)];
    return {
      status: status,
      headers: { get: (name) => (headers || {})[name] || null },
      json: async () => body,
    };
  };
  window.eval(readFileSync(new URL("../../static/outbox.js", import.meta.url), "utf8"));
  return { window, sent };
}

function outbox(window, events) {
  const { Outbox, Store } = window.TracktaleOutbox;
  return new Outbox(new Store("test"), "token", {
    maxDelayMs: 50,
    onStop: (reason, message) => events.push(["stop", reason, message]),
    onReject: (entry, message) => events.push(["reject", message]),
  });
}

test("a 409 that says the answer is already recorded is an acknowledgement", async () => {
  const { window } = pageWith([[409, { error: "trial 3 is already recorded", reason: "already_recorded" }]]);
  const events = [];
  const box = outbox(window, events);
  box.add("/api/trials", { trial_index: 3 }, { kind: "trial", index: 3 });
  await box.drain();
  assert.equal(box.size, 0);
  assert.deepEqual(events, []);
});

test("any other 409 keeps the answer, stops sending and tells the page why", async () => {
  const message = "the study's stimuli changed since this session started";
  const { window, sent } = pageWith([[409, { error: message, reason: "stimuli_changed" }]]);
  const events = [];
  const box = outbox(window, events);
  box.add("/api/trials", { trial_index: 0 }, { kind: "trial", index: 0 });
  box.add("/api/trials", { trial_index: 1 }, { kind: "trial", index: 1 });
  await until(() => events.length > 0, "the outbox stopping");
  assert.deepEqual(events, [["stop", "stimuli_changed", message]]);
  assert.equal(sent.length, 1); // nothing after it is sent
  assert.equal(box.size, 2); // both kept, in localStorage too, for a later reload
  const stored = JSON.parse(window.localStorage.getItem("test/outbox"));
  assert.deepEqual(stored.map((entry) => entry.body.trial_index), [0, 1]);
  await assert.rejects(box.drain());
});

test("a 503 is retried after its Retry-After, and the answer says how long it waited", async () => {
  const { window, sent } = pageWith([
    [503, { error: "the study database cannot be written just now" }, { "Retry-After": "1" }],
    [201, { ok: true, outcome: "stored" }],
  ]);
  const box = outbox(window, []);
  const reply = box.add("/api/trials", { trial_index: 0 }, { kind: "trial", index: 0 });
  box.add("/api/survey", { age: 30 }, { kind: "survey" });
  assert.deepEqual(await reply, { ok: true, outcome: "stored" });
  await box.drain();
  assert.ok(sent[1].at - sent[0].at >= 1000, "retried before Retry-After");
  assert.ok(sent[0].body.queued_ms >= 0 && sent[0].body.queued_ms < 500);
  assert.ok(sent[1].body.queued_ms >= 1000, String(sent[1].body.queued_ms));
  assert.ok(!("queued_ms" in sent[2].body), "only trial answers carry queued_ms");
});
