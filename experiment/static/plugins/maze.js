/**
 * jsPsych plugin: the Maze task (Forster et al. 2009; Boyce et al. 2020).
 *
 * The text is read one word a step: each step shows the real next word and a distractor side
 * by side, and the participant chooses the word that continues the sentence with `keys` (the
 * left and the right one; default E and I). Which side holds the real word is drawn from a
 * seeded order (`seed`), so a session's sides can be rebuilt. A wrong choice ends the trial
 * (`ended_by: "error"`), or with `redo` shows `error_message` and waits for the right one
 * (Boyce et al. 2020). The hint (`prompt`) and `error_message` are the page's, from its locale
 * catalogue; the plugin has no words of its own. Each step's time runs from the pair's onset to the choice that ends it
 * (with `redo`, the right one), on performance.now().
 *
 * The distractors come with the text (`distractors`, one per word: G-maze's grammatical
 * ones, or A-maze's generated ones); there is no default, and a text without them is refused.
 *
 * Data: `words`, one object per word reached `{word_index, region, word, distractor, choice,
 * correct, errors, rt_ms}`: `choice` is the side chosen first, `correct` whether that was the
 * real word, `errors` the wrong choices before the right one (with `redo`; else null).
 */
/* exported jsPsychMaze */
var jsPsychMaze = (function (jspsych) {
  "use strict";

  const helpers = TracktalePluginHelpers;
  const SIDES = ["left", "right"];

  /** The region of word `index` (0 where the text has no regions). */
  function regionAt(trial, index) {
    return trial.regions && trial.regions.length ? trial.regions[index] : 0;
  }

  const info = {
    name: "maze",
    version: "1.0.0",
    parameters: {
      /** The text's words, in order (plain text). */
      words: { type: jspsych.ParameterType.STRING, array: true, default: undefined },
      /** One distractor per word (required: G-maze needs them supplied). */
      distractors: { type: jspsych.ParameterType.STRING, array: true, default: undefined },
      /** Each word's region (empty: every word in region 0). */
      regions: { type: jspsych.ParameterType.INT, array: true, default: [] },
      /** The keys choosing the left and the right word. */
      keys: { type: jspsych.ParameterType.KEYS, default: ["e", "i"] },
      /** After a wrong choice, wait for the right one instead of ending the trial. */
      redo: { type: jspsych.ParameterType.BOOL, default: false },
      /** Shown after a wrong choice with `redo` (the page's catalogue: trial.maze_error). */
      error_message: { type: jspsych.ParameterType.STRING, default: "" },
      /** The seed of the sides the real words take. */
      seed: { type: jspsych.ParameterType.INT, default: 1 },
      /** Longest time for the whole text in ms; the trial ends by itself after it. */
      trial_duration: { type: jspsych.ParameterType.INT, default: 300000 },
      /** Hint below the words (the page's catalogue: trial.maze_prompt). */
      prompt: { type: jspsych.ParameterType.STRING, default: "" },
      ...helpers.keyPressParameters(jspsych.ParameterType, { minimumMs: 0 }),
    },
    data: {
      /** One object per word reached (see above). */
      words: { type: jspsych.ParameterType.COMPLEX, array: true },
      /** "done", "error" (a wrong choice without `redo`) or "timeout". */
      ended_by: { type: jspsych.ParameterType.STRING },
      /** The time ran out before the end. */
      timed_out: { type: jspsych.ParameterType.BOOL },
      /** Every word was reached and chosen right. */
      completed: { type: jspsych.ParameterType.BOOL },
    },
  };

  /** The side ("left"/"right") of the real word at each step: mulberry32 of `seed`. */
  function sides(seed, count) {
    let state = seed >>> 0;
    const result = [];
    for (let i = 0; i < count; i += 1) {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      result.push(((t ^ (t >>> 14)) >>> 0) % 2 === 0 ? "left" : "right");
    }
    return result;
  }

  function checkTrial(trial) {
    if (!Array.isArray(trial.words) || trial.words.length === 0) {
      throw new Error("maze needs the text's words");
    }
    if (!Array.isArray(trial.distractors) || trial.distractors.length !== trial.words.length) {
      throw new Error("maze needs one distractor per word (G-maze: give them with the text)");
    }
    if (trial.regions && trial.regions.length && trial.regions.length !== trial.words.length) {
      throw new Error("maze needs one region per word");
    }
  }

  function wordRecord(trial, index, first, errors, rt) {
    return {
      word_index: index,
      region: regionAt(trial, index),
      word: trial.words[index],
      distractor: trial.distractors[index],
      choice: first.choice,
      correct: first.correct,
      errors: trial.redo ? errors : null,
      rt_ms: rt,
    };
  }

  class MazePlugin {
    constructor(jsPsych) {
      this.jsPsych = jsPsych;
    }

    trial(display_element, trial) {
      checkTrial(trial);
      const root = helpers.screenRoot("tt-maze", trial);
      const row = document.createElement("div");
      row.className = "tt-options tt-options-sides tt-maze-pair";
      const cells = SIDES.map((side) => {
        const cell = helpers.paragraph("tt-option tt-maze-word tt-option-" + side, "");
        cell.dir = "auto";
        row.appendChild(cell);
        return cell;
      });
      const message = helpers.hintLine();
      message.classList.add("tt-maze-error");
      root.append(row, message, helpers.paragraph("tt-hint", trial.prompt));
      display_element.replaceChildren(root);
      this.run(trial, cells, message);
    }

    /** Shows the pairs one after another and records each word's choice. */
    run(trial, cells, message) {
      const real = sides(trial.seed, trial.words.length);
      const records = [];
      let position = 0;
      let onset = 0;
      let first = null;
      let errors = 0;
      const show = () => {
        const left = real[position] === "left";
        cells[0].textContent = left ? trial.words[position] : trial.distractors[position];
        cells[1].textContent = left ? trial.distractors[position] : trial.words[position];
        message.textContent = "";
        first = null;
        errors = 0;
        onset = performance.now();
      };
      const end = helpers.finishOnce((endedBy) => {
        this.jsPsych.pluginAPI.cancelAllKeyboardResponses();
        this.jsPsych.pluginAPI.clearAllTimeouts();
        this.jsPsych.finishTrial({
          words: records,
          ended_by: endedBy,
          timed_out: endedBy === "timeout",
          completed: endedBy === "done",
        });
      });
      const choose = (response) => {
        const key = String(response.key).toLowerCase();
        const side = SIDES[trial.keys.findIndex((k) => String(k).toLowerCase() === key)];
        const correct = side === real[position];
        if (first === null) first = { choice: side, correct: correct };
        if (!correct && trial.redo) {
          errors += 1;
          message.textContent = trial.error_message;
          return;
        }
        records.push(wordRecord(trial, position, first, errors, helpers.elapsedMs(onset)));
        if (!correct) return end("error");
        position += 1;
        if (position >= trial.words.length) return end("done");
        show();
      };
      show();
      this.jsPsych.pluginAPI.getKeyboardResponse({
        callback_function: choose,
        valid_responses: trial.keys,
        persist: true,
        allow_held_key: false,
        minimum_valid_rt: trial.minimum_ms,
      });
      this.jsPsych.pluginAPI.setTimeout(() => end("timeout"), trial.trial_duration);
    }

    simulate(trial, simulation_mode, simulation_options, load_callback) {
      helpers.simulateTrial(this, trial, simulation_mode, simulation_options, load_callback, (_, data) => {
        if (data.timed_out) return;
        const real = sides(trial.seed, trial.words.length);
        const keyOf = (side) => trial.keys[SIDES.indexOf(side)];
        const other = (side) => (side === "left" ? "right" : "left");
        let at = 0;
        for (const word of data.words) {
          const right = real[word.word_index];
          at += word.rt_ms;
          // A redo's wrong choices come before the right one, within the word's time.
          for (let e = 0; e < (word.errors || 0); e += 1) {
            this.jsPsych.pluginAPI.pressKey(keyOf(other(right)), at - 10 * (e + 1));
          }
          this.jsPsych.pluginAPI.pressKey(keyOf(word.correct || word.errors ? right : other(right)), at);
        }
      });
    }

    createSimulationData(trial, simulation_options) {
      checkTrial(trial);
      const random = this.jsPsych.randomization;
      const real = sides(trial.seed, trial.words.length);
      // About 800 ms a word, a wrong first choice one time in 50 (Boyce et al. 2020's range).
      const words = [];
      for (let index = 0; index < trial.words.length; index += 1) {
        const correct = random.randomInt(1, 50) > 1;
        const choice = correct ? real[index] : real[index] === "left" ? "right" : "left";
        const rt = Math.round(random.sampleExGaussian(650 + 20 * trial.words[index].length, 100, 1 / 200, true));
        words.push(wordRecord(trial, index, { choice, correct }, correct ? 0 : 1, rt));
        if (!correct && !trial.redo) break;
      }
      const done = words.length === trial.words.length && (trial.redo || words.every((w) => w.correct));
      const defaults = { words, ended_by: done ? "done" : "error", timed_out: false, completed: done };
      const data = this.jsPsych.pluginAPI.mergeSimulationData(defaults, simulation_options);
      const total = data.words.reduce((sum, word) => sum + word.rt_ms, 0);
      if (total >= trial.trial_duration) {
        Object.assign(data, { words: [], ended_by: "timeout", timed_out: true, completed: false });
      }
      return data;
    }
  }
  MazePlugin.info = info;
  MazePlugin.sides = sides;

  return MazePlugin;
})(jsPsychModule);
