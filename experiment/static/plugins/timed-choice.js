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

  const helpers = TracktalePluginHelpers;

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
      ...helpers.keyPressParameters(jspsych.ParameterType, { minimumMs: 200 }),
    },
    data: {
      /** "left" or "right" (null after a timeout). */
      choice: { type: jspsych.ParameterType.STRING },
      /** `response`: the chosen option's text; `rt`: from the options' onset to the choice. */
      ...helpers.timedResponseData(jspsych.ParameterType),
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
      const root = helpers.screenRoot("tt-choice", trial);
      const question = helpers.paragraph("tt-question", trial.question);
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

      const finish = helpers.startTimedTrial(this.jsPsych, trial, {
        record: (start, index, input) => ({
          choice: index === null ? null : SIDES[index],
          ...helpers.answerData(index === null ? null : trial.options[index], start),
          input: input,
        }),
        keys: trial.keys,
        onKey: (info) => {
          const key = String(info.key).toLowerCase();
          return [trial.keys.findIndex((k) => String(k).toLowerCase() === key), "key"];
        },
      });
      buttons.forEach((button, index) => button.addEventListener("click", () => finish(index, "button")));
    }

    simulate(trial, simulation_mode, simulation_options, load_callback) {
      helpers.simulateTrial(this, trial, simulation_mode, simulation_options, load_callback, (_, data) => {
        if (!data.timed_out) {
          this.jsPsych.pluginAPI.pressKey(trial.keys[SIDES.indexOf(data.choice)], data.rt);
        }
      });
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
      if (!helpers.simulatedTimeout(data, trial.trial_duration, ["choice", "input"])) {
        data.response = trial.options[SIDES.indexOf(data.choice)];
      }
      return data;
    }
  }
  TimedChoicePlugin.info = info;

  return TimedChoicePlugin;
})(jsPsychModule);
