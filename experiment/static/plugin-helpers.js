/**
 * What the tracktale jsPsych plugins (plugins/*.js) share, loaded before them.
 *
 * - `timerBar(duration)`: the bar that shrinks as a trial's time runs out (study.css animates
 *   it over `duration` ms);
 * - `finishOnce(finish)`: a trial can be ended by a key, a click and its time limit at nearly
 *   the same moment; only the first of them may end it, or jsPsych would record two trials;
 * - `elapsedMs(start)`: milliseconds since a `performance.now()` reading, to 0.1 ms, as every
 *   plugin records its times.
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

  return { timerBar, finishOnce, elapsedMs };
})();
