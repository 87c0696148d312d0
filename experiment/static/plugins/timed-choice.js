/**
 * jsPsych plugin: a forced choice within a time limit, by key or button.
 *
 * Two texts side by side (or more, in a row that wraps); the participant picks one with its key
 * (default F and J for the left and the right one) or its button. When `trial_duration` runs out
 * the trial ends with `choice: null, timed_out: true`. The response time runs from the moment
 * the options are on screen (reading the question and options included). Texts are inserted as
 * text, never as HTML, each in its own direction (`dir="auto"`). The options keep their
 * physical places on a right-to-left page (study.css), as the F and J keys do.
 */
/* exported jsPsychTimedChoice */
var jsPsychTimedChoice = (function (jspsych) {
  "use strict";

  const helpers = TracktalePluginHelpers;

  const SIDES = ["left", "right"];

  /** What `choice` records for the option at `index`: its side of two, else its number. */
  function choiceName(trial, index) {
    return trial.options.length === 2 ? SIDES[index] : String(index + 1);
  }

  function choiceIndex(trial, choice) {
    return trial.options.length === 2 ? SIDES.indexOf(choice) : Number(choice) - 1;
  }

  const info = {
    name: "timed-choice",
    version: "1.0.0",
    parameters: {
      /** The question above the options (plain text). */
      question: { type: jspsych.ParameterType.STRING, default: undefined },
      /** The options, left to right (plain text); two or more. */
      options: { type: jspsych.ParameterType.STRING, array: true, default: undefined },
      /** The key choosing each option, in the same order. */
      keys: { type: jspsych.ParameterType.KEYS, default: ["f", "j"] },
      /** The label of each option's button; `{key}` is its key. */
      button_label: { type: jspsych.ParameterType.STRING, default: "Choose ({key})" },
      /** Longest time to answer in ms. */
      trial_duration: { type: jspsych.ParameterType.INT, default: 15000 },
      ...helpers.keyPressParameters(jspsych.ParameterType, { minimumMs: 200 }),
    },
    data: {
      /** "left" or "right" of two options, else the option's number from "1" (null after a timeout). */
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
      if (!Array.isArray(trial.options) || trial.options.length < 2) {
        throw new Error("timed-choice needs at least two options");
      }
      if (trial.keys.length !== trial.options.length) {
        throw new Error("timed-choice needs one key per option");
      }
      const root = helpers.screenRoot("tt-choice", trial);
      const question = helpers.paragraph("tt-question", trial.question);
      question.dir = "auto";
      const row = document.createElement("div");
      // Two options are the left and the right one (their keys' sides, on any page).
      row.className = trial.options.length === 2 ? "tt-options tt-options-sides" : "tt-options";
      const buttons = trial.options.map((option, index) => {
        const side = choiceName(trial, index);
        const card = document.createElement("div");
        card.className = "tt-option tt-option-" + side;
        const text = document.createElement("p");
        text.textContent = option;
        text.dir = "auto";
        const button = document.createElement("button");
        button.type = "button";
        button.className = "jspsych-btn";
        button.dataset.side = side;
        button.textContent = trial.button_label.replace("{key}", String(trial.keys[index]).toUpperCase());
        card.append(text, button);
        row.appendChild(card);
        return button;
      });
      root.append(question, row);
      display_element.replaceChildren(root);

      const finish = helpers.startTimedTrial(this.jsPsych, trial, {
        record: (start, index, input) => ({
          choice: index === null ? null : choiceName(trial, index),
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
          this.jsPsych.pluginAPI.pressKey(trial.keys[choiceIndex(trial, data.choice)], data.rt);
        }
      });
    }

    createSimulationData(trial, simulation_options) {
      const index = this.jsPsych.randomization.randomInt(0, trial.options.length - 1);
      const defaults = {
        choice: choiceName(trial, index),
        response: trial.options[index],
        rt: this.jsPsych.randomization.sampleExGaussian(4000, 700, 1 / 1500, true),
        timed_out: false,
        input: "key",
      };
      const data = this.jsPsych.pluginAPI.mergeSimulationData(defaults, simulation_options);
      if (!helpers.simulatedTimeout(data, trial.trial_duration, ["choice", "input"])) {
        data.response = trial.options[choiceIndex(trial, data.choice)];
      }
      return data;
    }
  }
  TimedChoicePlugin.info = info;

  return TimedChoicePlugin;
})(jsPsychModule);
