// ESLint for the study's own JavaScript: the page scripts in ../static and the node tests here.
// Run from experiment/ (`npm run lint` here does that), because ESLint ignores files outside
// the folder it is run from when given a config file.
import js from "@eslint/js";
import globals from "globals";

// The page loads its scripts with plain <script> tags (study.html) in this order; each defines
// one global that the later ones read.
const PAGE_GLOBALS = {
  jsPsychModule: "readonly",
  initJsPsych: "readonly",
  jsPsychHtmlButtonResponse: "readonly",
  jsPsychSurveyHtmlForm: "readonly",
  jsPsychCallFunction: "readonly",
  TracktalePluginHelpers: "readonly",
  jsPsychTimedReading: "readonly",
  jsPsychTimedTextResponse: "readonly",
  jsPsychTimedChoice: "readonly",
  jsPsychSelfPacedReading: "readonly",
  jsPsychMaze: "readonly",
  jsPsychArithmeticProcedure: "readonly",
  TracktaleOutbox: "readonly",
  TracktaleTrials: "readonly",
};

export default [
  js.configs.recommended,
  {
    name: "tracktale/page-scripts",
    files: ["static/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",
      globals: { ...globals.browser, ...PAGE_GLOBALS },
    },
    rules: {
      // A top-level `var` is how a script hands its global to the next one: the file that
      // defines one names it in an `/* exported */` comment (and may "redeclare" it, as it is
      // also listed above for the scripts after it); any other unused global is an error.
      "no-unused-vars": ["error", { args: "none", caughtErrors: "none" }],
      "no-redeclare": ["error", { builtinGlobals: false }],
      "no-var": "off",
      "prefer-const": "error",
      eqeqeq: ["error", "always", { null: "ignore" }],
      strict: ["error", "function"],
      // Stimuli are put on the page as text; markup is built only from escaped strings.
      "no-restricted-properties": [
        "error",
        { object: "document", property: "write", message: "build elements instead" },
      ],
    },
  },
  {
    name: "tracktale/node-tests",
    files: ["frontend/**/*.js", "frontend/**/*.mjs"],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: "module",
      globals: globals.node,
    },
    rules: {
      "prefer-const": "error",
      eqeqeq: ["error", "always", { null: "ignore" }],
    },
  },
];
