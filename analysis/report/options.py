"""A paradigm's own report options: a typed model its plug-in declares, offered on the command line.

A paradigm whose report takes options of its own (a scoring rule, a kind of interval) declares
them as a subclass of :class:`ParadigmOptions`, a frozen pydantic model whose fields are closed
choices (``Literal`` or ``Enum``) with a default and a ``description``, and names it in its
plug-in (:attr:`tracktale.plugin.ParadigmPlugin.report_options`). The report's command line
offers each field as ``--<paradigm>-<field>`` (underscores as hyphens), its choices, default
and help taken from the field (:func:`paradigm_option_specs`); the chosen values reach the
paradigm's sections as an instance of its model
(:meth:`tracktale.analysis.report.context.ReportOptions.of`), and the page's options line
states them for the paradigms it reports (:meth:`ParadigmOptions.describe`). Shared code never
names a paradigm's option: a new paradigm's options appear by declaring them.
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from tracktale.stimuli.registry import PLUGINS, paradigms_with


class ParadigmOptions(BaseModel):
    """The report options of one paradigm (subclassed by each paradigm that has any).

    Each field must be a closed choice (``Literal`` of strings or a string ``Enum``) with a
    default and a ``description`` (the option's help).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    def describe(self) -> str:
        """The options in words for the page's options line (a paradigm may say it better)."""
        values = ", ".join(
            f"{name.replace('_', ' ')} {_plain(value)}" for name, value in self if value is not None
        )
        return values


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def options_model(paradigm: str) -> type[ParadigmOptions] | None:
    """The report options model ``paradigm``'s plug-in declares (``None``: it declares none)."""
    if paradigm not in PLUGINS or not PLUGINS.get(paradigm).has("report_options"):
        return None
    model = PLUGINS.get(paradigm).load("report_options")
    if not (isinstance(model, type) and issubclass(model, ParadigmOptions)):
        raise TypeError(
            f"paradigm {paradigm!r}: its report_options must be a ParadigmOptions model, "
            f"got {model!r}"
        )
    return model


def default_options(paradigm: str) -> ParadigmOptions | None:
    """``paradigm``'s report options at their defaults (``None``: it has none)."""
    model = options_model(paradigm)
    return model() if model is not None else None


@dataclass(frozen=True)
class OptionSpec:
    """One paradigm option as the command line offers it.

    Attributes:
        paradigm: The paradigm that declares it.
        field: The field of the paradigm's options model.
        flag: The command-line flag, ``--<paradigm>-<field>``.
        choices: The values it takes.
        default: Its default value.
        help: Its help text (the field's description).
    """

    paradigm: str
    field: str
    flag: str
    choices: tuple[str, ...]
    default: str
    help: str

    @property
    def dest(self) -> str:
        """The command's parameter name: ``<paradigm>__<field>`` (split by :func:`collect`)."""
        return f"{self.paradigm}__{self.field}"


def _choices(paradigm: str, name: str, annotation: Any) -> tuple[str, ...]:
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return tuple(str(member.value) for member in annotation)
    if typing.get_origin(annotation) is typing.Literal:
        return tuple(str(value) for value in typing.get_args(annotation))
    raise TypeError(
        f"paradigm {paradigm!r}: report option {name!r} must be a closed choice "
        f"(Literal or Enum), got {annotation!r}"
    )


def paradigm_option_specs(paradigms: Iterable[str] | None = None) -> list[OptionSpec]:
    """Every paradigm's report options as flags, in registration and field order.

    Raises:
        TypeError: If a declared field is not a closed choice or has no default or description.
    """
    specs = []
    for paradigm in paradigms_with("report_options") if paradigms is None else paradigms:
        model = options_model(paradigm)
        for name, info in (model.model_fields if model else {}).items():
            if info.is_required() or not info.description:
                raise TypeError(
                    f"paradigm {paradigm!r}: report option {name!r} needs a default and a "
                    "description (its help)"
                )
            specs.append(
                OptionSpec(
                    paradigm=paradigm,
                    field=name,
                    flag=f"--{paradigm}-{name.replace('_', '-')}",
                    choices=_choices(paradigm, name, info.annotation),
                    default=str(_plain(info.default)),
                    help=info.description,
                )
            )
    return specs


def collect(values: Mapping[str, Any]) -> dict[str, ParadigmOptions]:
    """The paradigms' options models from a command's ``<paradigm>__<field>`` parameters.

    Parameters of other names are ignored; a paradigm none of whose options were given gets
    its defaults.
    """
    fields: dict[str, dict[str, Any]] = {}
    for dest, value in values.items():
        paradigm, separator, name = dest.partition("__")
        if separator and value is not None:
            fields.setdefault(paradigm, {})[name] = value
    chosen = {}
    for paradigm, given in fields.items():
        model = options_model(paradigm)
        if model is not None:
            chosen[paradigm] = model(**given)
    return chosen
