/**
 * The participant's session: consent, practice, trials, survey, debrief, completion.
 *
 * The server sends the outline of the participant's plan (the same list on every reload, no
 * stories); this script builds a jsPsych timeline from the first unanswered trial on, and each
 * trial asks the server for its content when it starts (trials.js). Every answer is queued in
 * the persistent outbox the moment it ends and sent at once; the final screen shows the
 * completion code, after the server has acknowledged every answer and confirmed completion,
 * and then returns the participant to Prolific. If another browser takes the session over,
 * this one stops with a full-screen message.
 */
(function () {
  "use strict";

  const config = JSON.parse(document.getElementById("study-config").textContent);
  const { Outbox, Store, randomId, sleep, readJson } = TracktaleOutbox;
  const { makeTexts, Progress, TrialRecorder, trialTimeline, escapeHtml } = TracktaleTrials;
  // Every word the participant reads comes from the study's locale catalogue (config.texts).
  const texts = makeTexts(config);
  const params = new URLSearchParams(window.location.search);
  const target = document.getElementById("jspsych-target");
  const badge = document.getElementById("save-status");
  // Paradigm-specific styles (study.css) hang off this class, e.g. line-by-line steps.
  if (config.paradigm) document.body.classList.add("tt-paradigm-" + config.paradigm);
  const overlay = document.getElementById("tt-overlay");

  // ----------------------------------------------------------------- small helpers

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

  let stopped = false;

  /** Stop this tab for good: another browser holds the session now. */
  function stopTakenOver() {
    if (stopped) return;
    stopped = true;
    overlay.innerHTML =
      '<div class="tt-screen tt-takeover">' + paragraphs(texts.list("page.taken_over")) + "</div>";
    overlay.hidden = false;
    if (badge) badge.hidden = true;
    const study = window.tracktaleStudy;
    if (study && study.jsPsych) study.jsPsych.abortExperiment("");
  }

  /**
   * Stop after the server refused an answer. Answers are taken in order, so the study cannot
   * go on past it; reloading resumes the session, and the server serves the refused trial
   * (and any withheld after it) again, counted as a restart.
   */
  function stopRefused(reason) {
    if (stopped) return;
    stopped = true;
    const text = texts.list("page.refused", { reason: reason });
    overlay.innerHTML =
      '<div class="tt-screen tt-refused">' + paragraphs(text) +
      '<button type="button" class="jspsych-btn tt-continue">' +
      escapeHtml(texts.text("buttons.continue")) + "</button></div>";
    overlay.hidden = false;
    if (badge) badge.hidden = true;
    overlay.querySelector(".tt-continue").addEventListener("click", () => window.location.reload());
    const study = window.tracktaleStudy;
    if (study && study.jsPsych) study.jsPsych.abortExperiment("");
  }

  /**
   * Stop sending: the study no longer takes this session's answers as they stand (the
   * researcher closed it, or its stimuli changed). The answers stay in this browser and are
   * sent on a later reload, once the researcher has sorted it out.
   */
  function stopHeld(message) {
    if (stopped) return;
    stopped = true;
    const text = texts.list("page.held", { reason: message });
    overlay.innerHTML = '<div class="tt-screen tt-held">' + paragraphs(text) + "</div>";
    overlay.hidden = false;
    if (badge) badge.hidden = true;
    const study = window.tracktaleStudy;
    if (study && study.jsPsych) study.jsPsych.abortExperiment("");
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
          const data = (await readJson(response)) || {};
          if (response.status === 401 && data.reason === "taken_over") stopTakenOver();
          return { status: response.status, data: data };
        }
      } catch (error) {
        // network down: retry below
      }
      if (attempt >= 2) showMessage([texts.text("page.connecting")]);
      await sleep(Math.min(30000, 500 * 2 ** Math.min(attempt, 10)) * (0.5 + Math.random()));
    }
  }

  function codeHtml(code, redirect) {
    return (
      '<p class="tt-code-line">' + escapeHtml(texts.text("page.completion_code")) +
      ' <strong class="tt-code">' + escapeHtml(code) + "</strong></p>" +
      '<p><a class="jspsych-btn tt-return" href="' + escapeHtml(redirect) + '">' +
      escapeHtml(texts.text("buttons.return")) + "</a></p>"
    );
  }

  // ----------------------------------------------------------------- serving trials

  /** Asks the server for each trial's content as it starts. */
  class TrialFlow {
    constructor(session, outbox) {
      this.session = session;
      this.outbox = outbox;
    }

    /** The trial's content; null when it must be skipped (already answered, or stopped). */
    async serve(index) {
      for (;;) {
        if (stopped) return new Promise(() => {}); // this tab stays on the takeover screen
        const { status, data } = await postJson("/api/serve", { trial_index: index }, this.session.token);
        if (status === 200) return data.trial;
        if (status === 409 && data.waiting_for) {
          if (this.outbox.pendingTrialIndices().length === 0) {
            // The server waits for answers this page no longer holds (refused): ask again.
            stopRefused(data.error ? texts.reason(data, status) : texts.text("errors.answers_missing"));
            continue;
          }
          // Too many answers still queued (offline): send them before the next trial.
          showMessage([texts.text("page.saving_queue")]);
          await this.outbox.drain().catch(() => null);
          continue;
        }
        if (status === 409 && data.answered) return null;
        if (status === 401) {
          stopTakenOver();
          continue;
        }
        throw new Error(
          data.error ? texts.reason(data, status) : texts.text("errors.no_trial", { status: status })
        );
      }
    }
  }

  // ----------------------------------------------------------------- timeline pieces

  function infoScreen(html, label, css) {
    return {
      type: jsPsychHtmlButtonResponse,
      stimulus: '<div class="tt-screen tt-info ' + (css || "") + '">' + html + "</div>",
      choices: [texts.text(label || "buttons.continue")],
      // Instructions are not a trial: no "Story N of 46" above them.
      on_start: () => {
        const progress = document.getElementById("tt-progress");
        if (progress) progress.hidden = true;
      },
    };
  }

  function surveyScreen() {
    // The values sent are the English answers the server stores; the labels are the language's.
    const genders = config.genders
      .map(
        (g) =>
          '<label class="tt-radio"><input type="radio" name="gender" value="' + escapeHtml(g) +
          '" required> ' + escapeHtml(texts.text("survey.genders." + g.replace(/\W+/g, "_"))) +
          "</label>"
      )
      .join("");
    const yes = escapeHtml(texts.text("survey.answer_yes"));
    const no = escapeHtml(texts.text("survey.answer_no"));
    const yesNo = (name) =>
      '<label class="tt-radio"><input type="radio" name="' + name + '" value="yes" required> ' + yes + "</label>" +
      '<label class="tt-radio"><input type="radio" name="' + name + '" value="no"> ' + no + "</label>";
    const legend = (key) => "<legend>" + escapeHtml(texts.text(key)) + "</legend>";
    const html =
      '<div class="tt-survey">' + paragraphs(config.instructions.survey) +
      "<p><label>" + escapeHtml(texts.text("survey.age")) + "<br>" +
      '<input type="number" name="age" min="18" max="120" step="1"></label></p>' +
      "<fieldset>" + legend("survey.gender") + genders + "</fieldset>" +
      "<p><label>" + escapeHtml(texts.text("survey.native_language")) +
      '<br><input type="text" name="native_language" maxlength="64" required pattern=".*\\S.*"></label></p>' +
      "<fieldset>" + legend("survey.attentive") + yesNo("attentive") + "</fieldset>" +
      "<fieldset>" + legend("survey.no_ai") + yesNo("no_ai_assistance") + "</fieldset>" +
      "</div>";
    return {
      type: jsPsychSurveyHtmlForm,
      html: html,
      button_label: texts.text("buttons.continue"),
      data: { tt_screen: "survey" },
    };
  }

  function wellFormed(text) {
    // A lone surrogate (broken pasted text) would be refused by the server; send U+FFFD.
    return typeof text.toWellFormed === "function" ? text.toWellFormed() : text;
  }

  function surveyAnswers(response) {
    const age = String(response.age || "").trim();
    return {
      age: age === "" ? null : Math.round(Number(age)),
      gender: response.gender,
      native_language: wellFormed(String(response.native_language || "").trim().slice(0, 64)),
      attentive: response.attentive === "yes",
      no_ai_assistance: response.no_ai_assistance === "yes",
    };
  }

  // ----------------------------------------------------------------- the session

  async function startSession(store, pid, preview) {
    const body = preview
      ? { prolific_pid: pid, preview: preview }
      : { prolific_pid: pid, study_id: prolificParam("STUDY_ID"), session_id: prolificParam("SESSION_ID") };
    const { status, data } = await postJson("/api/session", body, store.get("token"));
    if (status === 200) return data;
    if (status === 409 && data.participant_status === "completed") {
      const code = data.completion_code ? codeHtml(data.completion_code, data.redirect) : "";
      showMessage(config.instructions.completed_before, code);
    } else {
      showMessage([
        data.error ? texts.text("page.sorry", { reason: texts.reason(data, status) }) : texts.text("page.cannot_start"),
      ]);
    }
    return null;
  }

  /** The consent form, then its POST: declining sends the participant back to Prolific. */
  function consentNodes(session, jsPsych) {
    const form = {
      type: jsPsychHtmlButtonResponse,
      stimulus:
        '<div class="tt-screen tt-info tt-consent">' + config.consent_html +
        "<details><summary>" + escapeHtml(texts.text("page.information_sheet")) + "</summary>" +
        config.information_html + "</details></div>",
      choices: [texts.text("buttons.agree"), texts.text("buttons.disagree")],
      data: { tt_screen: "consent" },
    };
    const save = {
      type: jsPsychCallFunction,
      async: true,
      func: (finish) => {
        const agreed = jsPsych.data.get().last(1).values()[0].response === 0;
        postJson("/api/consent", { consent: agreed }, session.token).then(({ status, data }) => {
          if (!agreed && data.redirect) {
            showMessage([texts.text("page.declined")]);
            window.location.replace(data.redirect);
            return; // the timeline stays here while the browser leaves
          }
          if (status !== 200) {
            const reason = data.error ? texts.reason(data, status) : texts.text("errors.consent_refused");
            if (!stopped) showMessage([texts.text("page.sorry", { reason: reason })]);
            return;
          }
          finish();
        });
      },
    };
    return [form, save];
  }

  function buildTimeline(session, outbox, context) {
    const done = new Set(session.done);
    outbox.pendingTrialIndices().forEach((index) => done.add(index));
    const timeline = [];
    const remaining = session.trials.filter((trial) => !done.has(trial.index));

    if (!session.consent) timeline.push(...consentNodes(session, context.jsPsych));
    if (remaining.length === session.trials.length) {
      timeline.push(infoScreen(paragraphs(config.instructions.welcome) + (config.instructions.welcome_html || ""), "buttons.start"));
    } else if (remaining.length > 0) {
      timeline.push(infoScreen(paragraphs(config.instructions.resume), "buttons.continue"));
    }
    let previousRole = null;
    session.block_formats.forEach((format, block) => {
      const blockTrials = remaining.filter((trial) => trial.block === block);
      if (blockTrials.length === 0) return;
      const practice = blockTrials.some((trial) => trial.role === "practice");
      let intro = config.instructions[format];
      if (practice) intro = [texts.text("page.practice")].concat(intro);
      else if (previousRole === "practice") intro = config.instructions.main_start.concat(intro);
      timeline.push(infoScreen(paragraphs(intro), "buttons.start", "tt-block-intro"));
      blockTrials.forEach((trial) => timeline.push(trialTimeline(trial, context)));
      previousRole = practice ? "practice" : "main";
    });
    if (!session.survey_done && !outbox.hasPending("survey")) {
      const survey = surveyScreen();
      survey.on_start = () => context.progress.hide();
      survey.on_finish = (data) => outbox.add("/api/survey", surveyAnswers(data.response), { kind: "survey" });
      timeline.push(survey);
    }
    timeline.push({
      type: jsPsychHtmlButtonResponse,
      stimulus: '<div class="tt-screen tt-info tt-debrief">' + config.debrief_html + "</div>",
      choices: [texts.text("buttons.finish")],
      data: { tt_screen: "debrief" },
      on_start: () => context.progress.hide(),
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
      stopTakenOver();
      return;
    }
    const { status, data } = await postJson("/api/complete", {}, session.token);
    if (status === 200 && data.redirect) {
      const seconds = Math.round(config.redirect_delay_ms / 1000);
      showMessage(
        [texts.text("page.thanks")],
        codeHtml(data.completion_code, data.redirect) +
          '<p class="tt-hint">' + escapeHtml(texts.plural("page.redirect_in", seconds)) + "</p>"
      );
      document.querySelector(".tt-message").classList.add("tt-final");
      setTimeout(() => window.location.replace(data.redirect), config.redirect_delay_ms);
      return;
    }
    if (stopped) return;
    showMessage(texts.list("page.not_all_saved", { reason: texts.reason(data, status) }));
  }

  /** A line at the foot of every screen of a preview session: it is not a participant's. */
  function showPreviewBanner() {
    const banner = document.getElementById("tt-preview");
    if (!banner) return;
    banner.textContent = texts.text("page.preview");
    banner.hidden = false;
  }

  function showSaveState(state) {
    // Quiet while saves go through (a trial is acknowledged within milliseconds); speak up
    // only when the connection fails, so that the participant keeps the window open.
    if (!badge || stopped) return;
    badge.hidden = state.failures === 0;
    badge.textContent = texts.text("page.connection_problem", { n: state.pending });
    badge.classList.toggle("tt-warn", true);
  }

  async function main() {
    // The researcher's preview link (?preview=KEY) gets an id of its own, kept in this browser
    // so that a reload resumes; the server marks its session as a preview, kept out of the data.
    const preview = prolificParam("preview");
    let pid = preview ? null : prolificParam("PROLIFIC_PID");
    if (!pid) {
      if (!preview && !config.allow_missing_pid) {
        showMessage([texts.text("page.missing_pid")]);
        return;
      }
      const previews = new Store("tracktale/" + config.study_id + "/" + (preview ? "preview-link" : "preview"));
      pid = previews.get("pid") || "preview-" + randomId().replace(/[^A-Za-z0-9]/g, "").slice(0, 16);
      previews.set("pid", pid);
    }
    const store = new Store("tracktale/" + config.study_id + "/" + pid);
    showMessage([texts.text("page.loading")]);
    const session = await startSession(store, pid, preview);
    if (!session) return;
    store.set("token", session.token);
    if (session.preview) showPreviewBanner();
    const outbox = new Outbox(store, session.token, {
      onChange: showSaveState,
      onStop: (reason, message, data) => {
        if (reason === "taken_over") stopTakenOver();
        else if (message) stopHeld(texts.reason({ ...(data || {}), reason: reason, error: message }, 409));
      },
      onReject: (entry, message, data, status) => {
        if (entry.meta.kind === "trial") stopRefused(texts.reason({ ...data, error: message }, status));
      },
    });
    outbox.kick();
    target.replaceChildren();
    const jsPsych = initJsPsych({ display_element: target });
    window.tracktaleStudy = { jsPsych: jsPsych, outbox: outbox, session: session };
    const context = {
      config: config,
      texts: texts,
      jsPsych: jsPsych,
      flow: new TrialFlow(session, outbox),
      recorder: new TrialRecorder(outbox),
      progress: new Progress(
        document.getElementById("tt-progress"),
        config.progress_indicator ? session.trials : [],
        texts
      ),
    };
    await jsPsych.run(buildTimeline(session, outbox, context));
  }

  main().catch((error) => {
    console.error(error);
    if (!stopped) showMessage([texts.text("page.went_wrong", { reason: error.message })]);
  });
})();
