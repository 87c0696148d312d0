"""Lab and online sessions share one export, and the analysis reads them alike."""

from __future__ import annotations

from tests.experiment.conftest import Participant
from tests.experiment.lab.scripted import ScriptedDisplay
from tracktale.experiment.export.files import export_study
from tracktale.experiment.lab.session import LabSession
from tracktale.experiment.study.service import StudyService


def test_lab_and_online_sessions_load_alike_with_their_source(
    study_config, storage, human_set, client, tmp_path
):
    online = Participant(client, human_set)
    assert online.run_all().status_code == 200
    service = StudyService(study_config, storage, human_set)
    assert ScriptedDisplay(human_set).play(LabSession(service, "LAB-001")).outcome == "completed"
    export_study(storage, tmp_path / "export", study_id=study_config.study_id, salt="s")

    from tracktale.analysis.data.exclusions import ExclusionRules, apply_exclusions
    from tracktale.analysis.data.load import load_human_trials
    from tracktale.analysis.data.tidy import build_trial_table, item_table

    human = load_human_trials(tmp_path / "export")
    assert set(human.participants["source"]) == {"online", "lab"}
    table = build_trial_table(item_table([human_set]), human)
    assert table.groupby("source").size().to_dict() == {"lab": 50, "online": 50}
    # The same columns are filled for both, design factors from the items.
    for column in ("correct", "rt_ms", "reading_time_ms", "complexity", "list_id", "role"):
        filled = table.groupby("source")[column].apply(lambda values: values.notna().mean())
        assert filled["lab"] == filled["online"], column
    kept = apply_exclusions(table, human.participants)
    assert set(kept.trials["source"]) == {"online", "lab"}
    lab_only = apply_exclusions(table, human.participants, ExclusionRules(sources=("lab",)))
    assert set(lab_only.trials["source"]) == {"lab"}
