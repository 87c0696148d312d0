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

test("the key-press screens declare minimum_ms and show_timer once, with their own defaults", () => {
  const window = loadPage();
  const { ParameterType } = window.jsPsychModule;
  const helpers = window.TracktalePluginHelpers;
  const json = (value) => JSON.parse(JSON.stringify(value));
  for (const [plugin, minimumMs] of [
    [window.jsPsychTimedChoice, 200],
    [window.jsPsychTimedReading, 300],
  ]) {
    const { parameters } = plugin.info;
    const shared = helpers.keyPressParameters(ParameterType, { minimumMs });
    assert.deepEqual(Object.keys(shared), ["minimum_ms", "show_timer"]);
    for (const [name, spec] of Object.entries(shared)) {
      assert.deepEqual(json(parameters[name]), json(spec), `${plugin.info.name}: ${name}`);
    }
    assert.equal(parameters.minimum_ms.default, minimumMs);
  }
  // The choice records the timed answer's fields between its own, in this order.
  assert.deepEqual(Object.keys(window.jsPsychTimedChoice.info.data), [
    "choice",
    "response",
    "rt",
    "timed_out",
    "input",
  ]);
});

/** A stand-in for jsPsych that records what a plugin asks of it, and fires its timers on demand. */
function fakeJsPsych() {
  const calls = [];
  const fake = {
    calls,
    keyCallback: null,
    timeouts: [],
    finishTrial: (data) => calls.push(["finishTrial", data]),
    pluginAPI: {
      getKeyboardResponse: (options) => {
        calls.push(["getKeyboardResponse", { ...options, callback_function: typeof options.callback_function }]);
        fake.keyCallback = options.callback_function;
        return "listener-1";
      },
      cancelKeyboardResponse: (listener) => calls.push(["cancelKeyboardResponse", listener]),
      setTimeout: (fn, ms) => {
        calls.push(["setTimeout", ms]);
        fake.timeouts.push(fn);
      },
    },
  };
  return fake;
}

test("startTimedTrial: a key ends the trial once, its listener cancelled first; the time limit then does nothing", () => {
  const window = loadPage();
  const { startTimedTrial } = window.TracktalePluginHelpers;
  const jsPsych = fakeJsPsych();
  const records = [];
  const before = window.performance.now();
  const finish = startTimedTrial(jsPsych, { trial_duration: 900, minimum_ms: 250 }, {
    record: (start, ...args) => {
      records.push({ start, args });
      return { ended: args };
    },
    keys: ["f", "j"],
    onKey: (info) => [info.key, "key"],
    timeoutArgs: ["timeout"],
  });
  assert.deepEqual(jsPsych.calls, [
    [
      "getKeyboardResponse",
      {
        callback_function: "function",
        valid_responses: ["f", "j"],
        persist: false,
        allow_held_key: false,
        minimum_valid_rt: 250,
      },
    ],
    ["setTimeout", 900],
  ]);
  jsPsych.keyCallback({ key: "j", rt: 300 });
  finish("button"); // a click in the same moment
  jsPsych.timeouts[0](); // and the time limit after it
  assert.deepEqual(jsPsych.calls.slice(2), [
    ["cancelKeyboardResponse", "listener-1"],
    ["finishTrial", { ended: ["j", "key"] }],
  ]);
  assert.equal(records.length, 1);
  assert.ok(records[0].start >= before && records[0].start <= window.performance.now());
});

test("startTimedTrial: without keys no listener; the time limit finishes with null, null by default", () => {
  const window = loadPage();
  const { startTimedTrial } = window.TracktalePluginHelpers;
  const jsPsych = fakeJsPsych();
  startTimedTrial(jsPsych, { trial_duration: 40 }, { record: (start, ...args) => ({ args }) });
  assert.deepEqual(jsPsych.calls, [["setTimeout", 40]]);
  jsPsych.timeouts[0]();
  assert.deepEqual(jsPsych.calls[1], ["finishTrial", { args: [null, null] }]);
});

test("submitTypedAnswer: blank answers are refused with the message, ENTER and the button hand one in", () => {
  const window = loadPage();
  const helpers = window.TracktalePluginHelpers;
  const input = helpers.answerBox("tt-answer", 12);
  assert.deepEqual(
    [input.type, input.id, input.className, input.autocomplete, input.spellcheck, input.maxLength],
    ["text", "tt-answer", "tt-answer", "off", false, 12],
  );
  assert.equal(input.getAttribute("autocapitalize"), "off");
  const button = helpers.submitButton("Submit");
  const message = helpers.hintLine();
  const other = window.document.createElement("input");
  window.document.body.append(input, button, message, other);
  const finished = [];
  helpers.submitTypedAnswer({
    input,
    button,
    message,
    emptyMessage: "Type a word first.",
    finish: (answer, how) => finished.push([answer, how]),
  });
  const enter = () => {
    const event = new window.KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true });
    input.dispatchEvent(event);
    return event.defaultPrevented;
  };
  input.value = " \u0085 ";
  other.focus();
  assert.equal(enter(), true, "ENTER does nothing else in the box");
  assert.equal(message.textContent, "Type a word first.");
  assert.equal(window.document.activeElement, input, "the focus is back in the box");
  input.dispatchEvent(new window.KeyboardEvent("keydown", { key: "a", bubbles: true }));
  input.value = " box ";
  enter();
  button.click();
  assert.deepEqual(finished, [
    ["box", "key"],
    ["box", "button"],
  ]);
  // Without a button only ENTER hands the answer in.
  const alone = helpers.answerBox("tt-alone", 5);
  const handed = [];
  helpers.submitTypedAnswer({ input: alone, button: null, message, emptyMessage: "-", finish: (a) => handed.push(a) });
  alone.value = "cup";
  alone.dispatchEvent(new window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  assert.deepEqual(handed, ["cup"]);
});

test("simulateTrial: data-only records the simulated data at once; visual draws the screen and acts on it", () => {
  const window = loadPage();
  const { simulateTrial } = window.TracktalePluginHelpers;
  for (const mode of ["data-only", "visual"]) {
    const jsPsych = fakeJsPsych();
    const display = window.document.createElement("div");
    jsPsych.getDisplayElement = () => display;
    const steps = [];
    const plugin = {
      jsPsych,
      createSimulationData: (trial, options) => {
        steps.push(["data", trial.id, options]);
        return { response: "box", timed_out: false };
      },
      trial: (element, trial) => steps.push(["trial", element === display, trial.id]),
    };
    simulateTrial(plugin, { id: 7 }, mode, { data: {} }, () => steps.push(["loaded"]), (element, data) =>
      steps.push(["onScreen", element === display, data.response]),
    );
    const expected =
      mode === "visual"
        ? [["data", 7, { data: {} }], ["trial", true, 7], ["loaded"], ["onScreen", true, "box"]]
        : [["data", 7, { data: {} }], ["loaded"]];
    assert.deepEqual(steps, expected, mode);
    const finished = jsPsych.calls.filter(([name]) => name === "finishTrial");
    assert.deepEqual(finished, mode === "visual" ? [] : [["finishTrial", { response: "box", timed_out: false }]]);
  }
});

test("simulatedTimeout: an answer without a time or not within the limit becomes a timeout", () => {
  const window = loadPage();
  const { simulatedTimeout } = window.TracktalePluginHelpers;
  const answer = () => ({ choice: "left", response: "a", rt: 999, timed_out: false, input: "key" });
  const inTime = answer();
  assert.equal(simulatedTimeout(inTime, 1000, ["choice", "input"]), false);
  assert.deepEqual(inTime, answer());
  for (const rt of [1000, 5000, null]) {
    const late = { ...answer(), rt };
    assert.equal(simulatedTimeout(late, 1000, ["choice", "input"]), true);
    assert.equal(
      JSON.stringify(late),
      '{"choice":null,"response":null,"rt":null,"timed_out":true,"input":null}',
      String(rt),
    );
  }
});

test("typeAnswerLater types the answer and presses ENTER once the time has passed", () => {
  const window = loadPage();
  const { typeAnswerLater } = window.TracktalePluginHelpers;
  const jsPsych = fakeJsPsych();
  const input = window.document.createElement("input");
  const keys = [];
  input.addEventListener("keydown", (event) => keys.push([event.key, input.value]));
  typeAnswerLater(jsPsych, input, "cup", 1200);
  assert.deepEqual(jsPsych.calls, [["setTimeout", 1200]]);
  assert.equal(input.value, "");
  jsPsych.timeouts[0]();
  assert.deepEqual(keys, [["Enter", "cup"]]);
});
