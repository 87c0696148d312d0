"""The paradigm contract: how a paradigm generates (or imports), verifies and scores its items.

A paradigm declares its options (typed, with help text, exposed by ``tracktale stimuli
generate``), its protocol presets, a generator that yields verified items, a verifier that
re-checks a stored item against its simulator, and a scorer for free-text responses (a
participant's typed answer or a model's generation). A paradigm whose items come from the
researcher's own files is an *importer* (:attr:`Paradigm.source`): it has no protocols and
implements :meth:`Paradigm.import_set` (``tracktale stimuli import``) instead of generating.
A paradigm may export its sets to other tools' formats (:meth:`Paradigm.export`) and give its
items' word spans to the models' per-word surprisal (:meth:`Paradigm.word_spans`). The CLI and
the other stages only talk to paradigms through this class.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, cast

import pydantic

import tracktale
from tracktale.errors import TracktaleError
from tracktale.item import Item
from tracktale.schema.results import Judgement
from tracktale.stimulus_set import StimulusSet, build_stimulus_set


@dataclass(frozen=True)
class Option:
    """One generation option of a paradigm, checked by a strict pydantic validator built from it.

    Attributes:
        name: The config key (``snake_case``); the CLI flag is ``--name-with-dashes``.
        type: ``int``, ``float``, ``bool`` or ``str``.
        help: One sentence for ``--help``.
        choices: Allowed values (for ``str`` options).
        multiple: Whether the value is a list (comma-separated on the command line).
        minimum: Smallest allowed value (numbers, or list length for ``multiple``).
        maximum: Largest allowed value (numbers).
        words: Words a number option also takes (``--compress random``).
    """

    name: str
    type: type
    help: str
    choices: tuple[str, ...] | None = None
    multiple: bool = False
    minimum: float | None = None
    maximum: float | None = None
    words: tuple[str, ...] = ()

    @property
    def flag(self) -> str:
        """The command-line flag."""
        return "--" + self.name.replace("_", "-")

    def check(self, value: Any) -> Any:
        """Validate (and normalise) one value of this option.

        Raises:
            TracktaleError: Naming the option, the value and what is allowed.
        """
        values = list(value) if self.multiple else [value]
        if self.multiple and not isinstance(value, list | tuple):
            raise TracktaleError(f"{self.flag} must be a list, got {value!r}")
        if self.multiple and self.minimum is not None and len(values) < self.minimum:
            raise TracktaleError(f"{self.flag} needs at least {self.minimum:g} value(s)")
        checked = [self._check_one(one) for one in values]
        return checked if self.multiple else checked[0]

    def _check_one(self, value: Any) -> Any:
        if isinstance(value, str) and value in self.words:
            return value
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        try:
            return _value_adapter(self).validate_python(value)
        except pydantic.ValidationError as error:
            kind = error.errors(include_url=False)[0]["type"]
        if kind == "literal_error" and isinstance(value, str):
            choices = ", ".join(self.choices or ())
            raise TracktaleError(f"{self.flag}: {value!r} is not one of {choices}")
        if kind in ("greater_than_equal", "less_than_equal"):
            bound = "least" if kind == "greater_than_equal" else "most"
            limit = self.minimum if kind == "greater_than_equal" else self.maximum
            raise TracktaleError(f"{self.flag} must be at {bound} {limit:g}, got {value!r}")
        allowed = " or ".join([self.type.__name__, *map(repr, self.words)])
        raise TracktaleError(f"{self.flag} must be {allowed}, got {value!r}")


@functools.cache
def _value_adapter(option: Option) -> pydantic.TypeAdapter[Any]:
    """The strict validator of one value of ``option``: its type, choices and bounds."""
    kind: Any = option.type
    if option.choices is not None:
        kind = cast(Any, Literal)[option.choices]
    # For a list option the minimum is the list's length, the maximum each value's.
    minimum = None if option.multiple else option.minimum
    if minimum is not None or option.maximum is not None:
        kind = Annotated[kind, pydantic.Field(ge=minimum, le=option.maximum)]
    return pydantic.TypeAdapter(kind, config=pydantic.ConfigDict(strict=True))


class Paradigm(abc.ABC):
    """Base class of the paradigms in :mod:`tracktale.stimuli.registry`."""

    name: str
    """The registry name (``--paradigm``)."""
    version: str
    """The generator's revision: bump it whenever the same seed would give other items."""
    description: str
    """One line for listings."""
    options: tuple[Option, ...]
    """The generation options."""
    protocols: Mapping[str, Mapping[str, Any]]
    """Protocol presets: each maps every option to its default under that protocol."""
    max_new_tokens: int = 16
    """Default generation budget for the explicit task (models may override it per run); an
    item may carry its own, smaller one as ``meta["max_new_tokens"]``, or the paradigm may size
    it per item (:meth:`item_budget`)."""
    stop_sequences: tuple[str, ...] = ()
    """Strings that end a generated answer (the text from the first one on is cut off)."""
    judgement: ClassVar[type[Judgement]] = Judgement
    """The record :meth:`score_response` builds and returns (``correct`` and the paradigm's own
    fields): the explicit task checks every judgement against it, and the results store types
    its columns."""
    source: ClassVar[Literal["generator", "importer"]] = "generator"
    """Where the items come from: generated from a seed and options (``tracktale stimuli
    generate``), or imported from the researcher's files (``tracktale stimuli import``)."""
    example: ClassVar[Path | None] = None
    """An importer's example files (``items.csv`` and ``design.yaml``), which ``tracktale init``
    writes into a new study folder (``None``: none)."""
    export_formats: ClassVar[tuple[str, ...]] = ()
    """The formats :meth:`export` writes (``tracktale stimuli export --format``)."""

    def resolve_config(
        self, protocol: str, overrides: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The full config for ``protocol`` with ``overrides`` applied and checked.

        Raises:
            TracktaleError: For an unknown protocol, an unknown option or an invalid value.
        """
        if protocol not in self.protocols:
            raise TracktaleError(
                f"paradigm {self.name!r} has no protocol {protocol!r} "
                f"(choose from {', '.join(self.protocols)})"
            )
        known = {option.name: option for option in self.options}
        config = dict(self.protocols[protocol])
        for key, value in (overrides or {}).items():
            if key not in known:
                raise TracktaleError(
                    f"paradigm {self.name!r} has no option --{key.replace('_', '-')}"
                )
            config[key] = value
        resolved = {name: known[name].check(config[name]) for name in sorted(known)}
        self.check_config(resolved)
        return resolved

    def check_config(self, config: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Cross-option checks; raise ``TracktaleError`` naming the problem."""

    @abc.abstractmethod
    def expected_count(self, config: Mapping[str, Any]) -> int:
        """How many items :meth:`generate` yields for ``config``."""

    @abc.abstractmethod
    def generate(self, config: Mapping[str, Any], seed: int) -> Iterator[Item]:
        """Yield verified items, deterministically for ``(config, seed)``."""

    @abc.abstractmethod
    def verify(self, item: Item) -> list[str]:
        """Re-check a stored item against the simulator; return the problems found (none: [])."""

    def item_budget(self, item: Item) -> int:
        """The explicit task's default budget for one item (``--max-new-tokens`` overrides it).

        The paradigm's :attr:`max_new_tokens`; a paradigm whose answers grow with the item
        (an arithmetic trace with its steps) gives each item the room its answer needs.
        """
        return self.max_new_tokens

    @abc.abstractmethod
    def design_cell(self, item: Item) -> str:
        """The item's design cell, e.g. ``main/standard/C3.F1``, for counts and summaries."""

    @abc.abstractmethod
    def score_response(self, item: Item, response: str) -> Judgement:
        """Score a free-text response to the explicit probe: an instance of :attr:`judgement`.

        Built as the paradigm's own judgement class (a subclass narrows the return type), so
        the type checker names a misspelt or missing field where the judgement is written.
        """

    def import_set(self, source: Path, design: Path) -> StimulusSet:
        """Import a set from the researcher's files (an importer's; a generator has none).

        Raises:
            TracktaleError: For a generating paradigm, or naming every problem of the files.
        """
        raise TracktaleError(
            f"the {self.name} paradigm generates its items (tracktale stimuli generate)"
        )

    def check_export_format(self, fmt: str) -> None:
        """Raise ``TracktaleError`` unless :meth:`export` writes ``fmt``."""
        if fmt not in self.export_formats:
            offered = ", ".join(self.export_formats) or "none"
            raise TracktaleError(
                f"the {self.name} paradigm exports no {fmt!r} format (it exports: {offered})"
            )

    def export(self, stimulus_set: StimulusSet, fmt: str, folder: Path) -> list[Path]:
        """Write ``stimulus_set`` into ``folder`` in another tool's format; the files written.

        Raises:
            TracktaleError: For a format the paradigm does not export.
        """
        self.check_export_format(fmt)
        raise NotImplementedError(f"{type(self).__name__} lists {fmt!r} but does not write it")

    def language(self, stimulus_set: StimulusSet) -> str:
        """The language of ``stimulus_set``'s texts (a BCP 47 tag; the generators write English)."""
        return "en"

    def word_spans(self, item: Item) -> list[tuple[int, int]] | None:
        """The ``(start, end)`` character spans of the words of ``item.context``.

        ``None`` (the default): whitespace-separated words. The sequence task sums token
        surprisal into these words.
        """
        return None

    def generate_set(
        self, protocol: str, seed: int, overrides: Mapping[str, Any] | None = None
    ) -> StimulusSet:
        """Resolve the config, generate every item and assemble the stimulus set."""
        config = self.resolve_config(protocol, overrides)
        return self.assemble(
            self.generate(config, seed), protocol=protocol, seed=seed, config=config
        )

    def assemble(
        self, items: Iterable[Item], *, protocol: str, seed: int, config: Mapping[str, Any]
    ) -> StimulusSet:
        """Build the stimulus set and manifest for items generated with ``config``."""
        return build_stimulus_set(
            items,
            paradigm=self.name,
            protocol=protocol,
            generator=type(self).__module__,
            generator_version=f"tracktale {tracktale.__version__}; {self.name} {self.version}",
            seed=seed,
            config={"protocol": protocol, **config},
            design_cell=self.design_cell,
        )
