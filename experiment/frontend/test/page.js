// A study page in jsdom for the node tests: jsPsych from node_modules and our scripts, loaded
// as study.html loads them (plain scripts, in order, sharing one window).
import { readFileSync } from "node:fs";
import { JSDOM } from "jsdom";

const SCRIPTS = [
  "node_modules/jspsych/dist/index.browser.min.js",
  "../static/plugin-helpers.js",
  "../static/plugins/timed-reading.js",
  "../static/plugins/timed-text-response.js",
  "../static/plugins/timed-choice.js",
  "../static/plugins/arithmetic-procedure.js",
  "../static/plugins/boxes-grid.js",
  "../static/plugins/self-paced-reading.js",
  "../static/plugins/maze.js",
];
const HERE = new URL("../", import.meta.url);

/** A fresh window with jsPsych, the plugin helpers and every plugin of static/plugins defined. */
export function loadPage() {
  const dom = new JSDOM("<!doctype html><html><body></body></html>", {
    runScripts: "outside-only",
    pretendToBeVisual: true,
    url: "http://localhost/",
  });
  for (const script of SCRIPTS) {
    dom.window.eval(readFileSync(new URL(script, HERE), "utf8"));
  }
  return dom.window;
}

/**
 * A jsPsych instance drawing into its own element of `window`'s page, and the list of the data
 * each call of its finishTrial() got (jsPsych itself ignores a second call for a trial that has
 * ended, so only this list shows whether a plugin ends a trial twice).
 */
export function startJsPsych(window) {
  const display = window.document.createElement("div");
  window.document.body.appendChild(display);
  const jsPsych = window.initJsPsych({ display_element: display });
  const finishCalls = [];
  const finishTrial = jsPsych.finishTrial.bind(jsPsych);
  jsPsych.finishTrial = (data) => {
    finishCalls.push(data);
    return finishTrial(data);
  };
  return { jsPsych, display, finishCalls };
}

/** Wait `ms` milliseconds of real time (the plugins' time limits are real timers). */
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Wait (polling) until `condition()` is true, failing after `timeoutMs`. */
export async function until(condition, what, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** Wait until `display` shows an element matching `selector` (a trial has started drawing). */
export async function shown(display, selector) {
  await until(() => display.querySelector(selector), `${selector} shown`);
  return display.querySelector(selector);
}
