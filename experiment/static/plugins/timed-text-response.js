/**
 * jsPsych plugin: a one-word typed answer within a time limit; ENTER submits.
 *
 * jsPsych's survey-text has no time limit, hence this plugin. The probe (for example
 * "The key is in the") is shown with a text box after it. ENTER or the submit button (for
 * phones, whose keyboards may have no ENTER) submits a non-empty answer; an answer of only
 * spaces is refused on the page as on the server. When `trial_duration` runs out the trial
 * ends with `response: null, timed_out: true`. The response time runs from the moment the
 * probe is on screen (reading the probe included) to the submission.
 */
/* exported jsPsychTimedTextResponse */
var jsPsychTimedTextResponse = (function (jspsych) {
  "use strict";

  const helpers = TracktalePluginHelpers;

  const info = {
    name: "timed-text-response",
    version: "1.0.0",
    parameters: {
      /** The sentence to complete, shown before the text box (plain text). */
      probe: { type: jspsych.ParameterType.STRING, default: undefined },
      /** Instruction above the probe (plain text). */
      prompt: {
        type: jspsych.ParameterType.STRING,
        default: "Complete the sentence with one word and press ENTER (or Submit).",
      },
      /** Shown when ENTER is pressed on an empty box. */
      empty_message: { type: jspsych.ParameterType.STRING, default: "Type a word first." },
      /** The answer box's name for screen readers. */
      answer_label: { type: jspsych.ParameterType.STRING, default: "your answer" },
      ...helpers.timedResponseParameters(jspsych.ParameterType, { duration: 15000, maxLength: 40 }),
    },
    data: {
      /** `response`: the answer as typed; `rt`: from probe onset to the submission. */
      ...helpers.timedResponseData(jspsych.ParameterType),
      /** "key" (ENTER) or "button" (null after a timeout). */
      input: { type: jspsych.ParameterType.STRING },
      /** The probe shown. */
      probe: { type: jspsych.ParameterType.STRING },
    },
  };

  class TimedTextResponsePlugin {
    constructor(jsPsych) {
      this.jsPsych = jsPsych;
    }

    trial(display_element, trial) {
      const root = helpers.responseScreen("tt-text-response", trial);
      const line = document.createElement("p");
      line.className = "tt-probe";
      line.dir = "auto";
      line.append(document.createTextNode(trial.probe + " "));
      const input = helpers.answerBox("tt-answer", trial.max_length);
      input.dir = "auto";
      input.setAttribute("aria-label", trial.answer_label);
      line.appendChild(input);
      const message = helpers.hintLine();
      root.appendChild(line);
      const button = trial.button_label ? helpers.submitButton(trial.button_label) : null;
      if (button) root.appendChild(button);
      root.appendChild(message);
      display_element.replaceChildren(root);
      input.focus();

      const finish = helpers.startTimedTrial(this.jsPsych, trial, {
        record: (start, response, how) => ({
          ...helpers.answerData(response, start),
          input: response === null ? null : how,
          probe: trial.probe,
        }),
      });
      helpers.submitTypedAnswer({ input, button, message, emptyMessage: trial.empty_message, finish });
      // Keep the typing position in the box even if the participant clicks elsewhere.
      root.addEventListener("click", (event) => {
        if (event.target !== button) input.focus();
      });
    }

    simulate(trial, simulation_mode, simulation_options, load_callback) {
      helpers.simulateTrial(this, trial, simulation_mode, simulation_options, load_callback, (display, data) => {
        if (!data.timed_out) {
          helpers.typeAnswerLater(this.jsPsych, display.querySelector("#tt-answer"), data.response, data.rt);
        }
      });
    }

    createSimulationData(trial, simulation_options) {
      const rt = this.jsPsych.randomization.sampleExGaussian(3500, 600, 1 / 1500, true);
      const data = this.jsPsych.pluginAPI.mergeSimulationData(
        { response: "box", rt: rt, timed_out: false, input: "key", probe: trial.probe },
        simulation_options
      );
      helpers.simulatedTimeout(data, trial.trial_duration, ["input"]);
      return data;
    }
  }
  TimedTextResponsePlugin.info = info;

  return TimedTextResponsePlugin;
})(jsPsychModule);
