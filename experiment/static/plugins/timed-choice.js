/**
 * jsPsych plugin: a two-alternative forced choice within a time limit, by key or button.
 *
 * Two texts side by side; the participant picks one with the left/right key (default F and J)
 * or its button. When `trial_duration` runs out the trial ends with `choice: null,
 * timed_out: true`. The response time runs from the moment the options are on screen
 * (reading the question and options included). Texts are inserted as text, never as HTML.
 */
/* exported jsPsychTimedChoice */
var jsPsychTimedChoice = (function (jspsych) {
  "use strict";

  const { timerBar, finishOnce, elapsedMs } = TracktalePluginHelpers;

  const SIDES = ["left", "right"];

  const info = {
    name: "timed-choice",
    version: "1.0.0",
    parameters: {
      /** The question above the options (plain text). */
      question: { type: jspsych.ParameterType.STRING, default: undefined },
      /** The two options, left then right (plain text). */
      options: { type: jspsych.ParameterType.STRING, array: true, default: undefined },
      /** The keys choosing the left and the right option. */
      keys: { type: jspsych.ParameterType.KEYS, default: ["f", "j"] },
      /** Longest time to answer in ms. */
      trial_duration: { type: jspsych.ParameterType.INT, default: 15000 },
      /** Key presses earlier than this (ms) are ignored (a key still held from before). */
      minimum_ms: { type: jspsych.ParameterType.INT, default: 200 },
      /** Show a bar that shrinks as the time runs out. */
      show_timer: { type: jspsych.ParameterType.BOOL, default: true },
    },
    data: {
      /** "left" or "right" (null after a timeout). */
      choice: { type: jspsych.ParameterType.STRING },
      /** The chosen option's text (null after a timeout). */
      response: { type: jspsych.ParameterType.STRING },
      /** Time from onset to the choice in ms (null after a timeout). */
      rt: { type: jspsych.ParameterType.FLOAT },
      /** The time ran out before a choice. */
      timed_out: { type: jspsych.ParameterType.BOOL },
      /** "key" or "button" (null after a timeout). */
      input: { type: jspsych.ParameterType.STRING },
    },
  };

  class TimedChoicePlugin {
    constructor(jsPsych) {
      this.jsPsych = jsPsych;
    }

    trial(display_element, trial) {
      if (!Array.isArray(trial.options) || trial.options.length !== 2) {
        throw new Error("timed-choice needs exactly two options");
      }
      const root = document.createElement("div");
      root.className = "tt-screen tt-choice";
      if (trial.show_timer) root.appendChild(timerBar(trial.trial_duration));
      const question = document.createElement("p");
      question.className = "tt-question";
      question.textContent = trial.question;
      const row = document.createElement("div");
      row.className = "tt-options";
      const buttons = SIDES.map((side, index) => {
        const card = document.createElement("div");
        card.className = "tt-option tt-option-" + side;
        const text = document.createElement("p");
        text.textContent = trial.options[index];
        const button = document.createElement("button");
        button.type = "button";
        button.className = "jspsych-btn";
        button.dataset.side = side;
        button.textContent = "Choose (" + String(trial.keys[index]).toUpperCase() + ")";
        card.append(text, button);
        row.appendChild(card);
        return button;
      });
      root.append(question, row);
      display_element.replaceChildren(root);

      const start = performance.now();
      let listener = null;
      const finish = finishOnce((index, input) => {
        if (listener) this.jsPsych.pluginAPI.cancelKeyboardResponse(listener);
        const chosen = index === null ? null : SIDES[index];
        this.jsPsych.finishTrial({
          choice: chosen,
          response: index === null ? null : trial.options[index],
          rt: index === null ? null : elapsedMs(start),
          timed_out: index === null,
          input: input,
        });
      });
      listener = this.jsPsych.pluginAPI.getKeyboardResponse({
        callback_function: (info) => {
          const key = String(info.key).toLowerCase();
          finish(trial.keys.findIndex((k) => String(k).toLowerCase() === key), "key");
        },
        valid_responses: trial.keys,
        persist: false,
        allow_held_key: false,
        minimum_valid_rt: trial.minimum_ms,
      });
      buttons.forEach((button, index) => button.addEventListener("click", () => finish(index, "button")));
      this.jsPsych.pluginAPI.setTimeout(() => finish(null, null), trial.trial_duration);
    }

    simulate(trial, simulation_mode, simulation_options, load_callback) {
      const data = this.createSimulationData(trial, simulation_options);
      if (simulation_mode === "visual") {
        this.trial(this.jsPsych.getDisplayElement(), trial);
        load_callback();
        if (!data.timed_out) {
          this.jsPsych.pluginAPI.pressKey(trial.keys[SIDES.indexOf(data.choice)], data.rt);
        }
        return;
      }
      load_callback();
      this.jsPsych.finishTrial(data);
    }

    createSimulationData(trial, simulation_options) {
      const index = this.jsPsych.randomization.randomInt(0, 1);
      const defaults = {
        choice: SIDES[index],
        response: trial.options[index],
        rt: this.jsPsych.randomization.sampleExGaussian(4000, 700, 1 / 1500, true),
        timed_out: false,
        input: "key",
      };
      const data = this.jsPsych.pluginAPI.mergeSimulationData(defaults, simulation_options);
      if (data.rt === null || data.rt >= trial.trial_duration) {
        Object.assign(data, { choice: null, response: null, rt: null, timed_out: true, input: null });
      } else {
        data.response = trial.options[SIDES.indexOf(data.choice)];
      }
      return data;
    }
  }
  TimedChoicePlugin.info = info;

  return TimedChoicePlugin;
})(jsPsychModule);
