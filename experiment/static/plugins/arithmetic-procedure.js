/**
 * jsPsych plugin: an arithmetic procedure and its inputs, and a box for the value it returns.
 *
 * The procedure (`Let S1 = x`, `Step 1: S3 = S1 + S2`, ..., `Final Step: Return S7`) and the
 * inputs are shown as text, line by line, as the models read them. The answer box takes what
 * a person types (a number, "inf", "undefined"); the server reads and scores it, so the page
 * refuses only a blank answer (as the server does). Optional boxes for intermediate variables
 * (`probe_variables`, e.g. ["S3", "S4"]) probe the state a person keeps on the way; ENTER in
 * one of them moves on to the next box, ENTER in the answer box (or the Submit button, for
 * phones) submits. When `trial_duration` runs out the trial ends with `response: null,
 * timed_out: true` and whatever intermediate values were typed by then. The response time
 * runs from the moment the procedure is on screen to the submission.
 */
/* exported jsPsychArithmeticProcedure */
var jsPsychArithmeticProcedure = (function (jspsych) {
  "use strict";

  const helpers = TracktalePluginHelpers;

  const info = {
    name: "arithmetic-procedure",
    version: "1.0.0",
    parameters: {
      /** The procedure, one line per step (plain text). */
      procedure: { type: jspsych.ParameterType.STRING, default: undefined },
      /** The inputs line, e.g. "x = 5, y = 8" (plain text). */
      inputs: { type: jspsych.ParameterType.STRING, default: undefined },
      /** Instruction above the procedure (plain text). */
      prompt: {
        type: jspsych.ParameterType.STRING,
        default: "Work through the steps in order. What value does the procedure return?",
      },
      /** Label before the answer box. */
      answer_label: { type: jspsych.ParameterType.STRING, default: "Returned value:" },
      /** Variables to ask for on the way (boxes before the answer box); none by default. */
      probe_variables: {
        type: jspsych.ParameterType.STRING,
        array: true,
        default: [],
      },
      /** Shown when the answer box is submitted empty. */
      empty_message: { type: jspsych.ParameterType.STRING, default: "Type a value first." },
      ...helpers.timedResponseParameters(jspsych.ParameterType, {
        duration: 240000,
        maxLength: 40,
      }),
    },
    data: {
      /** `response`: the returned value as typed; `rt`: from procedure onset. */
      ...helpers.timedResponseData(jspsych.ParameterType),
      /** Each probed variable's value as typed ("" where left empty); {} without probes. */
      intermediates: { type: jspsych.ParameterType.OBJECT },
      /** "key" (ENTER) or "button" (null after a timeout). */
      input: { type: jspsych.ParameterType.STRING },
      /** Number of steps shown (lines starting "Step "). */
      steps_shown: { type: jspsych.ParameterType.INT },
    },
  };

  function box(id, label, maxLength) {
    const row = document.createElement("label");
    row.className = "tt-arith-row";
    const name = document.createElement("span");
    name.className = "tt-arith-label";
    name.textContent = label;
    const input = helpers.answerBox(id, maxLength);
    input.setAttribute("inputmode", "text");
    row.append(name, input);
    return { row, input };
  }

  function stepsShown(procedure) {
    return procedure.split("\n").filter((line) => line.startsWith("Step ")).length;
  }

  class ArithmeticProcedurePlugin {
    constructor(jsPsych) {
      this.jsPsych = jsPsych;
    }

    trial(display_element, trial) {
      const root = helpers.responseScreen("tt-arithmetic", trial);
      const procedure = document.createElement("pre");
      procedure.className = "tt-procedure";
      procedure.textContent = trial.procedure;
      const inputs = helpers.paragraph("tt-inputs", "Inputs: " + trial.inputs);
      root.append(procedure, inputs);
      const probes = trial.probe_variables.map((name, index) => {
        const { row, input } = box("tt-probe-" + index, name + " =", trial.max_length);
        root.appendChild(row);
        return { name, input };
      });
      const answer = box("tt-answer", trial.answer_label, trial.max_length);
      answer.input.setAttribute("aria-label", "the returned value");
      root.appendChild(answer.row);
      const button = trial.button_label ? helpers.submitButton(trial.button_label) : null;
      if (button) root.appendChild(button);
      const message = helpers.hintLine();
      root.appendChild(message);
      display_element.replaceChildren(root);
      (probes.length ? probes[0].input : answer.input).focus();

      const typedIntermediates = () =>
        Object.fromEntries(
          probes.map(({ name, input }) => [name, helpers.cleanedAnswer(input.value)]),
        );
      const finish = helpers.startTimedTrial(this.jsPsych, trial, {
        record: (start, response, how) => ({
          ...helpers.answerData(response, start),
          intermediates: typedIntermediates(),
          input: response === null ? null : how,
          steps_shown: stepsShown(trial.procedure),
        }),
      });
      probes.forEach(({ input }, index) => {
        helpers.onEnter(input, () =>
          (index + 1 < probes.length ? probes[index + 1].input : answer.input).focus(),
        );
      });
      helpers.submitTypedAnswer({
        input: answer.input,
        button,
        message,
        emptyMessage: trial.empty_message,
        finish,
      });
    }

    simulate(trial, simulation_mode, simulation_options, load_callback) {
      helpers.simulateTrial(this, trial, simulation_mode, simulation_options, load_callback, (display, data) => {
        // The intermediate values are typed even where the answer comes too late: a timeout
        // records what was typed by then.
        trial.probe_variables.forEach((name, index) => {
          display.querySelector("#tt-probe-" + index).value = data.intermediates[name] ?? "";
        });
        if (!data.timed_out) {
          helpers.typeAnswerLater(this.jsPsych, display.querySelector("#tt-answer"), data.response, data.rt);
        }
      });
    }

    createSimulationData(trial, simulation_options) {
      // About 6 s a step, as a person working without a calculator might take.
      const steps = stepsShown(trial.procedure);
      const rt = this.jsPsych.randomization.sampleExGaussian(6000 * steps, 1500, 1 / 4000, true);
      const intermediates = Object.fromEntries(trial.probe_variables.map((name) => [name, "0"]));
      const data = this.jsPsych.pluginAPI.mergeSimulationData(
        {
          response: "0",
          intermediates: intermediates,
          rt: rt,
          timed_out: false,
          input: "key",
          steps_shown: steps,
        },
        simulation_options
      );
      helpers.simulatedTimeout(data, trial.trial_duration, ["input"]);
      return data;
    }
  }
  ArithmeticProcedurePlugin.info = info;

  return ArithmeticProcedurePlugin;
})(jsPsychModule);
