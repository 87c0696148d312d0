/**
 * The participant's session: consent, practice, trials, survey, debrief, completion.
 *
 * The server sends the participant's whole plan (the same list on every reload); this script
 * builds a jsPsych timeline from the first unanswered trial on. Every trial is queued in the
 * persistent outbox the moment it ends and sent at once; the redirect to Prolific happens only
 * after the server has acknowledged every trial and confirmed completion.
 */
(function () {
  "use strict";

  const config = JSON.parse(document.getElementById("study-config").textContent);
  const { Outbox, Store, randomId, sleep } = TracktaleOutbox;
  const params = new URLSearchParams(window.location.search);
  const target = document.getElementById("jspsych-target");
  const badge = document.getElementById("save-status");
  const keys = config.instructions.keys;

  // ----------------------------------------------------------------- small helpers

  function escapeHtml(text) {
    const div = document.createElement("div");
    div.textContent = text === null || text === undefined ? "" : String(text);
    return div.innerHTML;
  }

  function paragraphs(list) {
    return list.map((text) => "<p>" + escapeHtml(text) + "</p>").join("");
  }

  function showMessage(list, extraHtml) {
    // Once jsPsych runs, write into its display element: replacing the page's own target
    // would detach the element jsPsych draws the next trials into.
    const running = window.tracktaleStudy && window.tracktaleStudy.jsPsych;
    const element = running ? running.getDisplayElement() : target;
    element.innerHTML =
      '<div class="tt-screen tt-message">' + paragraphs(list) + (extraHtml || "") + "</div>";
  }

  function prolificParam(name) {
    const value = params.get(name);
    // Prolific's own placeholders, left unreplaced in a preview link, are not ids.
    return value && !value.includes("{") ? value : null;
  }

  /** POST with retries on network errors, 5xx and 429; resolves with {status, data}. */
  async function postJson(url, body, token) {
    for (let attempt = 0; ; attempt++) {
      try {
        const headers = { "Content-Type": "application/json" };
        if (token) headers["X-Session-Token"] = token;
        const response = await fetch(url, {
          method: "POST",
          headers: headers,
          body: JSON.stringify(body),
          cache: "no-store",
          credentials: "same-origin",
        });
        if (response.status < 500 && response.status !== 429) {
          let data = {};
          try {
            data = await response.json();
          } catch (error) {
            // an empty or non-JSON answer
          }
          return { status: response.status, data: data };
        }
      } catch (error) {
        // network down: retry below
      }
      if (attempt >= 2) showMessage(["Connecting to the server... please keep this window open."]);
      await sleep(Math.min(30000, 500 * 2 ** Math.min(attempt, 10)) * (0.5 + Math.random()));
    }
  }

  // ----------------------------------------------------------------- per-trial recording

  /** Collects one trial's reading and response data and hands it to the outbox. */
  class TrialRecorder {
    constructor(store, outbox) {
      this.store = store;
      this.outbox = outbox;
      this.restarts = store.get("restarts") || {};
      this.blurs = 0;
      this.hides = 0;
      this.current = null;
      this.last = null;
      window.addEventListener("blur", () => { this.blurs += 1; });
      document.addEventListener("visibilitychange", () => {
        if (document.visibilityState === "hidden") this.hides += 1;
      });
    }

    /** A reload in the middle of a trial shows its story again: count it. */
    noteInterrupted(done) {
      const interrupted = this.store.get("in_progress");
      if (interrupted !== null && !done.has(interrupted)) {
        this.restarts[interrupted] = (this.restarts[interrupted] || 0) + 1;
        this.store.set("restarts", this.restarts);
      }
      this.store.remove("in_progress");
    }

    begin(trial) {
      this.store.set("in_progress", trial.index);
      this.blurs = 0;
      this.hides = 0;
      this.current = { trial: trial, reading: null };
    }

    reading(data) {
      this.current.reading = data;
    }

    finish(data) {
      const trial = this.current.trial;
      const reading = this.current.reading;
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
        restarts: this.restarts[trial.index] || 0,
      };
      // Queue (persist) first, then forget the in-progress marker: a reload between the two
      // finds the trial in the outbox, never loses it.
      this.outbox.add("/api/trials", body, { kind: "trial", index: trial.index });
      this.store.remove("in_progress");
      this.last = { trial: trial, data: data };
    }
  }

  // ----------------------------------------------------------------- timeline pieces

  function infoScreen(html, label, css) {
    return {
      type: jsPsychHtmlButtonResponse,
      stimulus: '<div class="tt-screen tt-info ' + (css || "") + '">' + html + "</div>",
      choices: [label || "Continue"],
    };
  }

  function trialNodes(trial, recorder) {
    const timing = config.timing;
    const reading = {
      type: jsPsychTimedReading,
      text: trial.story,
      trial_duration: timing.reading_ms,
      continue_key: keys.continue,
      data: { tt_screen: "reading", tt_index: trial.index },
      on_start: () => recorder.begin(trial),
      on_finish: (data) => recorder.reading(data),
    };
    const probe =
      trial.task === "explicit"
        ? {
            type: jsPsychTimedTextResponse,
            probe: trial.probe,
            trial_duration: timing.response_ms,
            data: { tt_screen: "explicit", tt_index: trial.index },
            on_finish: (data) => recorder.finish(data),
          }
        : {
            type: jsPsychTimedChoice,
            question: trial.probe,
            options: trial.options,
            keys: [keys.left, keys.right],
            trial_duration: timing.response_ms,
            data: { tt_screen: trial.task, tt_index: trial.index },
            on_finish: (data) => recorder.finish(data),
          };
    const nodes = [reading, probe];
    if (trial.feedback) {
      nodes.push({
        type: jsPsychHtmlButtonResponse,
        stimulus: () => feedbackHtml(recorder.last),
        choices: ["Continue"],
        trial_duration: timing.feedback_ms,
        data: { tt_screen: "feedback", tt_index: trial.index },
      });
    }
    return { timeline: nodes };
  }

  function feedbackHtml(last) {
    const trial = last.trial;
    const data = last.data;
    let verdict;
    let detail;
    if (data.timed_out) {
      verdict = "Time is up.";
    } else if (trial.task === "explicit") {
      const answer = trial.feedback.answer.toLowerCase();
      const words = String(data.response).toLowerCase().split(/[^a-z]+/);
      verdict = words.includes(answer) ? "Correct!" : "Not quite.";
    } else {
      verdict = data.choice === trial.feedback.good_side ? "Correct!" : "Not quite.";
    }
    if (trial.task === "explicit") {
      detail = "The answer was: " + trial.feedback.answer + ".";
    } else {
      detail = "The " + trial.feedback.good_side + " sentence continues the story.";
    }
    return (
      '<div class="tt-screen tt-feedback"><p class="tt-verdict">' + escapeHtml(verdict) +
      "</p><p>" + escapeHtml(detail) + "</p></div>"
    );
  }

  function surveyScreen() {
    const genders = config.genders
      .map(
        (g, i) =>
          '<label class="tt-radio"><input type="radio" name="gender" value="' + escapeHtml(g) +
          '" required> ' + escapeHtml(g) + "</label>"
      )
      .join("");
    const yesNo = (name) =>
      '<label class="tt-radio"><input type="radio" name="' + name + '" value="yes" required> yes</label>' +
      '<label class="tt-radio"><input type="radio" name="' + name + '" value="no"> no</label>';
    const html =
      '<div class="tt-survey">' + paragraphs(config.instructions.survey) +
      '<p><label>Age in years (leave empty if you prefer not to say):<br>' +
      '<input type="number" name="age" min="18" max="120" step="1"></label></p>' +
      "<fieldset><legend>Gender</legend>" + genders + "</fieldset>" +
      '<p><label>Native language(s):<br><input type="text" name="native_language" maxlength="64" required></label></p>' +
      "<fieldset><legend>Did you pay attention to the stories throughout the study?</legend>" + yesNo("attentive") + "</fieldset>" +
      "<fieldset><legend>Did you complete the study without AI tools, notes or help from others?</legend>" + yesNo("no_ai_assistance") + "</fieldset>" +
      "</div>";
    return {
      type: jsPsychSurveyHtmlForm,
      html: html,
      button_label: "Continue",
      data: { tt_screen: "survey" },
    };
  }

  function surveyAnswers(response) {
    const age = String(response.age || "").trim();
    return {
      age: age === "" ? null : Math.round(Number(age)),
      gender: response.gender,
      native_language: String(response.native_language || "").trim().slice(0, 64),
      attentive: response.attentive === "yes",
      no_ai_assistance: response.no_ai_assistance === "yes",
    };
  }

  // ----------------------------------------------------------------- the session

  async function startSession(store, pid) {
    const body = {
      prolific_pid: pid,
      study_id: prolificParam("STUDY_ID"),
      session_id: prolificParam("SESSION_ID"),
    };
    const { status, data } = await postJson("/api/session", body, store.get("token"));
    if (status === 200) return data;
    if (status === 409 && data.participant_status === "completed") {
      showMessage(config.instructions.completed_before);
    } else {
      showMessage([data.error ? "Sorry: " + data.error + "." : "Sorry, the study cannot start."]);
    }
    return null;
  }

  /** The consent form, then its POST: declining sends the participant back to Prolific. */
  function consentNodes(session, jsPsych) {
    const form = {
      type: jsPsychHtmlButtonResponse,
      stimulus:
        '<div class="tt-screen tt-info tt-consent">' + config.consent_html +
        "<details><summary>Participant information sheet</summary>" + config.information_html +
        "</details></div>",
      choices: ["I agree", "I do not agree"],
      data: { tt_screen: "consent" },
    };
    const save = {
      type: jsPsychCallFunction,
      async: true,
      func: (finish) => {
        const agreed = jsPsych.data.get().last(1).values()[0].response === 0;
        postJson("/api/consent", { consent: agreed }, session.token).then(({ status, data }) => {
          if (!agreed && data.redirect) {
            showMessage(["You did not consent. You are being returned to Prolific."]);
            window.location.replace(data.redirect);
            return; // the timeline stays here while the browser leaves
          }
          if (status !== 200) {
            showMessage(["Sorry: " + (data.error || "the server refused the consent") + "."]);
            return;
          }
          finish();
        });
      },
    };
    return [form, save];
  }

  function buildTimeline(session, store, outbox, recorder, jsPsych) {
    const done = new Set(session.done);
    outbox.pendingTrialIndices().forEach((index) => done.add(index));
    recorder.noteInterrupted(done);
    const timeline = [];
    const remaining = session.trials.filter((trial) => !done.has(trial.index));

    if (!session.consent) timeline.push(...consentNodes(session, jsPsych));
    if (remaining.length === session.trials.length) {
      timeline.push(infoScreen(paragraphs(config.instructions.welcome), "Start"));
    } else if (remaining.length > 0) {
      timeline.push(infoScreen(paragraphs(config.instructions.resume), "Continue"));
    }
    let previousRole = null;
    session.block_formats.forEach((format, block) => {
      const blockTrials = remaining.filter((trial) => trial.block === block);
      if (blockTrials.length === 0) return;
      const practice = blockTrials.some((trial) => trial.role === "practice");
      let intro = config.instructions[format];
      if (practice) intro = ["Practice."].concat(intro);
      else if (previousRole === "practice") intro = config.instructions.main_start.concat(intro);
      timeline.push(infoScreen(paragraphs(intro), "Start", "tt-block-intro"));
      blockTrials.forEach((trial) => timeline.push(trialNodes(trial, recorder)));
      previousRole = practice ? "practice" : "main";
    });
    if (!session.survey_done && !outbox.hasPending("survey")) {
      const survey = surveyScreen();
      survey.on_finish = (data) => outbox.add("/api/survey", surveyAnswers(data.response), { kind: "survey" });
      timeline.push(survey);
    }
    timeline.push({
      type: jsPsychHtmlButtonResponse,
      stimulus: '<div class="tt-screen tt-info tt-debrief">' + config.debrief_html + "</div>",
      choices: ["Finish"],
      data: { tt_screen: "debrief" },
    });
    timeline.push({
      type: jsPsychCallFunction,
      async: true,
      func: () => complete(session, outbox),
    });
    return timeline;
  }

  async function complete(session, outbox) {
    showMessage(config.instructions.saving, '<div class="tt-spinner" aria-hidden="true"></div>');
    try {
      await outbox.drain();
    } catch (error) {
      showMessage(["This study is open in another browser window; please finish it there."]);
      return;
    }
    const { status, data } = await postJson("/api/complete", {}, session.token);
    if (status === 200 && data.redirect) {
      showMessage(["Thank you! You are being returned to Prolific."]);
      window.location.replace(data.redirect);
      return;
    }
    showMessage([
      "Sorry, not all of your answers reached our server (" + (data.error || "HTTP " + status) + ").",
      "Please reload this page to send them again; your answers are kept in this browser.",
    ]);
  }

  function showSaveState(state) {
    // Quiet while saves go through (a trial is acknowledged within milliseconds); speak up
    // only when the connection fails, so that the participant keeps the window open.
    if (!badge) return;
    badge.hidden = state.failures === 0 && !state.stopped;
    badge.textContent = state.stopped
      ? "This study is open in another window."
      : "Connection problem: your answers are kept and will be sent (" + state.pending + " waiting).";
    badge.classList.toggle("tt-warn", true);
  }

  async function main() {
    let pid = prolificParam("PROLIFIC_PID");
    if (!pid) {
      if (!config.allow_missing_pid) {
        showMessage(["Please open this study from Prolific (the link is missing your Prolific ID)."]);
        return;
      }
      const previews = new Store("tracktale/" + config.study_id + "/preview");
      pid = previews.get("pid") || "preview-" + randomId().replace(/[^A-Za-z0-9]/g, "").slice(0, 16);
      previews.set("pid", pid);
    }
    const store = new Store("tracktale/" + config.study_id + "/" + pid);
    showMessage(["Loading..."]);
    const session = await startSession(store, pid);
    if (!session) return;
    store.set("token", session.token);
    const outbox = new Outbox(store, session.token, { onChange: showSaveState });
    outbox.kick();
    const recorder = new TrialRecorder(store, outbox);
    target.replaceChildren();
    const jsPsych = initJsPsych({ display_element: target });
    window.tracktaleStudy = { jsPsych: jsPsych, outbox: outbox, session: session };
    await jsPsych.run(buildTimeline(session, store, outbox, recorder, jsPsych));
  }

  main().catch((error) => {
    console.error(error);
    showMessage(["Sorry, something went wrong: " + error.message + ". Please reload the page."]);
  });
})();
