// The word-by-word plugins (static/plugins/self-paced-reading.js, maze.js) in jsdom: what a
// participant's key presses record, word by word, and their simulate() in both modes.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { loadPage, shown, sleep, startJsPsych, until } from "./page.js";

const WORDS = ["Mia", "put", "the", "key.", "Then", "she", "left."];
const REGIONS = [0, 0, 0, 0, 1, 1, 1];
const DISTRACTORS = ["x-x-x", "ate", "sky", "ran.", "Into", "tree", "blue."];

/** A value of the page's window as plain data of this one (deepEqual compares realms). */
const plain = (value) => JSON.parse(JSON.stringify(value));
const same = (actual, expected, message) => assert.deepEqual(plain(actual), plain(expected), message);
const differ = (actual, other, message) => assert.notDeepEqual(plain(actual), plain(other), message);

/** Presses `key` `times` times, `gap` ms apart (real time: the plugins time real presses). */
async function press(jsPsych, key, times, gap = 30) {
  for (let i = 0; i < times; i += 1) {
    jsPsych.pluginAPI.pressKey(key);
    await sleep(gap);
  }
}

describe("a participant reading self-paced", () => {
  test("sees dashes, one word a press, and records each word once with its time", async () => {
    const window = loadPage();
    const { jsPsych, display, finishCalls } = startJsPsych(window);
    const run = jsPsych.run([{ type: window.jsPsychSelfPacedReading, words: WORDS, regions: REGIONS }]);
    const text = await shown(display, ".tt-spr-text");
    assert.equal(text.textContent.trim(), "--- --- --- ---- ---- --- -----");
    await press(jsPsych, " ", 1, 60);
    assert.equal(display.querySelector(".tt-spr-shown").textContent, "Mia");
    await press(jsPsych, " ", 1);
    const visible = [...display.querySelectorAll(".tt-spr-shown")].map((span) => span.textContent);
    same(visible, ["put"], "the moving window shows one word");
    await press(jsPsych, " ", WORDS.length - 1);
    await run;
    assert.equal(finishCalls.length, 1);
    const [data] = jsPsych.data.get().values();
    same(data.words.map((w) => w.word), WORDS);
    same(data.words.map((w) => w.word_index), [0, 1, 2, 3, 4, 5, 6]);
    same(data.words.map((w) => w.region), REGIONS);
    assert.ok(data.words[0].rt_ms >= 55, `the second press came 60 ms later: ${data.words[0].rt_ms}`);
    assert.ok(data.words.every((w) => w.rt_ms > 0 && w.rt_ms < 1000));
    assert.equal(data.timed_out, false);
    assert.equal(data.choice, null);
  });

  test("reads region by region, then answers the question", async () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const run = jsPsych.run([
      {
        type: window.jsPsychSelfPacedReading,
        words: WORDS,
        regions: REGIONS,
        step: "region",
        question: "Where is the key?",
        options: ["box", "bag"],
      },
    ]);
    await shown(display, ".tt-spr-text");
    await press(jsPsych, " ", 3);
    await shown(display, ".tt-question");
    jsPsych.pluginAPI.pressKey("j");
    await run;
    const [data] = jsPsych.data.get().values();
    same(
      data.words.map((w) => [w.word_index, w.region, w.word]),
      [[0, 0, "Mia put the key."], [4, 1, "Then she left."]]
    );
    assert.equal(data.choice, "right");
    assert.ok(data.question_rt >= 0);
  });

  test("a timeout keeps the words read so far", async () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const run = jsPsych.run([{ type: window.jsPsychSelfPacedReading, words: WORDS, trial_duration: 300 }]);
    await shown(display, ".tt-spr-text");
    await press(jsPsych, " ", 3);
    await run;
    const [data] = jsPsych.data.get().values();
    assert.equal(data.timed_out, true);
    same(data.words.map((w) => w.word), ["Mia", "put"]);
  });

  test("words are shown as text, never as markup", async () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const run = jsPsych.run([{ type: window.jsPsychSelfPacedReading, words: ["<b>x</b>"], trial_duration: 500 }]);
    await shown(display, ".tt-spr-text");
    await press(jsPsych, " ", 1);
    assert.equal(display.querySelector(".tt-spr-shown").textContent, "<b>x</b>");
    assert.equal(display.querySelector("b"), null);
    await press(jsPsych, " ", 1);
    await run;
  });
});

describe("a participant in the Maze", () => {
  const sides = () => loadPage().jsPsychMaze.sides(7, WORDS.length);

  test("the real word's sides follow the seed", () => {
    same(sides(), sides());
    const many = loadPage().jsPsychMaze.sides(7, 200);
    const left = many.filter((side) => side === "left").length;
    assert.ok(left > 70 && left < 130, `${left} of 200 on the left`);
    differ(many, loadPage().jsPsychMaze.sides(8, 200));
  });

  test("choosing right every time records every word once", async () => {
    const window = loadPage();
    const { jsPsych, display, finishCalls } = startJsPsych(window);
    const trial = { type: window.jsPsychMaze, words: WORDS, distractors: DISTRACTORS, seed: 7 };
    const run = jsPsych.run([trial]);
    await shown(display, ".tt-maze-pair");
    const real = sides();
    for (let i = 0; i < WORDS.length; i += 1) {
      const cells = [...display.querySelectorAll(".tt-maze-word")].map((cell) => cell.textContent);
      assert.equal(cells[real[i] === "left" ? 0 : 1], WORDS[i]);
      assert.equal(cells[real[i] === "left" ? 1 : 0], DISTRACTORS[i]);
      await press(jsPsych, real[i] === "left" ? "e" : "i", 1);
    }
    await run;
    assert.equal(finishCalls.length, 1);
    const [data] = jsPsych.data.get().values();
    assert.equal(data.ended_by, "done");
    assert.equal(data.completed, true);
    same(data.words.map((w) => w.choice), real);
    assert.ok(data.words.every((w) => w.correct && w.errors === null && w.rt_ms > 0));
    same(data.words.map((w) => w.distractor), DISTRACTORS);
  });

  test("a wrong choice ends the trial by default", async () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const run = jsPsych.run([{ type: window.jsPsychMaze, words: WORDS, distractors: DISTRACTORS, seed: 7 }]);
    await shown(display, ".tt-maze-pair");
    const real = sides();
    await press(jsPsych, real[0] === "left" ? "e" : "i", 1);
    await press(jsPsych, real[1] === "left" ? "i" : "e", 1);
    await run;
    const [data] = jsPsych.data.get().values();
    assert.equal(data.ended_by, "error");
    assert.equal(data.completed, false);
    same(data.words.map((w) => w.correct), [true, false]);
  });

  test("with redo, a wrong choice waits for the right one and is counted", async () => {
    const window = loadPage();
    const { jsPsych, display } = startJsPsych(window);
    const error_message = "Fout. Probeer het nog een keer.";
    const trial = { type: window.jsPsychMaze, words: WORDS, distractors: DISTRACTORS, seed: 7, redo: true, error_message };
    const run = jsPsych.run([trial]);
    await shown(display, ".tt-maze-pair");
    const real = sides();
    const key = (i, right) => ((real[i] === "left") === right ? "e" : "i");
    await press(jsPsych, key(0, false), 2);
    assert.equal(display.querySelector(".tt-maze-error").textContent, error_message, "the page's text");
    for (let i = 0; i < WORDS.length; i += 1) await press(jsPsych, key(i, true), 1);
    await run;
    const [data] = jsPsych.data.get().values();
    assert.equal(data.ended_by, "done");
    assert.equal(data.words.length, WORDS.length);
    same(data.words[0], { ...data.words[0], correct: false, errors: 2, choice: real[0] === "left" ? "right" : "left" });
    assert.ok(data.words.slice(1).every((w) => w.correct && w.errors === 0));
    assert.ok(data.words[0].rt_ms >= 55, "the time runs to the right choice");
  });

  test("a text without distractors is refused", () => {
    const window = loadPage();
    const { jsPsych } = startJsPsych(window);
    assert.throws(
      () => new window.jsPsychMaze(jsPsych).trial(window.document.body, { words: WORDS, distractors: undefined }),
      /one distractor per word/
    );
  });
});

for (const global of ["jsPsychSelfPacedReading", "jsPsychMaze"]) {
  describe(`${global}.simulate()`, () => {
    for (const mode of ["data-only", "visual"]) {
      test(`in ${mode} mode records every word with the declared fields`, async () => {
        const window = loadPage();
        const plugin = window[global];
        const { jsPsych } = startJsPsych(window);
        const trial = { type: plugin, words: WORDS, regions: REGIONS, distractors: DISTRACTORS, redo: true };
        await jsPsych.simulate([trial], mode);
        const [data] = jsPsych.data.get().values();
        for (const name of Object.keys(plugin.info.data)) assert.ok(name in data, name);
        assert.equal(data.timed_out, false);
        same(data.words.map((w) => w.word), WORDS);
        assert.ok(data.words.every((w) => typeof w.rt_ms === "number" && w.rt_ms > 0));
        if (mode === "visual") await until(() => true, "done");
      });
    }
  });
}
