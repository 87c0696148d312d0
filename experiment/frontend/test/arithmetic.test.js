// The arithmetic-procedure plugin (static/plugins/arithmetic-procedure.js) run by jsPsych in
// jsdom: simulate() in both modes, its declared data fields, and what a participant can do.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { loadPage, shown, sleep, startJsPsych, until } from "./page.js";

const PROCEDURE = [
  "function(x, y):",
  "Let S1 = x",
  "Let S2 = y",
  "Step 1: S3 = S1 + S2",
  "Step 2: S4 = S3 - S2",
  "Final Step: Return S4",
].join("\n");
const TRIAL = { procedure: PROCEDURE, inputs: "x = 5, y = 8", trial_duration: 3000 };

function checkDeclared(window, plugin, data) {
  const type = window.jsPsychModule.ParameterType;
  const expected = {
    [type.STRING]: "string",
    [type.FLOAT]: "number",
    [type.INT]: "number",
    [type.BOOL]: "boolean",
    [type.OBJECT]: "object",
  };
  for (const [name, spec] of Object.entries(plugin.info.data)) {
    assert.ok(name in data, `${plugin.info.name} did not record ${name}`);
    if (data[name] === null) continue; // may be null after a timeout
    assert.ok(expected[spec.type], `${name} has a type this test does not know`);
    assert.equal(typeof data[name], expected[spec.type], `${name} = ${JSON.stringify(data[name])}`);
  }
}

// Objects made in the page's window have that window's prototypes; compare them as JSON.
function plain(value) {
  return JSON.parse(JSON.stringify(value));
}

function enter(window, input) {
  input.dispatchEvent(new window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
}

describe("jsPsychArithmeticProcedure.simulate()", () => {
  for (const mode of ["data-only", "visual"]) {
    test(`in ${mode} mode records the simulated answer with every declared field`, async () => {
      const window = loadPage();
      const plugin = window.jsPsychArithmeticProcedure;
      const { jsPsych } = startJsPsych(window);
      const answer = { response: "13", rt: 300, intermediates: { S3: "13" } };
      await jsPsych.simulate(
        [{ type: plugin, ...TRIAL, probe_variables: ["S3"], simulation_options: { data: answer } }],
        mode
      );
      const [data] = jsPsych.data.get().values();
      checkDeclared(window, plugin, data);
      assert.equal(data.trial_type, "arithmetic-procedure");
      assert.deepEqual([data.response, data.timed_out, data.steps_shown], ["13", false, 2]);
      assert.deepEqual(plain(data.intermediates), { S3: "13" });
      if (mode === "visual") assert.ok(data.rt >= 300 && data.rt < 1300, `rt ${data.rt}`);
      else assert.equal(data.rt, 300);
    });

    test(`in ${mode} mode times out when the simulated answer comes too late`, async () => {
      const window = loadPage();
      const plugin = window.jsPsychArithmeticProcedure;
      const { jsPsych } = startJsPsych(window);
      const trial = { type: plugin, ...TRIAL, trial_duration: 300 };
      trial.simulation_options = { data: { rt: 5000 } };
      await jsPsych.simulate([trial], mode);
      const [data] = jsPsych.data.get().values();
      checkDeclared(window, plugin, data);
      assert.deepEqual([data.response, data.rt, data.timed_out, data.input], [null, null, true, null]);
    });
  }

  test("without simulation options samples answers of the declared types", async () => {
    const window = loadPage();
    const plugin = window.jsPsychArithmeticProcedure;
    const { jsPsych } = startJsPsych(window);
    const trials = Array.from({ length: 20 }, () => ({ type: plugin, ...TRIAL, trial_duration: 1e9 }));
    await jsPsych.simulate(trials, "data-only");
    for (const data of jsPsych.data.get().values()) {
      checkDeclared(window, plugin, data);
      assert.equal(data.timed_out, false);
      assert.deepEqual(plain(data.intermediates), {});
    }
  });
});

describe("a participant on the arithmetic-procedure screen", () => {
  test("sees the procedure as text and cannot submit a blank answer", async () => {
    const window = loadPage();
    const { jsPsych, display, finishCalls } = startJsPsych(window);
    const run = jsPsych.run([
      { type: window.jsPsychArithmeticProcedure, ...TRIAL, inputs: "x = <b>5</b>, y = 8" },
    ]);
    const input = await shown(display, "#tt-answer");
    assert.equal(display.querySelector(".tt-procedure").textContent, PROCEDURE);
    assert.equal(display.querySelector(".tt-inputs").textContent, "Inputs: x = <b>5</b>, y = 8");
    assert.equal(display.querySelector("b"), null, "text is never markup");
    assert.equal(window.document.activeElement, input);
    input.value = " \t\x1c\x85 ";
    enter(window, input);
    display.querySelector(".tt-submit").click();
    await sleep(20);
    assert.equal(jsPsych.data.get().count(), 0);
    assert.equal(display.querySelector("[role=status]").textContent, "Type a value first.");
    input.value = "  1,234 ";
    enter(window, input);
    enter(window, input); // a second ENTER in the same moment records nothing more
    await run;
    assert.equal(finishCalls.length, 1);
    const [data] = jsPsych.data.get().values();
    assert.deepEqual([data.response, data.input, data.timed_out], ["1,234", "key", false]);
  });

  test("types intermediate values, ENTER moving from box to box, then submits by button", async () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const run = jsPsych.run([
      { type: window.jsPsychArithmeticProcedure, ...TRIAL, probe_variables: ["S3", "S4"] },
    ]);
    const first = await shown(display, "#tt-probe-0");
    assert.equal(window.document.activeElement, first, "the first probe box has the focus");
    first.value = "13";
    enter(window, first);
    const second = display.querySelector("#tt-probe-1");
    assert.equal(window.document.activeElement, second);
    enter(window, second); // left empty
    assert.equal(window.document.activeElement, display.querySelector("#tt-answer"));
    assert.equal(jsPsych.data.get().count(), 0, "ENTER in a probe box does not submit");
    display.querySelector("#tt-answer").value = "undefined";
    display.querySelector(".tt-submit").click();
    await run;
    const [data] = jsPsych.data.get().values();
    assert.deepEqual(plain(data.intermediates), { S3: "13", S4: "" });
    assert.deepEqual([data.response, data.input], ["undefined", "button"]);
  });

  test("a timeout keeps the intermediate values typed so far", async () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const run = jsPsych.run([
      {
        type: window.jsPsychArithmeticProcedure,
        ...TRIAL,
        trial_duration: 300,
        probe_variables: ["S3"],
        button_label: null,
      },
    ]);
    (await shown(display, "#tt-probe-0")).value = "12";
    assert.equal(display.querySelector(".tt-submit"), null);
    await until(() => jsPsych.data.get().count() === 1, "the timeout");
    await run;
    const [data] = jsPsych.data.get().values();
    assert.deepEqual([data.response, data.timed_out], [null, true]);
    assert.deepEqual(plain(data.intermediates), { S3: "12" });
  });
});
