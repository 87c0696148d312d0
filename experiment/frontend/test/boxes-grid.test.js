// The boxes response grid (static/plugins/boxes-grid.js) run by jsPsych in jsdom: simulate() in
// both modes, its declared data fields, and what a participant can do on the grid.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { loadPage, shown, sleep, startJsPsych } from "./page.js";

const STATES = ["OPENED(BOX-0)", "OPENED(BOX-1)", "OBTAINED(KEY-0)", "OBTAINED(KEY-1)"];
const MODEL_ANSWER = "OPENED(BOX-0)=True, OPENED(BOX-1)=False, OBTAINED(KEY-0)=False, OBTAINED(KEY-1)=True";

function checkDeclared(window, data) {
  const type = window.jsPsychModule.ParameterType;
  const kinds = { [type.STRING]: "string", [type.FLOAT]: "number", [type.INT]: "number", [type.BOOL]: "boolean" };
  for (const [name, spec] of Object.entries(window.jsPsychBoxesGrid.info.data)) {
    assert.ok(name in data, `boxes-grid did not record ${name}`);
    if (data[name] !== null) assert.equal(typeof data[name], kinds[spec.type], name);
  }
}

function click(display, row, value) {
  display.querySelector(`[data-row="${row}"][data-value="${value}"]`).click();
}

describe("jsPsychBoxesGrid.simulate()", () => {
  for (const mode of ["data-only", "visual"]) {
    test(`in ${mode} mode records the letters and the model-format answer`, async () => {
      const window = loadPage();
      const { jsPsych } = startJsPsych(window);
      const trial = {
        type: window.jsPsychBoxesGrid,
        states: STATES,
        trial_duration: 3000,
        simulation_options: { data: { response: "TFFT", rt: 300 } },
      };
      await jsPsych.simulate([trial], mode);
      const [data] = jsPsych.data.get().values();
      checkDeclared(window, data);
      assert.equal(data.trial_type, "boxes-grid");
      assert.deepEqual([data.response, data.answer, data.timed_out], ["TFFT", MODEL_ANSWER, false]);
      assert.ok(data.rt >= 300 && data.rt < 1300, `rt ${data.rt}`);
    });

    test(`in ${mode} mode times out when the simulated answer comes too late`, async () => {
      const window = loadPage();
      const { jsPsych } = startJsPsych(window);
      const trial = {
        type: window.jsPsychBoxesGrid,
        states: STATES,
        trial_duration: 300,
        simulation_options: { data: { response: "TFFT", rt: 5000 } },
      };
      await jsPsych.simulate([trial], mode);
      const [data] = jsPsych.data.get().values();
      checkDeclared(window, data);
      assert.deepEqual([data.response, data.answer, data.rt, data.timed_out], [null, null, null, true]);
    });
  }

  test("without simulation options guesses one letter per state", async () => {
    const window = loadPage();
    const { jsPsych } = startJsPsych(window);
    const trials = Array.from({ length: 10 }, () => ({ type: window.jsPsychBoxesGrid, states: STATES, trial_duration: 60000 }));
    await jsPsych.simulate(trials, "data-only");
    for (const data of jsPsych.data.get().values()) {
      checkDeclared(window, data);
      assert.match(data.response, /^[TF]{4}$/);
    }
  });
});

describe("a participant on the boxes grid", () => {
  test("cannot submit before every statement is set; then submits once", async () => {
    const window = loadPage();
    const { jsPsych, display, finishCalls } = startJsPsych(window);
    const run = jsPsych.run([{ type: window.jsPsychBoxesGrid, states: STATES, trial_duration: 5000 }]);
    await shown(display, ".tt-grid-row");
    const labels = [...display.querySelectorAll(".tt-grid-state")].map((span) => span.textContent);
    assert.deepEqual(labels, STATES);
    assert.equal(display.querySelectorAll('[aria-checked="true"]').length, 0, "nothing is preset");
    click(display, 0, "T");
    click(display, 1, "T");
    display.querySelector(".tt-submit").click();
    await sleep(20);
    assert.equal(jsPsych.data.get().count(), 0);
    assert.equal(display.querySelector("[role=status]").textContent, "2 statements are not set yet.");
    click(display, 1, "F"); // a change of mind
    click(display, 2, "F");
    click(display, 3, "T");
    assert.equal(display.querySelector('[data-row="1"][data-value="T"]').getAttribute("aria-checked"), "false");
    const submit = display.querySelector(".tt-submit");
    submit.click();
    submit.click();
    await run;
    assert.equal(finishCalls.length, 1);
    const [data] = jsPsych.data.get().values();
    assert.deepEqual([data.response, data.answer, data.changes], ["TFFT", MODEL_ANSWER, 5]);
  });

  test("ends with no answer when the time runs out", async () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const run = jsPsych.run([{ type: window.jsPsychBoxesGrid, states: STATES, trial_duration: 200 }]);
    await shown(display, ".tt-grid-row");
    click(display, 0, "T");
    await run;
    const [data] = jsPsych.data.get().values();
    assert.deepEqual([data.response, data.answer, data.timed_out, data.changes], [null, null, true, 1]);
  });

  test("shows the statements as text, never as markup, and needs some", () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const plugin = new window.jsPsychBoxesGrid(jsPsych);
    plugin.trial(display, { states: ["<b>X</b>(Y-0)"], prompt: "P", trial_duration: 100, button_label: "Submit", show_timer: true });
    assert.equal(display.querySelector(".tt-grid-state").textContent, "<b>X</b>(Y-0)");
    assert.equal(display.querySelector(".tt-grid b"), null);
    assert.throws(() => plugin.trial(display, { states: [] }), /queried states/);
  });
});
