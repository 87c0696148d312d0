import pandas as pd
import pytest

from tracktale.analysis.data.exclusions import ExclusionRules, apply_exclusions
from tracktale.errors import TracktaleError


def _trials(accuracies):
    """10 main trials per task per participant with the given accuracy, plus 2 fillers."""
    rows = []
    for participant, (explicit, implicit, comprehension) in accuracies.items():
        for task, accuracy in (("explicit", explicit), ("implicit", implicit)):
            for index in range(10):
                rows.append(
                    {
                        "agent": participant,
                        "source": "online",
                        "task": task,
                        "role": "main",
                        "correct": float(index < round(10 * accuracy)),
                        "timed_out": float(task == "explicit" and index == 9),
                    }
                )
        for index in range(2):
            rows.append(
                {
                    "agent": participant,
                    "source": "online",
                    "task": "comprehension",
                    "role": "filler",
                    "correct": float(index < round(2 * comprehension)),
                    "timed_out": 0.0,
                }
            )
    return pd.DataFrame(rows)


def _participants(**overrides):
    base = {"status": "completed", "attentive": 1.0, "no_ai_assistance": 1.0, "source": "online"}
    rows = []
    for pid in ("good", "low_explicit", "half", "quitter", "dreamer", "helped", "skimmer"):
        rows.append({"participant_id": pid, **base, **overrides.get(pid, {})})
    return pd.DataFrame(rows)


TRIALS = _trials(
    {
        "good": (0.8, 0.9, 1.0),
        "low_explicit": (0.4, 0.8, 1.0),
        "half": (0.5, 0.5, 1.0),
        "quitter": (0.9, 0.9, 1.0),
        "dreamer": (0.9, 0.9, 1.0),
        "helped": (0.9, 0.9, 1.0),
        "skimmer": (0.8, 0.8, 0.0),
    }
)
PARTICIPANTS = _participants(
    quitter={"status": "returned"},
    dreamer={"attentive": float("nan")},
    helped={"no_ai_assistance": 0.0},
)


def test_the_papers_rules_on_crafted_data():
    result = apply_exclusions(TRIALS, PARTICIPANTS)
    kept = result.trials.groupby("task")["agent"].unique().map(set)
    # Exactly 50% is not below 50%: "half" stays. "low_explicit" leaves the explicit task only.
    assert kept["explicit"] == {"good", "half", "skimmer"}
    assert kept["implicit"] == {"good", "low_explicit", "half", "skimmer"}
    assert set(result.trials["role"]) == {"main"}
    rules = dict(zip(result.log["participant"], result.log["rule"], strict=True))
    assert rules == {
        "quitter": "incomplete",
        "dreamer": "attention",
        "helped": "ai_assistance",
        "low_explicit": "low_accuracy",
    }
    summary = result.summary.set_index("task")
    assert summary.loc["explicit", "analysed"] == 3 and summary.loc["implicit", "analysed"] == 4
    assert summary.loc["explicit", "excluded_low_accuracy"] == 1
    assert summary.loc["implicit", "excluded_low_accuracy"] == 0
    assert summary.loc["explicit", "participants"] == 7


def test_comprehension_threshold_and_timeouts_are_optional_rules():
    rules = ExclusionRules(min_comprehension=0.5, drop_timeouts=True)
    result = apply_exclusions(TRIALS, PARTICIPANTS, rules)
    assert "skimmer" not in set(result.trials["agent"])
    assert result.trials["timed_out"].eq(0).all()
    assert "filler (comprehension) accuracy below 50%" in rules.describe()


def test_session_rules_can_be_switched_off_and_are_skipped_without_records():
    lenient = ExclusionRules(require_completed=False, require_attentive=False, require_no_ai=False)
    result = apply_exclusions(TRIALS, PARTICIPANTS, lenient)
    assert {"quitter", "dreamer", "helped"} <= set(result.trials["agent"])
    without = apply_exclusions(TRIALS, None)
    assert "session rules were not applied" in without.notes[0]
    assert "quitter" in set(without.trials["agent"])


def test_a_participant_without_a_record_is_excluded_and_said_so():
    result = apply_exclusions(TRIALS, PARTICIPANTS[PARTICIPANTS["participant_id"] != "good"])
    assert "good" not in set(result.trials["agent"])
    assert "no_record" in set(result.log["rule"])


def test_sources_can_be_selected():
    trials = TRIALS.assign(
        source=lambda t: t["agent"].map(lambda p: "lab" if p == "good" else "online")
    )
    result = apply_exclusions(trials, PARTICIPANTS, ExclusionRules(sources=("lab",)))
    assert set(result.trials["agent"]) == {"good"}


def test_no_trials_is_an_error():
    from tracktale.errors import TracktaleError

    with pytest.raises(TracktaleError, match="no human trials"):
        apply_exclusions(TRIALS.iloc[0:0], None)


def test_trials_flagged_for_their_timing_can_be_excluded_by_rule_and_are_counted():
    # Issue 30: the server flags answers whose times cannot be true; the analysis can drop them.
    trials = TRIALS.assign(flags="")
    good_explicit = trials.index[(trials["agent"] == "good") & (trials["task"] == "explicit")]
    trials.loc[good_explicit[:2], "flags"] = "slower_than_reported"
    trials.loc[good_explicit[2], "flags"] = "several_answers;overlapping_serve"
    trials.loc[good_explicit[3], "flags"] = "several_answers"  # a verdict on the answer: stays
    kept_by_default = apply_exclusions(trials, PARTICIPANTS).trials
    assert len(kept_by_default) == len(apply_exclusions(TRIALS, PARTICIPANTS).trials)
    rules = ExclusionRules(exclude_flagged=True)
    result = apply_exclusions(trials, PARTICIPANTS, rules)
    assert len(kept_by_default) - len(result.trials) == 3
    assert not result.trials["flags"].str.contains("slower|overlapping").any()
    summary = result.summary.set_index("task")
    assert summary.loc["explicit", "flagged_trials"] == 3
    assert summary.loc["implicit", "flagged_trials"] == 0
    assert any("flagged for their timing" in line for line in rules.describe())
    without = apply_exclusions(TRIALS, PARTICIPANTS, rules)  # data without a flags column
    assert "no server flags" in without.notes[-1]


def test_the_chance_rule_holds_each_task_to_its_own_chance_level():
    # Open recall among 3 containers: chance 1/3, so 40% stays; the forced choice: 1/2.
    trials = TRIALS.assign(chance=TRIALS["task"].map({"explicit": 1 / 3, "implicit": 0.5}))
    rules = ExclusionRules(accuracy_rule="chance")
    result = apply_exclusions(trials, PARTICIPANTS, rules)
    kept = result.trials.groupby("task")["agent"].unique().map(set)
    assert kept["explicit"] == {"good", "low_explicit", "half", "skimmer"}
    harder = trials.assign(chance=trials["chance"].where(trials["task"] != "implicit", 0.85))
    result = apply_exclusions(harder, PARTICIPANTS, rules)
    low = result.log[result.log["rule"] == "low_accuracy"]
    assert set(zip(low["participant"], low["task"], strict=True)) == {
        ("low_explicit", "implicit"),
        ("half", "implicit"),
        ("skimmer", "implicit"),
    }
    assert "chance 85.0%" in low["detail"].iloc[0]
    assert any("chance level" in line for line in rules.describe())


def test_the_chance_rule_needs_the_chance_of_every_trial():
    with pytest.raises(TracktaleError, match="chance accuracy rule needs every trial's chance"):
        apply_exclusions(TRIALS, PARTICIPANTS, ExclusionRules(accuracy_rule="chance"))
