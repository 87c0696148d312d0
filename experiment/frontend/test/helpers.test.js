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

test("the timed answer's parameters and data fields are declared once, with each plugin's defaults", () => {
  const window = loadPage();
  const { ParameterType } = window.jsPsychModule;
  const helpers = window.TracktalePluginHelpers;
  // Objects of the page's realm: compared as JSON (deepEqual would compare their prototypes).
  const json = (value) => JSON.parse(JSON.stringify(value));
  const expected = [
    [window.jsPsychTimedTextResponse, 15000, 40],
    [window.jsPsychArithmeticProcedure, 240000, 40],
    [window.jsPsychBoxesGrid, 90000, undefined],
  ];
  for (const [plugin, duration, maxLength] of expected) {
    const { parameters, data } = plugin.info;
    const shared = helpers.timedResponseParameters(ParameterType, { duration, maxLength });
    for (const [name, spec] of Object.entries(shared)) {
      assert.deepEqual(json(parameters[name]), json(spec), `${plugin.info.name}: ${name}`);
    }
    assert.equal(parameters.trial_duration.default, duration);
    assert.equal(parameters.max_length?.default, maxLength);
    assert.equal(parameters.show_timer.type, ParameterType.BOOL);
    for (const [name, spec] of Object.entries(helpers.timedResponseData(ParameterType))) {
      assert.deepEqual(json(data[name]), json(spec), `${plugin.info.name}: ${name}`);
    }
    assert.equal(data.rt.type, ParameterType.FLOAT);
  }
});

test("a response screen holds the time bar (when shown) and the prompt as text", () => {
  const window = loadPage();
  const { responseScreen, submitButton, hintLine } = window.TracktalePluginHelpers;
  const trial = { show_timer: true, trial_duration: 900, prompt: "<b>Answer</b>" };
  const root = responseScreen("tt-kind", trial);
  assert.equal(root.className, "tt-screen tt-kind");
  assert.deepEqual(
    [...root.children].map((child) => child.className),
    ["tt-timer", "tt-prompt"],
  );
  assert.equal(root.lastElementChild.textContent, "<b>Answer</b>");
  assert.equal(responseScreen("tt-kind", { ...trial, show_timer: false }).children.length, 1);
  const button = submitButton("Send");
  assert.equal(
    `${button.type} ${button.className} ${button.textContent}`,
    "button jspsych-btn tt-submit Send",
  );
  const hint = hintLine();
  assert.equal(`${hint.className} ${hint.getAttribute("role")}`, "tt-hint status");
});

test("answer data: a null response is a timeout without a time", () => {
  const window = loadPage();
  const { answerData } = window.TracktalePluginHelpers;
  const start = window.performance.now() - 500;
  const given = answerData("box", start);
  assert.equal(given.response, "box");
  assert.equal(given.timed_out, false);
  assert.ok(given.rt >= 500 && given.rt < 5000, String(given.rt));
  const timeout = JSON.stringify(answerData(null, start));
  assert.equal(timeout, '{"response":null,"rt":null,"timed_out":true}');
});

test("typed answers are trimmed as the server strips them, lone surrogates replaced", () => {
  const window = loadPage();
  const { cleanedAnswer } = window.TracktalePluginHelpers;
  assert.equal(cleanedAnswer(" \u0085\u001c box \t\u001f"), "box");
  assert.equal(cleanedAnswer("\u0085 \u001d"), "");
  assert.equal(cleanedAnswer("a\udfffb"), "a\ufffdb");
});
