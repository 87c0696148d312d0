// The three tracktale plugins (static/plugins/*.js) run by jsPsych in jsdom: their simulate()
// in both modes, the data fields they declare, and what a participant can do on each screen.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { loadPage, shown, sleep, startJsPsych, until } from "./page.js";

// One trial of each plugin with the answer its simulation gives, and that answer's timeout.
const CASES = {
  jsPsychTimedReading: {
    trial: { text: "Mia put the key in the box.", trial_duration: 3000 },
    answer: { reading_time_ms: 300 },
    late: { reading_time_ms: 5000 },
    timedOut: { reading_time_ms: 3000, timed_out: true, ended_by: "timeout" },
  },
  jsPsychTimedTextResponse: {
    trial: { probe: "The key is in the", trial_duration: 3000 },
    answer: { response: "box", rt: 300 },
    late: { rt: 5000 },
    timedOut: { response: null, rt: null, timed_out: true, input: null },
  },
  jsPsychTimedChoice: {
    trial: { question: "Which?", options: ["one", "two"], trial_duration: 3000 },
    answer: { choice: "right", rt: 300 },
    late: { rt: 5000 },
    timedOut: { choice: null, response: null, rt: null, timed_out: true, input: null },
  },
};

function checkType(window, name, spec, value) {
  if (value === null) return; // every declared field may be null after a timeout
  const type = window.jsPsychModule.ParameterType;
  const expected = {
    [type.STRING]: "string",
    [type.FLOAT]: "number",
    [type.INT]: "number",
    [type.BOOL]: "boolean",
  }[spec.type];
  assert.ok(expected, `${name} has a type this test does not know`);
  assert.equal(typeof value, expected, `${name} = ${JSON.stringify(value)}`);
}

/** The trial's data has every field the plugin declares, each of its declared type. */
function checkDeclared(window, plugin, data) {
  for (const [name, spec] of Object.entries(plugin.info.data)) {
    assert.ok(name in data, `${plugin.info.name} did not record ${name}`);
    checkType(window, name, spec, data[name]);
  }
}

for (const [global, spec] of Object.entries(CASES)) {
  describe(`${global}.simulate()`, () => {
    for (const mode of ["data-only", "visual"]) {
      test(`in ${mode} mode records the simulated answer with every declared field`, async () => {
        const window = loadPage();
        const plugin = window[global];
        const { jsPsych } = startJsPsych(window);
        const trial = { type: plugin, ...spec.trial, simulation_options: { data: spec.answer } };
        await jsPsych.simulate([trial], mode);
        const [data] = jsPsych.data.get().values();
        checkDeclared(window, plugin, data);
        assert.equal(data.timed_out, false);
        assert.equal(data.trial_type, plugin.info.name);
        for (const [name, value] of Object.entries(spec.answer)) {
          // Visual mode goes through the real screen, so its times are real (and a bit later).
          if (mode === "visual" && typeof value === "number") {
            assert.ok(data[name] >= value && data[name] < value + 1000, `${name} ${data[name]}`);
          } else {
            assert.equal(data[name], value, name);
          }
        }
      });

      test(`in ${mode} mode times out when the simulated answer comes too late`, async () => {
        const window = loadPage();
        const plugin = window[global];
        const { jsPsych } = startJsPsych(window);
        const trial = { type: plugin, ...spec.trial, trial_duration: 400 };
        trial.simulation_options = { data: spec.late };
        await jsPsych.simulate([trial], mode);
        const [data] = jsPsych.data.get().values();
        checkDeclared(window, plugin, data);
        const expected = { ...spec.timedOut };
        if ("reading_time_ms" in expected) expected.reading_time_ms = 400;
        for (const [name, value] of Object.entries(expected)) {
          if (mode === "visual" && name === "reading_time_ms") {
            // The real screen measures its own time limit.
            assert.ok(data[name] >= 400 && data[name] < 1400, `${name} ${data[name]}`);
          } else {
            assert.equal(data[name], value, name);
          }
        }
      });
    }

    test("without simulation options samples a plausible answer of the declared types", async () => {
      const window = loadPage();
      const plugin = window[global];
      const { jsPsych } = startJsPsych(window);
      const trials = Array.from({ length: 20 }, () => ({
        type: plugin,
        ...spec.trial,
        trial_duration: 60000,
      }));
      await jsPsych.simulate(trials, "data-only");
      for (const data of jsPsych.data.get().values()) {
        checkDeclared(window, plugin, data);
        assert.equal(data.timed_out, false);
      }
    });
  });
}

describe("a participant on the timed-reading screen", () => {
  test("ends it with the button; the time limit that follows changes nothing", async () => {
    const window = loadPage();
    const { jsPsych, display, finishCalls } = startJsPsych(window);
    const run = jsPsych.run([
      { type: window.jsPsychTimedReading, text: "One.", trial_duration: 300 },
      { type: window.jsPsychTimedReading, text: "Two.", trial_duration: 3000, show_timer: false },
    ]);
    assert.equal((await shown(display, ".tt-story")).textContent, "One.");
    assert.ok(display.querySelector(".tt-timer"), "the timer bar is shown by default");
    const button = display.querySelector(".tt-continue");
    button.click();
    button.click(); // a double click ends the trial once
    await sleep(400); // past the first trial's time limit
    await until(() => display.querySelector(".tt-story").textContent === "Two.", "trial two");
    assert.equal(display.querySelector(".tt-timer"), null, "show_timer: false hides the bar");
    assert.equal(jsPsych.data.get().count(), 1);
    assert.equal(finishCalls.length, 1);
    display.querySelector(".tt-continue").click();
    await run;
    const [first, second] = jsPsych.data.get().values();
    assert.equal(first.ended_by, "button");
    assert.equal(first.timed_out, false);
    assert.ok(first.reading_time_ms >= 0 && first.reading_time_ms < 300);
    assert.equal(second.ended_by, "button");
  });

  test("a key pressed before minimum_ms is ignored, a later one ends the screen", async () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const run = jsPsych.run([
      { type: window.jsPsychTimedReading, text: "Text.", trial_duration: 5000, minimum_ms: 200 },
    ]);
    await shown(display, ".tt-story");
    jsPsych.pluginAPI.pressKey(" ");
    await sleep(30);
    assert.ok(display.querySelector(".tt-story"), "the early key ended the screen");
    await sleep(220);
    jsPsych.pluginAPI.pressKey(" ");
    await run;
    const [data] = jsPsych.data.get().values();
    assert.equal(data.ended_by, "key");
    assert.ok(data.reading_time_ms >= 250);
  });

  test("the text is shown as text, never as markup", async () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const text = '<img src=x onerror="alert(1)"> & <b>bold</b>';
    const run = jsPsych.run([{ type: window.jsPsychTimedReading, text, trial_duration: 200 }]);
    assert.equal((await shown(display, ".tt-story")).textContent, text);
    assert.equal(display.querySelector("img, b"), null);
    await run;
    const [data] = jsPsych.data.get().values();
    assert.equal(data.ended_by, "timeout");
    assert.equal(data.timed_out, true);
  });
});

describe("a participant on the timed-text-response screen", () => {
  test("cannot submit a blank answer, even of whitespace String.trim keeps", async () => {
    const window = loadPage();
    const { jsPsych, display, finishCalls } = startJsPsych(window);
    const run = jsPsych.run([
      { type: window.jsPsychTimedTextResponse, probe: "The key is in the", trial_duration: 3000 },
    ]);
    const input = await shown(display, "#tt-answer");
    assert.equal(window.document.activeElement, input, "the text box has the focus");
    const enter = () =>
      input.dispatchEvent(new window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    input.value = " \t\x1c\x85 ";
    enter();
    display.querySelector(".tt-submit").click();
    await sleep(20);
    assert.equal(jsPsych.data.get().count(), 0);
    assert.equal(display.querySelector("[role=status]").textContent, "Type a word first.");
    input.value = "  box\x1f ";
    enter();
    enter(); // a second ENTER in the same moment records nothing more
    await run;
    const values = jsPsych.data.get().values();
    assert.equal(values.length, 1);
    assert.equal(finishCalls.length, 1);
    assert.equal(values[0].response, "box");
    assert.equal(values[0].input, "key");
    assert.equal(values[0].probe, "The key is in the");
  });

  test("submits with the button, and has no button when button_label is null", async () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const run = jsPsych.run([
      { type: window.jsPsychTimedTextResponse, probe: "A", trial_duration: 3000 },
      { type: window.jsPsychTimedTextResponse, probe: "B", trial_duration: 300, button_label: null },
    ]);
    (await shown(display, "#tt-answer")).value = "cup";
    display.querySelector(".tt-submit").click();
    await until(() => display.querySelector(".tt-probe")?.textContent === "B ", "trial B");
    assert.equal(display.querySelector(".tt-submit"), null);
    await run;
    const [first, second] = jsPsych.data.get().values();
    assert.deepEqual([first.response, first.input, first.timed_out], ["cup", "button", false]);
    assert.deepEqual([second.response, second.rt, second.timed_out], [null, null, true]);
  });
});

describe("a participant on the timed-choice screen", () => {
  test("chooses with a key; a click in the same moment does not end the trial again", async () => {
    const window = loadPage();
    const { jsPsych, display, finishCalls } = startJsPsych(window);
    const choice = { type: window.jsPsychTimedChoice, question: "Q", options: ["a <i>", "b"] };
    const run = jsPsych.run([
      { ...choice, trial_duration: 3000, minimum_ms: 0 },
      { ...choice, trial_duration: 300 },
    ]);
    await shown(display, ".tt-option");
    const texts = [...display.querySelectorAll(".tt-option p")].map((p) => p.textContent);
    assert.deepEqual(texts, ["a <i>", "b"]);
    assert.equal(display.querySelector("i"), null);
    const buttons = [...display.querySelectorAll(".tt-option button")];
    assert.deepEqual(
      buttons.map((b) => b.textContent),
      ["Choose (F)", "Choose (J)"]
    );
    jsPsych.pluginAPI.keyDown("j");
    buttons[0].click();
    jsPsych.pluginAPI.keyUp("j");
    await run;
    assert.equal(finishCalls.length, 2);
    const [first, second] = jsPsych.data.get().values();
    assert.deepEqual([first.choice, first.response, first.input], ["right", "b", "key"]);
    assert.deepEqual([second.choice, second.rt, second.timed_out], [null, null, true]);
  });

  test("needs two options or more, and one key for each", () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const plugin = new window.jsPsychTimedChoice(jsPsych);
    const one = { question: "Q", options: ["one"], keys: ["f"], button_label: "({key})" };
    assert.throws(() => plugin.trial(display, one), /at least two options/);
    const trial = { question: "Q", options: ["one", "two", "three"], keys: ["f", "j"], button_label: "({key})" };
    assert.throws(() => plugin.trial(display, trial), /one key per option/);
  });

  test("three options are numbered: their keys, labels and the choice recorded", async () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const run = jsPsych.run([
      {
        type: window.jsPsychTimedChoice,
        question: "Q",
        options: ["a", "b", "c"],
        keys: ["1", "2", "3"],
        button_label: "Kiezen ({key})",
        trial_duration: 3000,
        minimum_ms: 0,
      },
    ]);
    await shown(display, ".tt-option");
    const buttons = [...display.querySelectorAll(".tt-option button")];
    assert.deepEqual(
      buttons.map((b) => b.textContent),
      ["Kiezen (1)", "Kiezen (2)", "Kiezen (3)"]
    );
    assert.equal(display.querySelector(".tt-options-sides"), null);
    jsPsych.pluginAPI.keyDown("2");
    jsPsych.pluginAPI.keyUp("2");
    await run;
    const [data] = jsPsych.data.get().values();
    assert.deepEqual([data.choice, data.response, data.input], ["2", "b", "key"]);
  });
});
