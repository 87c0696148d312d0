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
 * - `screenRoot(kind, trial)`, `paragraph(className, text)`: every screen's root and texts;
 * - `responseScreen(kind, trial)`, `submitButton(label)`, `hintLine()`: the parts of such a
 *   plugin's screen; `answerData(response, start)`: the data fields it records;
 *   `cleanedAnswer(text)`: a typed answer as the server reads it;
 * - `keyPressParameters(ParameterType, defaults)`: the parameters of a screen a key press ends;
 * - `startTimedTrial(jsPsych, trial, how)`: a trial's clock, its time limit, its key listener
 *   and its finish-once guard, as every plugin starts them once its screen is drawn;
 * - `answerBox(id, maxLength)`, `onEnter(input, action)`, `submitTypedAnswer(parts)`: a text
 *   box for a typed answer and how ENTER and the submit button hand it in;
 * - `simulateTrial(...)`, `simulatedTimeout(data, duration, alsoNull)`, `typeAnswerLater(...)`:
 *   the frame of every plugin's jsPsych 8 `simulate()`.
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
      show_timer: showTimerParameter(ParameterType),
    };
    if (maxLength !== undefined) {
      parameters.max_length = { type: ParameterType.INT, default: maxLength };
    }
    return parameters;
  }

  /** `show_timer`: a bar that shrinks as the time runs out (shown by default). */
  function showTimerParameter(ParameterType) {
    return { type: ParameterType.BOOL, default: true };
  }

  /**
   * The parameters of a screen a key press ends (spread last into `info.parameters`):
   * `minimum_ms`, key presses earlier than this are ignored (a key still held from the screen
   * before; `minimumMs` is the plugin's default), and `show_timer`.
   */
  function keyPressParameters(ParameterType, { minimumMs }) {
    return {
      minimum_ms: { type: ParameterType.INT, default: minimumMs },
      show_timer: showTimerParameter(ParameterType),
    };
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
   * A screen's root, `div.tt-screen.<kind>`, holding the time bar when `trial.show_timer` (over
   * `trial.trial_duration`).
   */
  function screenRoot(kind, trial) {
    const root = document.createElement("div");
    root.className = "tt-screen " + kind;
    if (trial.show_timer) root.appendChild(timerBar(trial.trial_duration));
    return root;
  }

  /** `p.<className>` showing `text` as text (stimuli are never put on the page as markup). */
  function paragraph(className, text) {
    const line = document.createElement("p");
    line.className = className;
    line.textContent = text;
    return line;
  }

  /** A response screen: `screenRoot(kind, trial)` with `trial.prompt` (`p.tt-prompt`) in it. */
  function responseScreen(kind, trial) {
    const root = screenRoot(kind, trial);
    root.appendChild(paragraph("tt-prompt", trial.prompt));
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
    const message = paragraph("tt-hint", "");
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

  /**
   * Starts a trial whose screen is drawn: its clock (now), its time limit and, where `keys` is
   * given, one key press (`trial.minimum_ms` at the earliest, a key held from before ignored).
   * Returns `finish(...args)`, which ends the trial once, whatever ends it first, with the data
   * `record(start, ...args)` returns (`start`: the clock's `performance.now()` reading); the
   * key listener is cancelled first. The time limit calls `finish(...timeoutArgs)` (default
   * `null, null`); a key press `finish(...onKey(info))` (`info`: jsPsych's key and rt).
   */
  function startTimedTrial(jsPsych, trial, { record, keys, onKey, timeoutArgs = [null, null] }) {
    const start = performance.now();
    let listener = null;
    const finish = finishOnce((...args) => {
      if (listener) jsPsych.pluginAPI.cancelKeyboardResponse(listener);
      jsPsych.finishTrial(record(start, ...args));
    });
    if (keys) {
      listener = jsPsych.pluginAPI.getKeyboardResponse({
        callback_function: (info) => finish(...onKey(info)),
        valid_responses: keys,
        persist: false,
        allow_held_key: false,
        minimum_valid_rt: trial.minimum_ms,
      });
    }
    jsPsych.pluginAPI.setTimeout(() => finish(...timeoutArgs), trial.trial_duration);
    return finish;
  }

  /**
   * A text box for a typed answer, `input#<id>.tt-answer`, taking at most `maxLength`
   * characters, with the browser's autocomplete, spell checking and capitalisation off (they
   * would change what the participant typed).
   */
  function answerBox(id, maxLength) {
    const input = document.createElement("input");
    input.type = "text";
    input.id = id;
    input.className = "tt-answer";
    input.autocomplete = "off";
    input.spellcheck = false;
    input.setAttribute("autocapitalize", "off");
    input.maxLength = maxLength;
    return input;
  }

  /** Runs `action()` when ENTER is pressed in `input`, instead of what ENTER would do there. */
  function onEnter(input, action) {
    input.addEventListener("keydown", (event) => {
      if (event.key !== "Enter") return;
      event.preventDefault();
      action();
    });
  }

  /**
   * ENTER in `input` ("key") and a click on `button` ("button"; null: no button) hand in the
   * typed answer: `finish(answer, how)` with the answer as `cleanedAnswer` leaves it; a blank
   * one is refused with `emptyMessage` in `message`, and the focus goes back to `input`.
   */
  function submitTypedAnswer({ input, button, message, emptyMessage, finish }) {
    const submit = (how) => {
      const value = cleanedAnswer(input.value);
      if (value) finish(value, how);
      else {
        message.textContent = emptyMessage;
        input.focus();
      }
    };
    onEnter(input, () => submit("key"));
    if (button) button.addEventListener("click", () => submit("button"));
  }

  /**
   * A plugin's `simulate()`: the data its `createSimulationData` makes, recorded at once in
   * "data-only" mode. In "visual" mode the real screen is drawn and `onScreen(display_element,
   * data)` acts on it as the simulated participant (leaving it alone where `data.timed_out`, so
   * the screen's own time limit ends it); the screen then records what it measures.
   */
  function simulateTrial(plugin, trial, simulation_mode, simulation_options, load_callback, onScreen) {
    const data = plugin.createSimulationData(trial, simulation_options);
    if (simulation_mode === "visual") {
      const display_element = plugin.jsPsych.getDisplayElement();
      plugin.trial(display_element, trial);
      load_callback();
      onScreen(display_element, data);
      return;
    }
    load_callback();
    plugin.jsPsych.finishTrial(data);
  }

  /**
   * Whether simulated answer `data` came too late (no `rt`, or not within `duration` ms); if so
   * it becomes what the screen records after a timeout: `response` and `rt` null, `timed_out`
   * true, and each field named in `alsoNull` null.
   */
  function simulatedTimeout(data, duration, alsoNull) {
    const late = data.rt === null || data.rt >= duration;
    if (!late) return false;
    Object.assign(data, { response: null, rt: null, timed_out: true });
    for (const name of alsoNull) data[name] = null;
    return true;
  }

  /** After `rt` ms, types `text` into `input` and presses ENTER there (a simulated answer). */
  function typeAnswerLater(jsPsych, input, text, rt) {
    jsPsych.pluginAPI.setTimeout(() => {
      input.value = text;
      input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    }, rt);
  }

  return {
    timerBar,
    finishOnce,
    elapsedMs,
    timedResponseParameters,
    timedResponseData,
    screenRoot,
    paragraph,
    responseScreen,
    submitButton,
    hintLine,
    answerData,
    cleanedAnswer,
    keyPressParameters,
    startTimedTrial,
    answerBox,
    onEnter,
    submitTypedAnswer,
    simulateTrial,
    simulatedTimeout,
    typeAnswerLater,
  };
})();
