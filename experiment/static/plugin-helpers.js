/**
 * What the tracktale jsPsych plugins (plugins/*.js) share, loaded before them.
 *
 * - `timerBar(duration)`: the bar that shrinks as a trial's time runs out (study.css animates
 *   it over `duration` ms);
 * - `finishOnce(finish)`: a trial can be ended by a key, a click and its time limit at nearly
 *   the same moment; only the first of them may end it, or jsPsych would record two trials;
 * - `elapsedMs(start)`: milliseconds since a `performance.now()` reading, to 0.1 ms, as every
 *   plugin records its times;
 * - `timedResponseParameters(ParameterType, defaults)` and `timedResponseData(ParameterType)`:
 *   the parameters and data fields of every plugin that takes an answer within a time limit,
 *   spread into its jsPsych 8 `info` beside its own;
 * - `responseScreen(kind, trial)`, `submitButton(label)`, `hintLine()`: the parts of such a
 *   plugin's screen; `answerData(response, start)`: the data fields it records;
 *   `cleanedAnswer(text)`: a typed answer as the server reads it.
 */
/* exported TracktalePluginHelpers */
var TracktalePluginHelpers = (function () {
  "use strict";

  function timerBar(duration) {
    const bar = document.createElement("div");
    bar.className = "tt-timer";
    const fill = document.createElement("div");
    fill.className = "tt-timer-fill";
    fill.style.animationDuration = duration + "ms";
    bar.appendChild(fill);
    return bar;
  }

  function finishOnce(finish) {
    let finished = false;
    return (...args) => {
      if (finished) return;
      finished = true;
      finish(...args);
    };
  }

  function elapsedMs(start) {
    return Math.round((performance.now() - start) * 10) / 10;
  }

  /**
   * The parameters of a timed answer (spread into `info.parameters`): `trial_duration`, the
   * longest time to answer in ms (`duration` is the plugin's default); `button_label`, the
   * submit button's label (null: no button, ENTER only, where the plugin takes ENTER);
   * `show_timer`, a bar that shrinks as the time runs out; and, where the plugin has text
   * boxes (`maxLength` given), `max_length`, the longest answer each box accepts.
   */
  function timedResponseParameters(ParameterType, { duration, maxLength }) {
    const parameters = {
      trial_duration: { type: ParameterType.INT, default: duration },
      button_label: { type: ParameterType.STRING, default: "Submit" },
      show_timer: { type: ParameterType.BOOL, default: true },
    };
    if (maxLength !== undefined) {
      parameters.max_length = { type: ParameterType.INT, default: maxLength };
    }
    return parameters;
  }

  /**
   * The data fields of a timed answer (spread into `info.data`): `response`, the answer as the
   * plugin records it; `rt`, ms from the moment the task is on screen to the submission;
   * `timed_out`, the time ran out first (then `response` and `rt` are null).
   */
  function timedResponseData(ParameterType) {
    return {
      response: { type: ParameterType.STRING },
      rt: { type: ParameterType.FLOAT },
      timed_out: { type: ParameterType.BOOL },
    };
  }

  /**
   * A response screen's root, `div.tt-screen.<kind>`, holding the time bar (when
   * `trial.show_timer`, over `trial.trial_duration`) and `trial.prompt` (`p.tt-prompt`, as text).
   */
  function responseScreen(kind, trial) {
    const root = document.createElement("div");
    root.className = "tt-screen " + kind;
    if (trial.show_timer) root.appendChild(timerBar(trial.trial_duration));
    const prompt = document.createElement("p");
    prompt.className = "tt-prompt";
    prompt.textContent = trial.prompt;
    root.appendChild(prompt);
    return root;
  }

  /** The submit button, `button.jspsych-btn.tt-submit`, labelled `label`. */
  function submitButton(label) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "jspsych-btn tt-submit";
    button.textContent = label;
    return button;
  }

  /** The line for hints such as "Type a word first." (`p.tt-hint`, read out by screen readers). */
  function hintLine() {
    const message = document.createElement("p");
    message.className = "tt-hint";
    message.setAttribute("role", "status");
    return message;
  }

  /** `response`, `rt` (ms since `start`) and `timed_out`; a `null` response is a timeout. */
  function answerData(response, start) {
    return {
      response: response,
      rt: response === null ? null : elapsedMs(start),
      timed_out: response === null,
    };
  }

  /**
   * A typed answer trimmed as the server strips it (Python's whitespace includes U+001C-U+001F
   * and U+0085, which String.trim keeps), so that the page refuses every blank answer the server
   * would refuse; lone surrogates (broken pasted text) become U+FFFD.
   */
  function cleanedAnswer(text) {
    // eslint-disable-next-line no-control-regex -- the control characters are the point
    const trimmed = text.replace(/^[\s\x1c-\x1f\x85]+|[\s\x1c-\x1f\x85]+$/g, "");
    return typeof trimmed.toWellFormed === "function" ? trimmed.toWellFormed() : trimmed;
  }

  return {
    timerBar,
    finishOnce,
    elapsedMs,
    timedResponseParameters,
    timedResponseData,
    responseScreen,
    submitButton,
    hintLine,
    answerData,
    cleanedAnswer,
  };
})();
