"""Human study: Flask server, jsPsych front end, storage, admin and export.

The pieces, each usable on its own (the lab mode reuses the first five):

- :mod:`.paradigms`: what each paradigm's human study declares (``HumanStudy``: its list
  design, trial content and plugin, scoring, instructions, ethics texts, simulated people);
  the study's ``paradigm:`` picks one (``narrative``: the modules below; ``boxes``).
- :mod:`.design`: the narrative list design (Latin square, block order, fillers, practice,
  sides), pure and seeded: ``build_session(stimulus_set, list_id, session_seed)``.
- :mod:`.scoring`: what a trial shows (``present_trial``) and how a response is scored
  (``score_trial``, with the paradigm's ``score_response`` for typed answers).
- :mod:`.storage`: SQLAlchemy tables and ``Storage`` (SQLite WAL or PostgreSQL), idempotent
  trial saves with group commit.
- :mod:`.service`: ``StudyService``, the study's rules (sessions, consent, trials, survey,
  completion) independent of HTTP.
- :mod:`.instructions`: the participant-facing texts.
- :mod:`.config`: the study file (YAML) and secrets from the environment.
- :mod:`.app`: ``create_app(config)``, with :mod:`.api` (participant JSON API) and
  :mod:`.admin` (admin pages).
- :mod:`.export`: trials, participants and accuracy as CSV and Parquet, Prolific ids hashed.
- :mod:`.simulate`: simulated participants through the HTTP API (``simulate_participants``,
  ``simulate_study``); :mod:`.client` is their HTTP client, :mod:`.server` runs the app in a
  thread or under gunicorn.
- :mod:`.frontend`: where jsPsych (from npm) is found and how it is installed.
- :mod:`.lab`: lab mode, the same study in a PsychoPy window (``tracktale experiment lab``).
"""
