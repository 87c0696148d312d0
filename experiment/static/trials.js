/**
 * One trial of the tracktale study as a piece of the jsPsych timeline.
 *
 * The page knows only the outline of the session (position, block, task, role). When a trial
 * starts, its content (story, question, options) is asked from the server (`/api/serve`),
 * which records when it served it; then the story, the question, and after the answer either
 * the practice feedback (the server's verdict, from its reply to the answer) or, when a main
 * trial's time ran out, a short notice. Every answer goes into the persistent outbox at once.
 */
/* exported TracktaleTrials */
var TracktaleTrials = (function () {
  "use strict";

  const { randomId, sleep } = TracktaleOutbox;
  const FEEDBACK_WAIT_MS = 10000;

  /**
   * The page's texts: `config.texts`, the study's locale catalogue (experiment/locales/), with
   * `{name}` placeholders filled. `text(key, values)`, `list(key, values)` (paragraphs) and
   * `plural(key, n, values)` (the language's plural rules, `{n}` written as it writes numbers);
   * `reason(data, status)` says why the server refused something: the catalogue's words for the
   * refusal's `reason`, else the server's own message on an English page, else the status.
   */
  function makeTexts(config) {
    const texts = config.texts || {};
    const language = config.language || "en";
    const english = language === "en" || language.startsWith("en-");
    const rules = new Intl.PluralRules(language);
    const numbers = new Intl.NumberFormat(language, { useGrouping: false, maximumFractionDigits: 3 });
    const nouns = config.nouns || {};
    const named = { Noun: nouns.title, noun: nouns.singular, nouns: nouns.plural };
    function lookup(key) {
      if (!(key in texts)) {
        console.error("tracktale: the catalogue has no text " + key);
        return key;
      }
      return texts[key];
    }
    function fill(text, values) {
      const given = { ...named, ...(values || {}) };
      return String(text).replace(/\{([A-Za-z_]+)\}/g, (match, name) =>
        name in given && given[name] !== undefined ? String(given[name]) : match
      );
    }
    return {
      text: (key, values) => fill(lookup(key), values),
      list: (key, values) => [].concat(lookup(key)).map((text) => fill(text, values)),
      plural: (key, n, values) => {
        const forms = lookup(key);
        return fill(forms[rules.select(n)] || forms.other, { n: numbers.format(n), ...values });
      },
      reason: (data, status) => {
        const reason = data && data.reason;
        // A reason may be worded per participant status ("closed" after completion or return).
        const precise = reason && data.participant_status && "errors." + reason + "_" + data.participant_status;
        if (precise && precise in texts) return fill(texts[precise], { status });
        if (reason && "errors." + reason in texts) return fill(texts["errors." + reason], { status });
        if (english && data && data.error) return data.error;
        return fill(lookup("errors.http"), { status });
      },
    };
  }

  function escapeHtml(text) {
    const div = document.createElement("div");
    div.textContent = text === null || text === undefined ? "" : String(text);
    return div.innerHTML;
  }

  /**
   * The "Story 12 of 46" line and bar at the top of the page (`page.progress`), over the test
   * trials only: practice is not counted (the consent says "46 stories (plus 4 practice)"),
   * and the line is hidden on practice trials and on the screens between trials.
   */
  class Progress {
    constructor(element, trials, texts) {
      this.element = element;
      this.texts = texts;
      this.positions = new Map();
      (trials || [])
        .filter((trial) => trial.role !== "practice")
        .forEach((trial, position) => this.positions.set(trial.index, position + 1));
      this.total = this.positions.size;
    }

    /** Show the position of the trial `index` (hidden for a practice trial). */
    show(index) {
      const position = this.positions.get(index);
      if (!this.element || !this.total || position === undefined) {
        this.hide();
        return;
      }
      this.element.hidden = false;
      this.element.replaceChildren();
      const label = document.createElement("span");
      label.textContent = this.texts.text("page.progress", { position: position, total: this.total });
      const bar = document.createElement("span");
      bar.className = "tt-progress-bar";
      const fill = document.createElement("span");
      fill.className = "tt-progress-fill";
      fill.style.width = Math.round((100 * (position - 1)) / this.total) + "%";
      bar.appendChild(fill);
      this.element.append(label, bar);
      this.element.setAttribute("aria-label", label.textContent);
    }

    hide() {
      if (this.element) this.element.hidden = true;
    }
  }

  /** Counts focus changes during a trial and turns its data into the answer's body. */
  class TrialRecorder {
    constructor(outbox) {
      this.outbox = outbox;
      this.blurs = 0;
      this.hides = 0;
      window.addEventListener("blur", () => { this.blurs += 1; });
      document.addEventListener("visibilitychange", () => {
        if (document.visibilityState === "hidden") this.hides += 1;
      });
    }

    begin() {
      this.blurs = 0;
      this.hides = 0;
    }

    /** Queue the answer; returns the promise of the server's reply. */
    finish(slot, data) {
      const trial = slot.trial;
      const reading = slot.reading;
      const response = trial.task === "explicit" ? data.response : data.choice;
      const body = {
        client_trial_id: randomId().replace(/[^A-Za-z0-9_-]/g, ""),
        trial_index: trial.index,
        item_id: trial.item_id,
        task: trial.task,
        response: data.timed_out ? null : response,
        timed_out: Boolean(data.timed_out),
        reading_time_ms: reading.reading_time_ms,
        reading_timed_out: Boolean(reading.timed_out),
        response_time_ms: data.timed_out ? null : data.rt,
        screen_width: Math.round(window.innerWidth),
        screen_height: Math.round(window.innerHeight),
        blur_count: this.blurs,
        hidden_count: this.hides,
        intermediates: probedValues(data.intermediates),
      };
      // A story read word by word: its words go with the answer, stored once with it.
      if (slot.words && slot.words.length) body.words = slot.words;
      return this.outbox.add("/api/trials", body, { kind: "trial", index: trial.index });
    }
  }

  /** Typed intermediate values ({S3: "12"}) as the server stores them, or null without any. */
  function probedValues(values) {
    const names = values ? Object.keys(values) : [];
    if (!names.length) return null;
    return JSON.stringify(names.map((name) => ({ variable: name, value: values[name] })));
  }

  function feedbackHtml(slot, texts) {
    const reply = slot.reply;
    const feedback = reply && reply.feedback;
    let verdict;
    let detail;
    if (!feedback) {
      verdict = texts.text(slot.timedOut ? "feedback.timed_out" : "feedback.saved");
      detail = texts.text("feedback.unchecked");
    } else {
      verdict = texts.text(
        feedback.timed_out ? "feedback.timed_out" : feedback.correct ? "feedback.correct" : "feedback.wrong"
      );
      detail =
        feedback.detail ||
        ("answer" in feedback
          ? texts.text("feedback.answer", { answer: feedback.answer })
          : texts.text("feedback." + feedback.good_side + "_continues"));
    }
    return (
      '<div class="tt-screen tt-feedback"><p class="tt-verdict">' + escapeHtml(verdict) +
      "</p><p>" + escapeHtml(detail) + "</p></div>"
    );
  }

  /** Waits for the server's verdict on a practice answer (at most FEEDBACK_WAIT_MS). */
  function awaitVerdict(slot, jsPsych, texts) {
    return {
      type: jsPsychCallFunction,
      async: true,
      func: (done) => {
        const element = jsPsych.getDisplayElement();
        element.innerHTML =
          '<div class="tt-screen tt-message"><p>' + escapeHtml(texts.text("trial.checking")) + "</p></div>";
        Promise.race([slot.replyPromise, sleep(FEEDBACK_WAIT_MS).then(() => null)]).then(
          (reply) => {
            slot.reply = reply;
            done();
          }
        );
      },
    };
  }

  function probeNode(outline, slot, context) {
    const { config, recorder, texts } = context;
    const timing = config.timing;
    const keys = config.instructions.keys;
    const finish = (data) => {
      slot.timedOut = Boolean(data.timed_out);
      slot.replyPromise = recorder.finish(slot, data);
    };
    const plugin = config.trial_plugins && config.trial_plugins[outline.task];
    if (plugin) {
      // A paradigm's own response screen: its parameters come with the served trial.
      return {
        type: window[plugin],
        ...Object.fromEntries(
          Object.entries(window[plugin].info.parameters).map(([name, spec]) => [
            name,
            () => {
              const given = slot.trial.parameters || {};
              return name in given ? given[name] : spec.default;
            },
          ])
        ),
        trial_duration: timing.response_ms,
        data: { tt_screen: outline.task, tt_index: outline.index },
        on_finish: finish,
      };
    }
    if (outline.task === "explicit") {
      return {
        type: jsPsychTimedTextResponse,
        probe: () => slot.trial.probe,
        // A study's instructions may word the line above the box and the empty-box hint.
        prompt: config.instructions.typed_prompt || texts.text("trial.typed_prompt"),
        empty_message: config.instructions.empty_answer || texts.text("trial.empty_answer"),
        button_label: texts.text("buttons.submit"),
        answer_label: texts.text("trial.answer_label"),
        trial_duration: timing.response_ms,
        data: { tt_screen: "explicit", tt_index: outline.index },
        on_finish: finish,
      };
    }
    return {
      type: jsPsychTimedChoice,
      question: () => slot.trial.probe,
      options: () => slot.trial.options,
      // Two options take the left and right keys; a study may serve its own (one per option).
      keys: () => slot.trial.keys || [keys.left, keys.right],
      button_label: texts.text("buttons.choose"),
      trial_duration: timing.response_ms,
      data: { tt_screen: outline.task, tt_index: outline.index },
      on_finish: finish,
    };
  }

  /** The reading screen(s): one text, or a served trial's `screens` one after another. */
  function readingNode(outline, slot, context) {
    const { config, recorder, progress, texts } = context;
    const screens = () => slot.trial.screens || [slot.trial.story];
    const node = {
      type: jsPsychTimedReading,
      text: () => screens()[slot.screen],
      // The screens of a trial share its reading time.
      trial_duration: () => config.timing.reading_ms - slot.readMs,
      continue_key: config.instructions.keys.continue,
      prompt: config.reading_prompt,
      button_label: texts.text("buttons.continue"),
      data: { tt_screen: "reading", tt_index: outline.index },
      on_start: () => {
        if (slot.screen === 0) {
          recorder.begin();
          progress.show(outline.index);
        }
      },
      on_finish: (data) => {
        slot.readMs += data.reading_time_ms;
        slot.screen += 1;
        slot.reading = {
          reading_time_ms: Math.round(slot.readMs * 10) / 10,
          timed_out: Boolean(data.timed_out),
        };
      },
    };
    return {
      timeline: [node],
      loop_function: () => !slot.reading.timed_out && slot.screen < screens().length,
    };
  }

  /**
   * The story read word by word (a study's `reading_mode`: `self_paced` or `maze`), with the
   * served trial's `words`, `regions`, `step` (and the Maze's `distractors`, `seed` and `redo`), the
   * hints from the catalogue (`trial.spr_prompt`, ...). Each word's record goes with the trial's
   * answer (`slot.words`); the reading time is the screen's.
   */
  function wordsNode(outline, slot, context) {
    const { config, recorder, progress, texts } = context;
    const maze = config.reading_mode === "maze";
    const given = (name, fallback) => () => (slot.trial[name] === undefined ? fallback : slot.trial[name]);
    const mazeKeys = ["e", "i"];
    const mazeParameters = {
      distractors: given("distractors", []),
      seed: given("seed", 1),
      redo: given("redo", false),
      keys: mazeKeys,
      prompt: texts.text("trial.maze_prompt", { left: mazeKeys[0].toUpperCase(), right: mazeKeys[1].toUpperCase() }),
      error_message: texts.text("trial.maze_error"),
    };
    // A served text may read a region a press (`step`); the hint says which.
    const sprParameters = {
      step: given("step", "word"),
      prompt: () => texts.text(slot.trial.step === "region" ? "trial.spr_region_prompt" : "trial.spr_prompt"),
    };
    return {
      type: maze ? jsPsychMaze : jsPsychSelfPacedReading,
      words: given("words", []),
      regions: given("regions", []),
      ...(maze ? mazeParameters : sprParameters),
      trial_duration: config.timing.reading_ms,
      data: { tt_screen: "reading", tt_index: outline.index },
      on_start: () => {
        recorder.begin();
        progress.show(outline.index);
        slot.readStart = performance.now();
      },
      on_finish: (data) => {
        const mode = config.reading_mode;
        slot.words = data.words.map((word) => ({ ...word, mode: mode }));
        // The whole time on the screen, as for a story on one screen (the server checks it).
        const onScreen = Math.round((performance.now() - slot.readStart) * 10) / 10;
        slot.reading = {
          reading_time_ms: Math.min(onScreen, config.timing.reading_ms),
          timed_out: Boolean(data.timed_out),
        };
      },
    };
  }

  /**
   * The timeline of one trial.
   *
   * @param outline {index, block, task, role} from the session.
   * @param flow `serve(index)` resolving with the trial's content, or null to skip it.
   */
  function trialTimeline(outline, context) {
    const { config, flow, jsPsych, texts } = context;
    const slot = {
      trial: null,
      reading: null,
      screen: 0,
      readMs: 0,
      readStart: 0,
      words: null,
      timedOut: false,
      reply: null,
      replyPromise: null,
    };
    const serve = {
      type: jsPsychCallFunction,
      async: true,
      func: (done) => {
        flow.serve(outline.index).then((trial) => {
          slot.trial = trial;
          done();
        });
      },
    };
    const reading = config.reading_mode ? wordsNode : readingNode;
    const shown = [reading(outline, slot, context), probeNode(outline, slot, context)];
    if (outline.role === "practice") {
      shown.push(awaitVerdict(slot, jsPsych, texts), {
        type: jsPsychHtmlButtonResponse,
        stimulus: () => feedbackHtml(slot, texts),
        choices: [texts.text("buttons.continue")],
        trial_duration: config.timing.feedback_ms,
        data: { tt_screen: "feedback", tt_index: outline.index },
      });
    } else if (config.timeout_notice_ms > 0) {
      shown.push({
        timeline: [
          {
            type: jsPsychHtmlButtonResponse,
            stimulus:
              '<div class="tt-screen tt-message tt-timeout">' +
              texts.list("trial.timeout_notice").map((line) => "<p>" + escapeHtml(line) + "</p>").join("") +
              "</div>",
            choices: [],
            trial_duration: config.timeout_notice_ms,
            data: { tt_screen: "timeout-notice", tt_index: outline.index },
          },
        ],
        conditional_function: () => slot.timedOut,
      });
    }
    return {
      timeline: [serve, { timeline: shown, conditional_function: () => slot.trial !== null }],
    };
  }

  return {
    makeTexts: makeTexts,
    Progress: Progress,
    TrialRecorder: TrialRecorder,
    trialTimeline: trialTimeline,
    escapeHtml: escapeHtml,
  };
})();
