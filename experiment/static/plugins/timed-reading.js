/**
 * jsPsych plugin: a text to read, for at most `trial_duration` ms.
 *
 * The participant ends the screen with `continue_key` or the button; when the time runs out
 * the trial ends by itself with `timed_out: true`. Reading time is measured with
 * performance.now() from the moment the text is on screen. The text is inserted as text
 * (never as HTML), in its own direction (`dir="auto"`: a Hebrew text on an English page too).
 */
/* exported jsPsychTimedReading */
var jsPsychTimedReading = (function (jspsych) {
  "use strict";

  const helpers = TracktalePluginHelpers;

  const info = {
    name: "timed-reading",
    version: "1.0.0",
    parameters: {
      /** The text to read (plain text; shown as is). */
      text: { type: jspsych.ParameterType.STRING, default: undefined },
      /** Longest reading time in ms; the trial ends by itself after it. */
      trial_duration: { type: jspsych.ParameterType.INT, default: 40000 },
      /** Key that ends the screen early. */
      continue_key: { type: jspsych.ParameterType.KEY, default: " " },
      /** Label of the button that ends the screen early. */
      button_label: { type: jspsych.ParameterType.STRING, default: "Continue" },
      /** Hint below the text. */
      prompt: {
        type: jspsych.ParameterType.STRING,
        default: "Press SPACE or click Continue when you have read the story.",
      },
      ...helpers.keyPressParameters(jspsych.ParameterType, { minimumMs: 300 }),
    },
    data: {
      /** Time on the screen in ms (the limit when it timed out). */
      reading_time_ms: { type: jspsych.ParameterType.FLOAT },
      /** The time ran out before the participant continued. */
      timed_out: { type: jspsych.ParameterType.BOOL },
      /** How the screen ended: "key", "button" or "timeout". */
      ended_by: { type: jspsych.ParameterType.STRING },
    },
  };

  class TimedReadingPlugin {
    constructor(jsPsych) {
      this.jsPsych = jsPsych;
    }

    trial(display_element, trial) {
      const root = helpers.screenRoot("tt-reading", trial);
      const story = helpers.paragraph("tt-story", trial.text);
      story.dir = "auto";
      const button = document.createElement("button");
      button.className = "jspsych-btn tt-continue";
      button.type = "button";
      button.textContent = trial.button_label;
      const hint = helpers.paragraph("tt-hint", trial.prompt);
      root.append(story, button, hint);
      display_element.replaceChildren(root);

      const finish = helpers.startTimedTrial(this.jsPsych, trial, {
        record: (start, endedBy) => ({
          reading_time_ms: helpers.elapsedMs(start),
          timed_out: endedBy === "timeout",
          ended_by: endedBy,
        }),
        keys: [trial.continue_key],
        onKey: () => ["key"],
        timeoutArgs: ["timeout"],
      });
      button.addEventListener("click", () => finish("button"));
    }

    simulate(trial, simulation_mode, simulation_options, load_callback) {
      helpers.simulateTrial(this, trial, simulation_mode, simulation_options, load_callback, (_, data) => {
        if (!data.timed_out) {
          this.jsPsych.pluginAPI.pressKey(trial.continue_key, data.reading_time_ms);
        }
      });
    }

    createSimulationData(trial, simulation_options) {
      // About 4 words a second plus orientation time, as a careful reader.
      const words = String(trial.text).split(/\s+/).length;
      const sampled = this.jsPsych.randomization.sampleExGaussian(words * 250 + 1500, 400, 1 / 800, true);
      const data = this.jsPsych.pluginAPI.mergeSimulationData(
        { reading_time_ms: sampled, timed_out: false, ended_by: "key" },
        simulation_options
      );
      if (data.reading_time_ms >= trial.trial_duration) {
        data.reading_time_ms = trial.trial_duration;
        data.timed_out = true;
        data.ended_by = "timeout";
      }
      return data;
    }
  }
  TimedReadingPlugin.info = info;

  return TimedReadingPlugin;
})(jsPsychModule);
