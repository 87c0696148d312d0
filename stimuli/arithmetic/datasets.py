"""The benchmark's datasets: an input setting, an operation variant and a look-back depth.

The source paper (Panda et al., "When LLMs Stop Following Steps") uses 55 of the
5 x 5 x 7 = 175 possible combinations: look-back 1 with all five input settings and all five
operation variants (25), plus look-back 2..7 with the mixed variant for every input setting
(30). Every combination has a name, ``<type>_<lo>-<hi>_<operation>_lb<k>`` (for example
``int_1-10_add_lb1`` or ``float_0-1_mixed_lb7``), so sets beyond the paper's 55 can be asked for
by name too; ``all`` means the paper's 55.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from tracktale.errors import TracktaleError


@dataclass(frozen=True)
class InputSetting:
    """Where the two inputs come from.

    Attributes:
        data_type: ``int`` (uniform over the integers lo..hi, drawn with replacement) or
            ``float`` (uniform over [lo, hi], rounded to three decimals).
        low: Smallest value.
        high: Largest value.
    """

    data_type: str
    low: int
    high: int

    @functools.cached_property
    def name(self) -> str:
        """``int_1-10``, ``float_0-1``, ..."""
        return f"{self.data_type}_{self.low}-{self.high}"

    @functools.cached_property
    def input_range(self) -> str:
        """The range as a condition value, ``1-10`` (the paper's [1,10]).

        Not ``[1,10]``: a condition that reads as JSON would not survive the CSV export.
        """
        return f"{self.low}-{self.high}"


INPUT_SETTINGS = (
    InputSetting("float", 0, 1),
    InputSetting("int", 1, 10),
    InputSetting("float", 1, 10),
    InputSetting("int", 10, 100),
    InputSetting("float", 10, 100),
)
"""The paper's five input settings: [0,1] float; [1,10] and [10,100] integer and float."""

OPERATIONS = {"add": ("+",), "sub": ("-",), "mul": ("*",), "div": ("/",), "mixed": "+-*/"}
"""Operation variant -> the operators its steps draw from (uniformly, per step)."""

LOOKBACKS = tuple(range(1, 8))


@dataclass(frozen=True)
class Dataset:
    """One benchmark dataset: 1,000 procedures in the paper (100 per horizon)."""

    setting: InputSetting
    operation: str
    lookback: int

    @functools.cached_property
    def name(self) -> str:
        """``int_1-10_add_lb1``."""
        return f"{self.setting.name}_{self.operation}_lb{self.lookback}"

    @property
    def operators(self) -> tuple[str, ...]:
        """The operator symbols a step may use."""
        return tuple(OPERATIONS[self.operation])

    def condition(self) -> dict[str, str | int]:
        """The dataset's design factors, as items carry them."""
        return {
            "dataset": self.name,
            "input_range": self.setting.input_range,
            "data_type": self.setting.data_type,
            "operation": self.operation,
            "lookback": self.lookback,
        }


ALL_DATASETS = {
    dataset.name: dataset
    for dataset in (
        Dataset(setting, operation, lookback)
        for lookback in LOOKBACKS
        for setting in INPUT_SETTINGS
        for operation in OPERATIONS
    )
}
"""Every nameable combination (175)."""

PAPER_DATASETS = tuple(
    name
    for name, dataset in ALL_DATASETS.items()
    if dataset.lookback == 1 or dataset.operation == "mixed"
)
"""The paper's 55 datasets, look-back 1 first."""

ALL = "all"
"""The ``--datasets`` value that stands for :data:`PAPER_DATASETS`."""


def get_dataset(name: str) -> Dataset:
    """The dataset called ``name``.

    Raises:
        TracktaleError: For a name that is not ``<type>_<lo>-<hi>_<operation>_lb<1..7>``.
    """
    try:
        return ALL_DATASETS[name]
    except KeyError:
        settings = ", ".join(setting.name for setting in INPUT_SETTINGS)
        raise TracktaleError(
            f"unknown dataset {name!r} (names are <setting>_<operation>_lb<k> with "
            f"setting one of {settings}, operation one of {', '.join(OPERATIONS)}, k 1-7, "
            f"e.g. int_1-10_add_lb1; or '{ALL}' for the paper's 55)"
        ) from None


def expand_datasets(names: Iterable[str]) -> list[Dataset]:
    """Resolve a ``--datasets`` list (names, or ``all`` for the paper's 55) in the given order.

    Raises:
        TracktaleError: For an unknown name, or a dataset named twice.
    """
    chosen: list[str] = []
    for name in names:
        try:
            expanded = PAPER_DATASETS if name == ALL else (get_dataset(name).name,)
        except TracktaleError as error:
            raise TracktaleError(f"--datasets: {error}") from None
        for one in expanded:
            if one in chosen:
                raise TracktaleError(f"--datasets names {one} twice")
            chosen.append(one)
    return [ALL_DATASETS[name] for name in chosen]
