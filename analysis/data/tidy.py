"""Loading human trials, model results and stimulus sets into one tidy trial table.

There is one loader per kind of input, and each is the single place to extend when a producer
offers a new format: :func:`load_human_trials` (the study's export folder or its database
URL, SQLite or PostgreSQL, read in one snapshot), :func:`load_model_results` (a table, or the
results store's folder through ``read_results``). :func:`build_trial_table` joins both to the
stimulus sets on ``item_id``: every design factor comes from the items (``condition`` and
``meta``), never from the trial rows.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracktale.errors import TracktaleError
from tracktale.models.tasks import judged_tasks, result_records, task_names
from tracktale.schema.derive import choices, columns, hints
from tracktale.schema.records import PREVIEW_SOURCE
from tracktale.schema.results import RESULT_KEY, carried_columns
from tracktale.stimulus_set import StimulusSet, is_stimulus_set, read_stimulus_set
from tracktale.trial import ParticipantRecord, TrialRecord

if TYPE_CHECKING:
    import pandas as pd

HUMAN_TRIAL_COLUMNS = ("participant_id", "source", "item_id", "task", "correct")
"""Trial columns the analysis cannot do without (the rest of TrialRecord is optional here);
each is checked as :class:`~tracktale.trial.TrialRecord` declares it."""
PARTICIPANT_COLUMNS = ("participant_id", "source", "status", "attentive", "no_ai_assistance")
"""Participant columns the session rules need, checked as
:class:`~tracktale.trial.ParticipantRecord` declares them."""
MODEL_COLUMNS = RESULT_KEY

_TRIAL_CARRY = {
    "response_time_ms": "rt_ms",
    "reading_time_ms": "reading_time_ms",
    "timed_out": "timed_out",
    "reading_timed_out": "reading_timed_out",
    "list_id": "list_id",
    "trial_index": "trial_index",
    "stimulus_sha256": "stimulus_sha256",
    "response": "response",
    "correct_paper_rule": "correct_paper_rule",
    "intermediates": "intermediates",
    "flags": "flags",
}


def model_carry() -> tuple[str, ...]:
    """The result columns the trial table carries.

    The result models' fields marked ``CARRIED`` (:mod:`tracktale.schema.results`), over the
    registered tasks.
    """
    return carried_columns(result_records())


ANSWER_COLUMNS = ("max_new_tokens", "finish_reason", "answers_named", "several_answers")
"""How a generated answer ended and what it named, carried where the results hold them: the
report counts budget hits and applies the one-answer rule
(:mod:`tracktale.analysis.narrative.answers`)."""


_MODEL_CARRY = model_carry()
_RESERVED = {
    "agent_kind",
    "agent",
    "revision",
    "source",
    "paradigm",
    "task",
    "item_id",
    "role",
    "correct",
    *_TRIAL_CARRY.values(),
    *_MODEL_CARRY,
    *ANSWER_COLUMNS,
}


@dataclass(frozen=True)
class HumanData:
    """Human trials and the participants' session records, as loaded.

    Attributes:
        trials: One row per trial (the fields of :class:`tracktale.trial.TrialRecord`).
        participants: One row per participant (:class:`tracktale.trial.ParticipantRecord`), or
            ``None`` when only trials were given (session rules then cannot be applied).
        origin: Where they came from, for messages and the report.
    """

    trials: pd.DataFrame
    participants: pd.DataFrame | None
    origin: str


def read_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a ``.parquet`` or ``.csv`` file.

    Raises:
        TracktaleError: For a missing file or another extension.
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise TracktaleError(f"{path}: no such file")
    if path.suffix not in (".parquet", ".csv"):
        raise TracktaleError(f"{path}: expected a .parquet or .csv file")
    if path.stat().st_size == 0:
        raise TracktaleError(f"{path}: the file is empty (not even a header)")
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path, keep_default_na=True)
    except (ValueError, OSError, pd.errors.ParserError) as error:
        # pyarrow's and pandas' errors on a damaged file, on one line.
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise TracktaleError(f"{path}: cannot be read as {path.suffix[1:]} ({first})") from None


def _find_table(folder: Path, stem: str) -> Path | None:
    for suffix in (".parquet", ".csv"):
        if (folder / f"{stem}{suffix}").is_file():
            return folder / f"{stem}{suffix}"
    return None


def _without_password(url: str) -> str:
    """The URL as the report may show it (a database password never goes into a report)."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def _read_study_database(url: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Trials and participants straight from the study's database (SQLite or PostgreSQL)."""
    import pandas as pd

    from tracktale.experiment.storage.store import Storage

    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        raise TracktaleError(f"{url}: no study database at this path")
    storage = Storage(url, create=False)
    try:
        with storage.snapshot() as snapshot:  # trials and participants of one moment
            trials = pd.DataFrame([r.to_dict() for r in storage.trials(connection=snapshot)])
            people = pd.DataFrame(
                [r.to_dict() for r in storage.participant_records(None, snapshot)]
            )
    except Exception as error:  # noqa: BLE001 - any driver error means: not a study database
        raise TracktaleError(f"{url}: cannot read the study database ({error})") from None
    finally:
        storage.engine.dispose()
    if trials.empty:
        raise TracktaleError(f"{url}: the study database holds no trials")
    return trials, people


def load_human_trials(source: Any, *, include_preview: bool = False) -> HumanData:
    """Load human trials and participants from wherever the study put them.

    The researcher's preview sessions (``source == "preview"``: their own test runs through
    the study's preview link) are left out unless ``include_preview``.

    Args:
        source: The study's database URL (``sqlite:///study.db``, ``postgresql+psycopg://...``);
            a folder holding ``trials.parquet|csv`` and ``participants.parquet|csv`` (the
            study's export); a trials file (its ``participants`` file beside it is used when
            present); a ``(trials, participants)`` pair of DataFrames; a trials DataFrame; or a
            :class:`HumanData`.
        include_preview: Keep preview sessions.

    Returns:
        The checked trials and participants.

    Raises:
        TracktaleError: Naming a missing file or column or an invalid value.
    """
    import pandas as pd

    if isinstance(source, HumanData):
        return source if include_preview else _without_preview(source)
    participants = None
    participants_origin = "participants table"
    if isinstance(source, tuple):
        trials, participants = source
        origin = "trials table"
    elif isinstance(source, pd.DataFrame):
        trials, origin = source, "trials table"
    else:
        path = Path(source)
        if "://" in str(source):
            loaded = load_human_trials(
                _read_study_database(str(source)), include_preview=include_preview
            )
            return dataclasses.replace(loaded, origin=_without_password(str(source)))
        folder = path if path.is_dir() else path.parent
        trials_path = _find_table(path, "trials") if path.is_dir() else path
        if trials_path is None:
            raise TracktaleError(f"{path}: no trials.parquet or trials.csv in this folder")
        trials = read_table(trials_path)
        participants_path = _find_table(folder, "participants")
        if participants_path is None and path.is_dir():
            raise TracktaleError(f"{path}: no participants.parquet or participants.csv")
        if participants_path is not None:
            participants = read_table(participants_path)
            participants_origin = str(participants_path)
        origin = str(trials_path)
    trials = _check_human_trials(trials, origin)
    if participants is not None:
        participants = _check_participants(participants, participants_origin)
    human = HumanData(trials=trials, participants=participants, origin=origin)
    return human if include_preview else _without_preview(human)


def _without_preview(human: HumanData) -> HumanData:
    """``human`` without preview sessions (their trials and participant records).

    Raises:
        TracktaleError: When nothing but preview sessions is left.
    """
    trials = human.trials[human.trials["source"] != PREVIEW_SOURCE]
    if len(trials) == len(human.trials):
        return human
    if trials.empty:
        raise TracktaleError(
            f"{human.origin}: every trial is from a preview session (the researcher's own "
            "test runs); add --include-preview to analyse them"
        )
    people = human.participants
    if people is not None:
        people = people[people["source"] != PREVIEW_SOURCE].reset_index(drop=True)
    return dataclasses.replace(human, trials=trials.reset_index(drop=True), participants=people)


def require_columns(table: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise naming the first of ``columns`` that ``table`` lacks."""
    for column in columns:
        if column not in table.columns:
            raise TracktaleError(f"{what}: column {column!r} is missing")


def _check_choice(table: pd.DataFrame, column: str, allowed: Iterable[Any], what: str) -> None:
    allowed = tuple(allowed)
    bad = ~table[column].isin(allowed)
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        value = table[column].iloc[row]
        raise TracktaleError(
            f"{what} row {row + 1}: {column} {value!r} is not one of {', '.join(allowed)}"
        )


def _as_boolean(table: pd.DataFrame, column: str, what: str, *, nullable: bool) -> pd.Series:
    """Booleans from bools, 0/1 or "True"/"False" text (CSV), with NaN for missing values."""
    import pandas as pd

    mapping = {True: 1.0, False: 0.0, "True": 1.0, "False": 0.0, "true": 1.0, "false": 0.0}
    mapping.update({1: 1.0, 0: 0.0})  # 1.0 and 0.0 hash like 1 and 0
    values = table[column].map(lambda v: mapping.get(v, math.nan) if pd.notna(v) else math.nan)
    invalid = values.isna() & table[column].notna()
    if not nullable:
        invalid |= table[column].isna()
    if invalid.any():
        row = int(invalid.to_numpy().nonzero()[0][0])
        raise TracktaleError(
            f"{what} row {row + 1}: {column} {table[column].iloc[row]!r} is not true or false"
        )
    return values.astype(float)


def _check_against(
    table: pd.DataFrame,
    record: type,
    required: Iterable[str],
    what: str,
    optional: Iterable[str] = (),
) -> pd.DataFrame:
    """Check (and normalise) the ``required`` and present ``optional`` columns by the record.

    Each column is checked as the record declares it: a ``bool`` field as true/false (0/1 or
    text from a CSV, stored as 1.0/0.0, missing values allowed where the field allows them or the
    column is optional), a ``Literal`` field against its choices, other text as text.
    """
    required = tuple(required)
    require_columns(table, required, what)
    table = table.reset_index(drop=True).copy()
    declared = {column.name: column for column in columns(record)}
    for name in (*required, *(name for name in optional if name in table.columns)):
        column = declared[name]
        allowed = choices(hints(record)[name])
        if column.kind is bool:
            nullable = column.nullable or name not in required
            table[name] = _as_boolean(table, name, what, nullable=nullable)
        elif allowed is not None:
            _check_choice(table, name, allowed, what)
        elif column.kind is str:
            table[name] = table[name].astype(str)
    return table


def _check_human_trials(trials: pd.DataFrame, origin: str) -> pd.DataFrame:
    if trials.empty and set(HUMAN_TRIAL_COLUMNS) <= set(trials.columns):
        raise TracktaleError(f"{origin}: no trials (the table has a header but no rows)")
    return _check_against(
        trials, TrialRecord, HUMAN_TRIAL_COLUMNS, origin, ("timed_out", "reading_timed_out")
    )


def _check_participants(participants: pd.DataFrame, what: str) -> pd.DataFrame:
    participants = _check_against(participants, ParticipantRecord, PARTICIPANT_COLUMNS, what)
    duplicated = participants["participant_id"].duplicated()
    if duplicated.any():
        pid = participants["participant_id"][duplicated].iloc[0]
        raise TracktaleError(f"{what}: participant {pid!r} appears twice")
    return participants


def load_model_results(source: Any) -> pd.DataFrame:
    """Load model results: one row per (model_id, revision, item_id, task).

    Args:
        source: A DataFrame, a ``.parquet``/``.csv`` file, the results store's folder (read
            with :func:`tracktale.models.store.read_results`), or a folder holding a
            ``results.parquet|csv`` table.

    Returns:
        The checked results, ``revision`` as text (``""`` for none).

    Raises:
        TracktaleError: Naming a missing file or column or an invalid task.
    """
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        results, origin = source, "model results"
    else:
        path = Path(source)
        origin = str(path)
        results = _read_store(path) if path.is_dir() else read_table(path)
    require_columns(results, MODEL_COLUMNS, origin)
    results = results.reset_index(drop=True).copy()
    results["revision"] = results["revision"].fillna("").astype(str)
    for column in ("model_id", "item_id"):
        results[column] = results[column].astype(str)
    _check_choice(results, "task", task_names(), origin)
    # The judged tasks are the ones people do too; sequence rows (and people's comprehension
    # fillers) are kept in the table but have no accuracy of their own.
    scored = results["task"].isin(judged_tasks())
    if scored.any():
        require_columns(results, ["correct"], origin)
    if (results["task"] == "sequence").any():
        require_columns(results, ["logprob"], origin)
    if "correct" in results.columns:
        results["correct"] = _as_boolean(results, "correct", origin, nullable=True)
        missing = scored & results["correct"].isna()
        if missing.any():
            row = int(missing.to_numpy().nonzero()[0][0])
            raise TracktaleError(f"{origin} row {row + 1}: correct is missing")
    if "correct_calibrated" in results.columns:
        results["correct_calibrated"] = _as_boolean(
            results, "correct_calibrated", origin, nullable=True
        )
    return results


def _read_store(path: Path) -> pd.DataFrame:
    """A results store's shards, else a ``results.parquet|csv`` table kept in the folder."""
    from tracktale.models.store import read_results, shards

    if shards(path):
        return read_results(path)
    found = _find_table(path, "results")
    if found is None:
        raise TracktaleError(
            f"{path}: not a results store (no part-*.parquet shards) and no results.parquet "
            "or results.csv in it"
        )
    return read_table(found)


def load_stimulus_sets(sources: Iterable[Any]) -> list[StimulusSet]:
    """Stimulus sets from folders (or already loaded sets).

    Raises:
        TracktaleError: For a folder that is not a stimulus set.
    """
    sets = []
    for source in sources:
        if isinstance(source, StimulusSet):
            sets.append(source)
        elif not is_stimulus_set(source):
            raise TracktaleError(f"{source}: not a stimulus set (no manifest.json)")
        else:
            sets.append(read_stimulus_set(source))
    return sets


def human_stimulus_set(sources: Iterable[Any] = (), paradigm: str | None = None) -> StimulusSet:
    """The first of ``sources``, else the human protocol of ``paradigm`` (or the default), seed 1.

    Raises:
        TracktaleError: For a folder that is not a stimulus set, or a set of another paradigm
            than ``paradigm``.
    """
    sources = list(sources)
    if not sources:
        from tracktale.stimuli.registry import DEFAULT_PARADIGM, get_paradigm

        return get_paradigm(paradigm or DEFAULT_PARADIGM).generate_set("human", 1)
    stimulus_set = load_stimulus_sets(sources)[0]
    if paradigm is not None and stimulus_set.manifest.paradigm != paradigm:
        raise TracktaleError(
            f"--paradigm {paradigm}: the --stimuli set is a {stimulus_set.manifest.paradigm} set"
        )
    return stimulus_set


def item_table(sets: Iterable[StimulusSet]) -> pd.DataFrame:
    """One row per item: id, paradigm, role, set sha256, every condition and scalar meta field.

    A condition or meta key that collides with a trial-table column gets a ``condition_`` or
    ``meta_`` prefix. An item present in two sets appears once.
    """
    import pandas as pd

    rows: dict[str, dict[str, Any]] = {}
    for stimulus_set in sets:
        for item in stimulus_set:
            row = {
                "item_id": item.item_id,
                "paradigm": item.paradigm,
                "role": item.role,
                "set_sha256": stimulus_set.sha256,
                "protocol": stimulus_set.manifest.protocol,
            }
            row.update(_prefixed(item.condition, "condition_"))
            row.update(_prefixed(_scalars(item.meta), "meta_"))
            rows.setdefault(item.item_id, row)
    if not rows:
        raise TracktaleError("the stimulus sets hold no items")
    return pd.DataFrame(list(rows.values()))


def _scalars(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if isinstance(v, str | int | float | bool)}


def _prefixed(mapping: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {
        (prefix + k if k in _RESERVED | {"set_sha256", "protocol"} else k): v
        for k, v in mapping.items()
    }


def _join_items(rows: pd.DataFrame, items: pd.DataFrame, what: str) -> pd.DataFrame:
    """Rows joined to their items; rows of stimulus sets that were not given are left aside.

    A row whose ``stimulus_sha256`` names a set that is not among the given ones belongs to
    another study's set (a results store may hold several): it is dropped and counted in the
    table's ``attrs["left_aside"]`` (``{what: {sha256: rows}}``). A row naming an item its own
    set does not hold, or one without a set, is an error.
    """
    known = rows["item_id"].isin(items["item_id"])
    aside: dict[str, int] = {}
    if not known.all() and "stimulus_sha256" in rows.columns:
        sha = rows["stimulus_sha256"]
        other_set = ~known & sha.notna() & ~sha.isin(set(items["set_sha256"]))
        if other_set.any():
            aside = {str(k): int(n) for k, n in sha[other_set].value_counts().sort_index().items()}
            rows, known = rows[~other_set], known[~other_set]
    if not known.all():
        row = int((~known).to_numpy().nonzero()[0][0])
        item_id = rows["item_id"].iloc[row]
        sha = rows["stimulus_sha256"].iloc[row] if "stimulus_sha256" in rows.columns else None
        named = f" (its stimulus set has sha256 {str(sha)[:12]}...)" if isinstance(sha, str) else ""
        raise TracktaleError(
            f"{what} row {row + 1}: item {item_id!r} is not in the given stimulus sets{named}"
        )
    joined = rows.merge(items, on="item_id", how="left", validate="many_to_one")
    joined.attrs["left_aside"] = {what: aside} if aside else {}
    return joined


def describe_left_aside(left_aside: Mapping[str, Mapping[str, int]]) -> list[str]:
    """One line per source whose rows of other stimulus sets were left aside."""
    lines = []
    for what, counts in left_aside.items():
        sets = ", ".join(f"{sha[:12]}: {n:,}" for sha, n in counts.items())
        total = sum(counts.values())
        lines.append(
            f"{what}: {total:,} rows of {len(counts)} stimulus set(s) not given with --stimuli "
            f"left aside (sha256 {sets})"
        )
    return lines


def human_trial_rows(human: HumanData) -> pd.DataFrame:
    """Human trials in the tidy table's column names (before the join with items)."""
    trials = human.trials
    tidy = trials[["participant_id", "source", "task", "item_id", "correct"]].rename(
        columns={"participant_id": "agent"}
    )
    tidy.insert(0, "agent_kind", "human")
    tidy.insert(2, "revision", "")
    for original, name in _TRIAL_CARRY.items():
        if original in trials.columns:
            tidy[name] = trials[original].to_numpy()
    return tidy


def model_trial_rows(results: pd.DataFrame) -> pd.DataFrame:
    """Model results in the tidy table's column names, with each model's description."""
    import pandas as pd

    from tracktale.analysis.data.catalog import describe_model, training_step, training_tokens

    tidy = results[["model_id", "revision", "task", "item_id"]].rename(
        columns={"model_id": "agent"}
    )
    tidy.insert(0, "agent_kind", "model")
    tidy.insert(3, "source", "model")
    tidy["correct"] = results["correct"] if "correct" in results.columns else math.nan
    for column in (*model_carry(), *ANSWER_COLUMNS):
        if column in results.columns:
            tidy[column] = results[column].to_numpy()
    descriptions = {m: describe_model(m) for m in tidy["agent"].unique()}
    for field in ("family", "label", "size_label", "instruct", "reference"):
        tidy[field] = tidy["agent"].map(lambda m, f=field: getattr(descriptions[m], f))
    nominal = tidy["agent"].map(lambda m: descriptions[m].nominal_parameters)
    counted = (
        pd.to_numeric(results["n_parameters"], errors="coerce")
        if "n_parameters" in results.columns
        else nominal * math.nan
    )
    tidy["n_parameters"] = counted.where(counted > 0, nominal).to_numpy()
    tidy["step"] = tidy["revision"].map(training_step)
    tidy["tokens"] = tidy["revision"].map(training_tokens)
    return tidy


def build_trial_table(
    items: pd.DataFrame,
    human: HumanData | None = None,
    models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The one tidy trial table: human trials and model results joined to the items.

    Args:
        items: From :func:`item_table`.
        human: From :func:`load_human_trials`.
        models: From :func:`load_model_results`.

    Returns:
        One row per human trial and per model result, with ``agent_kind`` (human/model),
        ``agent`` (participant or model id), ``revision``, ``source``, ``paradigm``, ``task``,
        ``item_id``, ``role``, every condition and meta column of the items, ``correct`` (1/0),
        and the measures of each kind (``rt_ms``, ``reading_time_ms``, ..., ``logprob``,
        ``n_parameters``, ``step``, ...).

        Rows of stimulus sets that were not given are left aside and counted in
        ``attrs["left_aside"]`` (see :func:`describe_left_aside`).

    Raises:
        TracktaleError: When neither is given, or a row names an item outside its own set.
    """
    import pandas as pd

    parts = []
    if human is not None:
        parts.append(_join_items(human_trial_rows(human), items, human.origin))
    if models is not None:
        parts.append(_join_items(model_trial_rows(models), items, "model results"))
    if not parts:
        raise TracktaleError("no data: give human trials, model results or both")
    left_aside = {k: v for part in parts for k, v in part.attrs.get("left_aside", {}).items()}
    table = pd.concat(parts, ignore_index=True, sort=False)
    table.attrs["left_aside"] = left_aside
    return table


def select(table: pd.DataFrame, **criteria: Any) -> pd.DataFrame:
    """Rows whose columns take the given value (or one of the given values).

    Args:
        table: The tidy trial table.
        **criteria: ``column=value`` or ``column=[values]``; ``None`` means no constraint.

    Returns:
        The matching rows.

    Raises:
        TracktaleError: Naming an unknown column, a value the data does not have (e.g. an
            unknown template) or a selection that leaves no rows.
    """
    mask = None
    for column, wanted in criteria.items():
        if wanted is None:
            continue
        if column not in table.columns:
            raise TracktaleError(f"cannot select on {column!r}: the trial table has no such column")
        values = list(wanted) if isinstance(wanted, list | tuple | set) else [wanted]
        present = set(table[column].dropna().unique())
        unknown = [v for v in values if v not in present]
        if unknown:
            have = ", ".join(sorted(map(str, present))) or "nothing"
            raise TracktaleError(f"unknown {column} {unknown[0]!r} (the data has: {have})")
        match = table[column].isin(values)
        mask = match if mask is None else mask & match
    selected = table if mask is None else table[mask]
    if selected.empty:
        described = ", ".join(f"{k}={v}" for k, v in criteria.items() if v is not None)
        raise TracktaleError(f"no trials match {described}")
    return selected
