// The helpers every plugin shares (static/plugin-helpers.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadPage } from "./page.js";

test("the timer bar is a track with a fill animated over the trial's duration", () => {
  const window = loadPage();
  const bar = window.TracktalePluginHelpers.timerBar(1500);
  assert.equal(bar.className, "tt-timer");
  assert.equal(bar.children.length, 1);
  assert.equal(bar.firstElementChild.className, "tt-timer-fill");
  assert.equal(bar.firstElementChild.style.animationDuration, "1500ms");
});

test("finishOnce runs its function for the first call only, with that call's arguments", () => {
  const window = loadPage();
  const calls = [];
  const finish = window.TracktalePluginHelpers.finishOnce((...args) => calls.push(args));
  finish("button", 1);
  finish("key", 2);
  finish(null);
  assert.deepEqual(calls, [["button", 1]]);
});

test("guards are independent: one trial's finish does not block the next trial's", () => {
  const window = loadPage();
  const seen = [];
  const first = window.TracktalePluginHelpers.finishOnce(() => seen.push("first"));
  const second = window.TracktalePluginHelpers.finishOnce(() => seen.push("second"));
  first();
  second();
  first();
  assert.deepEqual(seen, ["first", "second"]);
});

test("elapsedMs counts from a performance.now() reading, to a tenth of a millisecond", () => {
  const window = loadPage();
  const start = window.performance.now() - 1234.5678;
  const elapsed = window.TracktalePluginHelpers.elapsedMs(start);
  assert.ok(elapsed >= 1234.5 && elapsed < 1300, String(elapsed));
  assert.equal(Math.round(elapsed * 10), elapsed * 10);
});
