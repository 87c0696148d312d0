/**
 * jsPsych plugin: moving-window self-paced reading.
 *
 * The text is shown as dashes, one run per word (its characters' count, spaces kept); each
 * press of `continue_key` shows the next word (or, with `step: "region"`, the next region's
 * words) and hides the one before. The first press shows the first word; the press after the
 * last word ends the reading. Each word's (or region's) time runs from the moment it is shown
 * to the press that replaces it, on performance.now(). An optional two-option comprehension
 * question follows (`question`, `options`, `question_keys`). The hint (`prompt`) is the page's,
 * from its locale catalogue; the plugin has no words of its own. When `trial_duration` runs out
 * the trial ends with `timed_out: true` and the words read so far. Words are inserted as text,
 * never as HTML.
 *
 * Data: `words`, one object per step `{word_index, region, word, rt_ms}` (a region: its first
 * word's index and its words joined by single spaces), as the server's word records take them.
 */
/* exported jsPsychSelfPacedReading */
var jsPsychSelfPacedReading = (function (jspsych) {
  "use strict";

  const helpers = TracktalePluginHelpers;
  const SIDES = ["left", "right"];

  /** The region of word `index` (0 where the text has no regions). */
  function regionAt(trial, index) {
    return trial.regions && trial.regions.length ? trial.regions[index] : 0;
  }

  const info = {
    name: "self-paced-reading",
    version: "1.0.0",
    parameters: {
      /** The text's words, in order (plain text; shown as is). */
      words: { type: jspsych.ParameterType.STRING, array: true, default: undefined },
      /** Each word's region (empty: every word in region 0). */
      regions: { type: jspsych.ParameterType.INT, array: true, default: [] },
      /** "word": one word a press; "region": one region a press. */
      step: { type: jspsych.ParameterType.SELECT, options: ["word", "region"], default: "word" },
      /** The key that shows the next word. */
      continue_key: { type: jspsych.ParameterType.KEY, default: " " },
      /** Longest time for the whole text in ms; the trial ends by itself after it. */
      trial_duration: { type: jspsych.ParameterType.INT, default: 300000 },
      /** Hint below the text (the page passes its catalogue's: trial.spr_prompt). */
      prompt: { type: jspsych.ParameterType.STRING, default: "" },
      /** A comprehension question after the text (null: none). */
      question: { type: jspsych.ParameterType.STRING, default: null },
      /** The question's two answers, left and right. */
      options: { type: jspsych.ParameterType.STRING, array: true, default: [] },
      /** The keys choosing the left and the right answer. */
      question_keys: { type: jspsych.ParameterType.KEYS, default: ["f", "j"] },
      ...helpers.keyPressParameters(jspsych.ParameterType, { minimumMs: 0 }),
    },
    data: {
      /** One `{word_index, region, word, rt_ms}` per word (or region) read. */
      words: { type: jspsych.ParameterType.COMPLEX, array: true },
      /** From the first word's onset to the press after the last (null: not reached). */
      reading_time_ms: { type: jspsych.ParameterType.FLOAT },
      /** The time ran out before the end. */
      timed_out: { type: jspsych.ParameterType.BOOL },
      /** The question's answer, "left" or "right" (null: no question, or no answer). */
      choice: { type: jspsych.ParameterType.STRING },
      /** From the question's onset to the answer (null: none). */
      question_rt: { type: jspsych.ParameterType.FLOAT },
    },
  };

  /** The steps of a text: each a list of word indices (one word, or one region's words). */
  function steps(trial) {
    const result = [];
    trial.words.forEach((_, index) => {
      const last = result[result.length - 1];
      if (trial.step === "region" && last && regionAt(trial, last[0]) === regionAt(trial, index)) last.push(index);
      else result.push([index]);
    });
    return result;
  }

  /** The record of one step read in `rt` ms. */
  function stepRecord(trial, indices, rt) {
    return {
      word_index: indices[0],
      region: regionAt(trial, indices[0]),
      word: indices.map((index) => trial.words[index]).join(" "),
      rt_ms: rt,
    };
  }

  function checkTrial(trial) {
    if (!Array.isArray(trial.words) || trial.words.length === 0) {
      throw new Error("self-paced-reading needs the text's words");
    }
    if (trial.regions && trial.regions.length && trial.regions.length !== trial.words.length) {
      throw new Error("self-paced-reading needs one region per word");
    }
    if (trial.question !== null && trial.options.length !== 2) {
      throw new Error("self-paced-reading's question needs two options");
    }
  }

  class SelfPacedReadingPlugin {
    constructor(jsPsych) {
      this.jsPsych = jsPsych;
    }

    trial(display_element, trial) {
      checkTrial(trial);
      const root = helpers.screenRoot("tt-spr", trial);
      const line = document.createElement("p");
      line.className = "tt-spr-text";
      line.dir = "auto";
      const spans = trial.words.map((word) => {
        const span = document.createElement("span");
        span.className = "tt-spr-word";
        span.textContent = word.replace(/\S/g, "-");
        line.append(span, " ");
        return span;
      });
      root.append(line, helpers.paragraph("tt-hint", trial.prompt));
      display_element.replaceChildren(root);
      this.read(display_element, trial, spans);
    }

    /** Runs the presses over the text, then the question or the end. */
    read(display_element, trial, spans) {
      const plan = steps(trial);
      const records = [];
      let position = -1;
      let onset = null;
      let first = null;
      const show = (indices, visible) =>
        indices.forEach((index) => {
          spans[index].textContent = visible ? trial.words[index] : trial.words[index].replace(/\S/g, "-");
          spans[index].classList.toggle("tt-spr-shown", visible);
        });
      const end = helpers.finishOnce((timedOut) => {
        this.jsPsych.pluginAPI.cancelAllKeyboardResponses();
        this.jsPsych.pluginAPI.clearAllTimeouts();
        const reading = timedOut || first === null ? null : helpers.elapsedMs(first);
        const data = { words: records, reading_time_ms: reading, timed_out: timedOut };
        if (timedOut || trial.question === null) {
          this.jsPsych.finishTrial({ ...data, choice: null, question_rt: null });
        } else {
          this.ask(display_element, trial, data);
        }
      });
      const press = () => {
        const now = performance.now();
        if (position >= 0) {
          records.push(stepRecord(trial, plan[position], Math.round((now - onset) * 10) / 10));
          show(plan[position], false);
        }
        position += 1;
        if (position >= plan.length) return end(false);
        show(plan[position], true);
        onset = performance.now();
        if (first === null) first = onset;
      };
      this.jsPsych.pluginAPI.getKeyboardResponse({
        callback_function: press,
        valid_responses: [trial.continue_key],
        persist: true,
        allow_held_key: false,
        minimum_valid_rt: trial.minimum_ms,
      });
      this.jsPsych.pluginAPI.setTimeout(() => end(true), trial.trial_duration);
    }

    /** The comprehension question, answered with `question_keys`. */
    ask(display_element, trial, data) {
      const root = helpers.screenRoot("tt-spr-question", { ...trial, show_timer: false });
      const row = document.createElement("div");
      row.className = "tt-options tt-options-sides";
      trial.options.forEach((option, index) => {
        const text = helpers.paragraph("tt-option tt-option-" + SIDES[index], option);
        text.dir = "auto";
        row.appendChild(text);
      });
      root.append(helpers.paragraph("tt-question", trial.question), row);
      display_element.replaceChildren(root);
      const start = performance.now();
      this.jsPsych.pluginAPI.getKeyboardResponse({
        callback_function: (response) => {
          const key = String(response.key).toLowerCase();
          const index = trial.question_keys.findIndex((k) => String(k).toLowerCase() === key);
          this.jsPsych.finishTrial({ ...data, choice: SIDES[index], question_rt: helpers.elapsedMs(start) });
        },
        valid_responses: trial.question_keys,
        persist: false,
        allow_held_key: false,
      });
    }

    simulate(trial, simulation_mode, simulation_options, load_callback) {
      helpers.simulateTrial(this, trial, simulation_mode, simulation_options, load_callback, (_, data) => {
        if (data.timed_out) return;
        // The first press after a short orientation, then one press per word's time.
        let at = 300;
        this.jsPsych.pluginAPI.pressKey(trial.continue_key, at);
        for (const word of data.words) {
          at += word.rt_ms;
          this.jsPsych.pluginAPI.pressKey(trial.continue_key, at);
        }
        if (trial.question !== null) {
          const index = SIDES.indexOf(data.choice);
          this.jsPsych.pluginAPI.pressKey(trial.question_keys[index], at + data.question_rt);
        }
      });
    }

    createSimulationData(trial, simulation_options) {
      checkTrial(trial);
      const random = this.jsPsych.randomization;
      // About 350 ms a word, longer for long words (a careful reader's moving window).
      const words = steps(trial).map((indices) =>
        stepRecord(
          trial,
          indices,
          Math.round(
            indices.reduce((sum, i) => sum + 200 + 15 * trial.words[i].length, 0) +
              random.sampleExGaussian(100, 30, 1 / 100, true)
          )
        )
      );
      const reading = words.reduce((sum, word) => sum + word.rt_ms, 0);
      const asked = trial.question !== null;
      const defaults = {
        words: words,
        reading_time_ms: reading,
        timed_out: false,
        choice: asked ? SIDES[random.randomInt(0, 1)] : null,
        question_rt: asked ? random.sampleExGaussian(1500, 300, 1 / 500, true) : null,
      };
      const data = this.jsPsych.pluginAPI.mergeSimulationData(defaults, simulation_options);
      const given = (simulation_options && simulation_options.data) || {};
      if (!("reading_time_ms" in given)) {
        data.reading_time_ms = data.words.reduce((sum, word) => sum + word.rt_ms, 0);
      }
      if (300 + data.reading_time_ms >= trial.trial_duration) {
        Object.assign(data, { words: [], reading_time_ms: null, timed_out: true, choice: null, question_rt: null });
      }
      return data;
    }
  }
  SelfPacedReadingPlugin.info = info;

  return SelfPacedReadingPlugin;
})(jsPsychModule);
