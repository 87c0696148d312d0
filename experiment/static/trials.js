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

  function escapeHtml(text) {
    const div = document.createElement("div");
    div.textContent = text === null || text === undefined ? "" : String(text);
    return div.innerHTML;
  }

  /** The "Story 12 of 50" line and bar at the top of the page ("Puzzle" for boxes). */
  class Progress {
    constructor(element, total, noun) {
      this.element = element;
      this.total = total;
      this.noun = noun || "Story";
    }

    show(position) {
      if (!this.element || !this.total) return;
      this.element.hidden = false;
      this.element.replaceChildren();
      const label = document.createElement("span");
      label.textContent = this.noun + " " + position + " of " + this.total;
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
      return this.outbox.add("/api/trials", body, { kind: "trial", index: trial.index });
    }
  }

  /** Typed intermediate values ({S3: "12"}) as the server stores them, or null without any. */
  function probedValues(values) {
    const names = values ? Object.keys(values) : [];
    if (!names.length) return null;
    return JSON.stringify(names.map((name) => ({ variable: name, value: values[name] })));
  }

  function feedbackHtml(slot) {
    const reply = slot.reply;
    const feedback = reply && reply.feedback;
    let verdict;
    let detail;
    if (!feedback) {
      verdict = slot.timedOut ? "Time is up." : "Your answer is saved.";
      detail = "It could not be checked just now; the study goes on.";
    } else {
      verdict = feedback.timed_out ? "Time is up." : feedback.correct ? "Correct!" : "Not quite.";
      detail =
        feedback.detail ||
        ("answer" in feedback
          ? "The answer was: " + feedback.answer + "."
          : "The " + feedback.good_side + " sentence continues the story.");
    }
    return (
      '<div class="tt-screen tt-feedback"><p class="tt-verdict">' + escapeHtml(verdict) +
      "</p><p>" + escapeHtml(detail) + "</p></div>"
    );
  }

  /** Waits for the server's verdict on a practice answer (at most FEEDBACK_WAIT_MS). */
  function awaitVerdict(slot, jsPsych) {
    return {
      type: jsPsychCallFunction,
      async: true,
      func: (done) => {
        const element = jsPsych.getDisplayElement();
        element.innerHTML = '<div class="tt-screen tt-message"><p>Checking your answer...</p></div>';
        Promise.race([slot.replyPromise, sleep(FEEDBACK_WAIT_MS).then(() => null)]).then(
          (reply) => {
            slot.reply = reply;
            done();
          }
        );
      },
    };
  }

  function probeNode(outline, slot, config, recorder) {
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
        trial_duration: timing.response_ms,
        data: { tt_screen: "explicit", tt_index: outline.index },
        on_finish: finish,
      };
    }
    return {
      type: jsPsychTimedChoice,
      question: () => slot.trial.probe,
      options: () => slot.trial.options,
      keys: [keys.left, keys.right],
      trial_duration: timing.response_ms,
      data: { tt_screen: outline.task, tt_index: outline.index },
      on_finish: finish,
    };
  }

  /**
   * The timeline of one trial.
   *
   * @param outline {index, block, task, role} from the session.
   * @param flow `serve(index)` resolving with the trial's content, or null to skip it.
   */
  function trialTimeline(outline, context) {
    const { config, flow, recorder, progress, jsPsych } = context;
    const slot = { trial: null, reading: null, timedOut: false, reply: null, replyPromise: null };
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
    const reading = {
      type: jsPsychTimedReading,
      text: () => slot.trial.story,
      trial_duration: config.timing.reading_ms,
      continue_key: config.instructions.keys.continue,
      ...(config.reading_prompt ? { prompt: config.reading_prompt } : {}),
      data: { tt_screen: "reading", tt_index: outline.index },
      on_start: () => {
        recorder.begin();
        progress.show(outline.index + 1);
      },
      on_finish: (data) => { slot.reading = data; },
    };
    const shown = [reading, probeNode(outline, slot, config, recorder)];
    if (outline.role === "practice") {
      shown.push(awaitVerdict(slot, jsPsych), {
        type: jsPsychHtmlButtonResponse,
        stimulus: () => feedbackHtml(slot),
        choices: ["Continue"],
        trial_duration: config.timing.feedback_ms,
        data: { tt_screen: "feedback", tt_index: outline.index },
      });
    } else if (config.timeout_notice_ms > 0) {
      shown.push({
        timeline: [
          {
            type: jsPsychHtmlButtonResponse,
            stimulus:
              '<div class="tt-screen tt-message tt-timeout"><p>Time is up for this question.</p>' +
              "<p>The next " + escapeHtml((config.trial_noun || "Story").toLowerCase()) + " follows.</p></div>",
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
    Progress: Progress,
    TrialRecorder: TrialRecorder,
    trialTimeline: trialTimeline,
    escapeHtml: escapeHtml,
  };
})();
