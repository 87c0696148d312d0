"""How the narrative explicit task's budget and stop rule change the default model's answers.

Generates the default model's answers (greedy, no stop string) to the first ``--per-cell``
items of each (cell, template) group of the model protocol with a large budget, then replays
every budget and stop rule on those outputs: greedy decoding gives the same first tokens under
any budget, so an answer under budget B is the first B tokens (re-tokenized from the text, an
approximation at the cut) cut at the first stop string. For each rule it prints how many
generations hit the budget, the accuracy under the paper's contains rule and the one-answer
rule, and the answers naming several containers.

Needs the converted default model (``tracktale models install-default``). Slow on a CPU: the
long story prompts dominate (33 items took 33 minutes of wall clock at load average 18 on 2
cores).

Usage: ``python benchmarks/bench_narrative_budget.py [--per-cell 1] [--budget 48]``
"""

from __future__ import annotations

import argparse
import time

STOP_RULES = ((), ("\n", "."))
BUDGETS = (8, 16, 24, 32, 48)


def main() -> None:
    """Generate once, replay every rule, print one line per rule."""
    from tracktale.app.pipeline import main_job_items
    from tracktale.models.explicit import explicit_rows
    from tracktale.models.gguf import DEFAULT_MODEL_ID
    from tracktale.models.registry import load_scorer
    from tracktale.models.tasks import TaskOptions
    from tracktale.stimuli.registry import get_paradigm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-cell", type=int, default=1)
    parser.add_argument("--budget", type=int, default=48)
    args = parser.parse_args()
    paradigm = get_paradigm("narrative")
    stimulus_set = paradigm.generate_set("model", 1)
    chosen = main_job_items(stimulus_set, args.per_cell) or frozenset()
    items = [item for item in stimulus_set if item.item_id in chosen]
    scorer = load_scorer(DEFAULT_MODEL_ID, device="cpu")
    # The paradigm's stop strings are left out here: the replay applies each rule itself.
    paradigm.stop_sequences = ()
    start = time.perf_counter()
    rows = explicit_rows(scorer, items, TaskOptions(max_new_tokens=args.budget))
    print(f"{len(items)} items generated in {time.perf_counter() - start:.0f} s")
    outputs = [
        (item, row.scores["output"], row.scores.get("finish_reason"))
        for item, row in zip(items, rows, strict=True)
    ]
    tokenizer = scorer.tokenizer  # type: ignore[attr-defined]
    for stops in STOP_RULES:
        for budget in (b for b in BUDGETS if b <= args.budget):
            print(_replay(paradigm, tokenizer, outputs, stops, budget))


def _replay(paradigm, tokenizer, outputs, stops, budget: int) -> str:
    from tracktale.models.tokens import cut_at_stop

    hit = contains = several = one = 0
    for item, output, finish in outputs:
        ids = tokenizer.encode(output, add_special_tokens=False)
        text = tokenizer.decode(ids[:budget], skip_special_tokens=True)
        answer = cut_at_stop(text, stops)
        if answer == text and len(ids) >= budget and (finish == "length" or len(ids) > budget):
            hit += 1
        judged = paradigm.score_response(item, answer)
        contains += judged.correct
        several += judged.several_answers
        one += judged.correct and not judged.several_answers
    n = len(outputs)
    return (
        f"stops={stops!r:12} budget {budget:2}: hit budget {hit}/{n} ({100 * hit / n:.0f}%), "
        f"contains {100 * contains / n:.1f}%, one-answer {100 * one / n:.1f}%, "
        f"several containers {several}"
    )


if __name__ == "__main__":
    main()
