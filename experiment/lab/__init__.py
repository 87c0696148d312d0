"""Lab mode: the human study in a PsychoPy window, for in-lab sessions.

One design, two front ends: a lab session is built by :mod:`tracktale.experiment.study.design`, run
by the study's rules (:class:`~tracktale.experiment.study.service.StudyService`), scored by
:mod:`tracktale.experiment.study.scoring` and stored in the study database exactly like a browser
session, marked ``source="lab"``. The pieces:

- :mod:`.session`: :class:`~.session.LabSession`, the participant's session as the study sees
  it (start or resume by the experimenter's participant id, trial/consent/survey writes, which
  trial is on screen). No PsychoPy needed.
- :mod:`.runner`: :func:`~.runner.run_session`, the participant's path (consent, instructions,
  practice, trials, survey, debrief) over any :class:`~.runner.Display`.
- :mod:`.screens`: the PsychoPy window (``TextBox2`` for typed answers, frame-locked onsets).
- :mod:`.datafile`: PsychoPy's ``ExperimentHandler`` CSV and log of each run.
- :mod:`.launch`: :func:`~.launch.run_lab`, all of it from a study config and an id.

PsychoPy is optional (``pip install 'tracktale[lab]'``); nothing here imports it until a
session runs.
"""
