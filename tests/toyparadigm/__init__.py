"""A toy paradigm, as a lab would write its own: one package outside tracktale, one registration.

Which word comes next? People read the start of a sentence and choose between two
continuations (the one that agrees in number with the subject, and the one that does not);
models score the same pair on the ``implicit`` task. Each stage finds its part through the
:class:`~tracktale.plugin.ParadigmPlugin` in :mod:`tests.toyparadigm.plugin`:

- :mod:`.stimuli`: the generator (a :class:`~tracktale.stimuli.paradigm.Paradigm`);
- :mod:`.study`: the human study (a :class:`~tracktale.experiment.paradigms.HumanStudy`
  served with the shared forced-choice screen, ``jsPsychTimedChoice``);
- :mod:`.report`: its one report section (accuracy by number, people and models).

``tests/toyparadigm/test_toy_paradigm.py`` registers it and runs it through every stage; the
worked example of docs/explanation/architecture.md, "Adding a paradigm".
"""
