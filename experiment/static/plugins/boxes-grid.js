/**
 * jsPsych plugin: a True/False grid of every queried state of a boxes item, within a time limit.
 *
 * One row per statement (for example "OPENED(BOX-3)"), in the item's order, each with a True
 * and a False button (marked as a radio group for screen readers). Nothing is preset, so every
 * value is the participant's own; Submit ends the trial once every row is set (before that it
 * says how many are left). The response is one letter per row, `T` or `F`; `answer` is the
 * same grid written exactly as the model's answer format (`OPENED(BOX-0)=True, ...`), which
 * the server rebuilds from the letters and scores with the paradigm's `score_response`. When
 * `trial_duration` runs out the trial ends with `response: null, timed_out: true`. The
 * response time runs from the moment the grid is on screen to the submission.
 */
/* exported jsPsychBoxesGrid */
var jsPsychBoxesGrid = (function (jspsych) {
  "use strict";

  const helpers = TracktalePluginHelpers;

  const info = {
    name: "boxes-grid",
    version: "1.0.0",
    parameters: {
      /** The queried statements, in the item's order (plain text, e.g. "OPENED(BOX-0)"). */
      states: { type: jspsych.ParameterType.STRING, array: true, default: undefined },
      /** Instruction above the grid (plain text). */
      prompt: {
        type: jspsych.ParameterType.STRING,
        default: "Set every statement to True or False.",
      },
      ...helpers.timedResponseParameters(jspsych.ParameterType, { duration: 90000 }),
    },
    data: {
      /** `response`: one letter per statement, T or F, in order; `rt`: from the grid's onset. */
      ...helpers.timedResponseData(jspsych.ParameterType),
      /** The grid in the model's answer format (null after a timeout). */
      answer: { type: jspsych.ParameterType.STRING },
      /** How many times a value was set or changed (clicks and keys). */
      changes: { type: jspsych.ParameterType.INT },
    },
  };

  /** `OPENED(BOX-0)=True, OBTAINED(KEY-0)=False, ...` for letters "TF...". */
  function answerText(states, letters) {
    return states
      .map((name, row) => name + "=" + (letters[row] === "T" ? "True" : "False"))
      .join(", ");
  }

  function gridRow(name, row, onSet) {
    const line = document.createElement("div");
    line.className = "tt-grid-row";
    line.setAttribute("role", "radiogroup");
    const label = document.createElement("span");
    label.className = "tt-grid-state";
    label.id = "tt-grid-label-" + row;
    label.textContent = name;
    line.setAttribute("aria-labelledby", label.id);
    line.appendChild(label);
    for (const letter of ["T", "F"]) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "jspsych-btn tt-grid-value";
      button.dataset.row = String(row);
      button.dataset.value = letter;
      button.setAttribute("role", "radio");
      button.setAttribute("aria-checked", "false");
      button.textContent = letter === "T" ? "True" : "False";
      button.addEventListener("click", () => onSet(row, letter));
      line.appendChild(button);
    }
    return line;
  }

  class BoxesGridPlugin {
    constructor(jsPsych) {
      this.jsPsych = jsPsych;
    }

    trial(display_element, trial) {
      if (!Array.isArray(trial.states) || trial.states.length === 0) {
        throw new Error("boxes-grid needs the queried states");
      }
      const letters = trial.states.map(() => null);
      let changes = 0;
      const root = helpers.responseScreen("tt-boxes-grid", trial);
      const grid = document.createElement("div");
      grid.className = "tt-grid";
      const message = helpers.hintLine();
      const set = (row, letter) => {
        letters[row] = letter;
        changes += 1;
        for (const button of grid.querySelectorAll('[data-row="' + row + '"]')) {
          const chosen = button.dataset.value === letter;
          button.setAttribute("aria-checked", String(chosen));
          button.classList.toggle("tt-grid-chosen", chosen);
        }
        message.textContent = "";
      };
      trial.states.forEach((name, row) => grid.appendChild(gridRow(name, row, set)));
      const button = helpers.submitButton(trial.button_label);
      root.append(grid, button, message);
      display_element.replaceChildren(root);

      const finish = helpers.startTimedTrial(this.jsPsych, trial, {
        record: (start, code) => ({
          ...helpers.answerData(code, start),
          answer: code === null ? null : answerText(trial.states, code),
          changes: changes,
        }),
      });
      button.addEventListener("click", () => {
        const left = letters.filter((letter) => letter === null).length;
        if (left === 0) finish(letters.join(""));
        else message.textContent = left + (left === 1 ? " statement is" : " statements are") + " not set yet.";
      });
    }

    simulate(trial, simulation_mode, simulation_options, load_callback) {
      helpers.simulateTrial(this, trial, simulation_mode, simulation_options, load_callback, (display, data) => {
        if (data.timed_out) return;
        this.jsPsych.pluginAPI.setTimeout(() => {
          Array.from(data.response).forEach((letter, row) => {
            display.querySelector('[data-row="' + row + '"][data-value="' + letter + '"]').click();
          });
          display.querySelector(".tt-submit").click();
        }, data.rt);
      });
    }

    createSimulationData(trial, simulation_options) {
      const rt = this.jsPsych.randomization.sampleExGaussian(12000, 2000, 1 / 4000, true);
      const guessed = trial.states.map(() => (Math.random() < 0.5 ? "T" : "F")).join("");
      const data = this.jsPsych.pluginAPI.mergeSimulationData(
        { response: guessed, rt: rt, timed_out: false, changes: trial.states.length },
        simulation_options
      );
      if (!helpers.simulatedTimeout(data, trial.trial_duration, ["answer"])) {
        data.answer = answerText(trial.states, data.response);
      }
      return data;
    }
  }
  BoxesGridPlugin.info = info;

  return BoxesGridPlugin;
})(jsPsychModule);
