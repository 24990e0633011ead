"""Building the Typer commands (:mod:`bbox_lark.cli.commands`): options declared as data
(:class:`~bbox_lark.cli.console.CommandOption`) turned into Typer parameters, the help pages
without type noise, and ``convert``'s flags made from the converters' declared options.

Like the command modules, no ``from __future__ import annotations``: Typer evaluates the
annotations built here.
"""

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from typer.core import TyperCommand, TyperGroup

from bbox_lark.cli.console import CommandOption, OutputFormat

#: The Typer annotation of each kind of option.
_ANNOTATIONS: dict[str, Any] = {
    "flag": bool,
    "pair": bool | None,
    "text": str | None,
    "int": int | None,
    "path": Path | None,
    "list": list[str] | None,
    "format": OutputFormat | None,
}


def tidy_help(params: list[Any]) -> list[Any]:
    """Help pages without type noise: a flag shows no ``<bool>`` and a list of arguments no
    ``<list[str]>`` (its name already ends in ``...``); a repeatable option shows its item
    type. Applied to every command's parameters (help option included) as the group hands
    the command out, so a new option needs nothing here."""
    for param in params:
        if getattr(param, "metavar", None) is not None:
            continue
        if getattr(param, "is_flag", False) and not getattr(param, "count", False):
            param.metavar = ""
        elif getattr(param, "multiple", False) and hasattr(param, "display_type"):
            try:
                label = str(param.display_type(None))
            except Exception:  # another Typer: leave its help as it is
                continue
            param.metavar = re.sub(r"^<list\[(.*)\]>$", r"<\1>", label)
        elif getattr(param, "param_type_name", "") == "argument" and param.nargs != 1:
            setattr(param, "display_type_rich", lambda ctx: None)  # noqa: B010
    return params


class Group(TyperGroup):
    """The root command: tidies each command's help page (:func:`tidy_help`, paragraphs
    reflowed) as it hands the command out, and turns an error of the library's spine
    (:class:`~bbox_lark.errors.BboxLarkError`) that a command lets through into one line and
    its exit code (:func:`~bbox_lark.cli.console.exit_code_for`): the one place that does."""

    def invoke(self, ctx: Any) -> Any:
        from bbox_lark.errors import BboxLarkError

        try:
            return super().invoke(ctx)
        except BboxLarkError as error:
            from bbox_lark.cli.console import exit_code_for, print_error

            print_error(str(error))
            raise typer.Exit(exit_code_for(error)) from None

    def get_params(self, ctx: Any) -> list[Any]:
        return tidy_help(super().get_params(ctx))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            tidy_help(command.get_params(ctx))
            if command.help:  # docstring paragraphs reflow to the terminal's width
                paragraphs = inspect.cleandoc(command.help).split("\n\n")
                command.help = "\n\n".join(" ".join(p.split()) for p in paragraphs)
        return command


def typer_option(option: CommandOption) -> Any:
    """The ``typer.Option`` of an option declared as data (:class:`CommandOption`)."""
    return typer.Option(*option.spellings, help=option.help, show_default=option.show_default)


def annotated(option: CommandOption) -> Any:
    """The Typer annotation of an option declared as data."""
    return Annotated[_ANNOTATIONS[option.kind], typer_option(option)]


def with_options(
    *options: CommandOption, at: int | None = None
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command one parameter per option declared as data, passed to it in
    ``**options``: after its own parameters, or from position ``at`` on."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)
        keyword = inspect.Parameter.KEYWORD_ONLY
        own = [p.replace(kind=keyword) for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        added = [
            inspect.Parameter(
                o.name, keyword, default=False if o.kind == "flag" else None, annotation=annotated(o)
            )
            for o in options
        ]
        where = len(own) if at is None else at
        parameters = [*own[:where], *added, *own[where:]]
        setattr(command, "__signature__", signature.replace(parameters=parameters))  # noqa: B010
        return command

    return decorate


class ConvertCommand(TyperCommand):
    """``convert``: its format options become flags (:func:`format_options`) when the
    command is first parsed or shown, so that running another command imports no
    converter."""

    _extended = False

    def get_params(self, ctx: Any) -> list[Any]:
        if not self._extended:
            self._extended = True
            self.params.extend(format_options())
            from typer.core import TyperOption

            from bbox_lark.convert import formats

            for param in self.params:  # --to and --from name the formats they take
                if isinstance(param, TyperOption) and param.name in ("to", "from_"):
                    able = (f for f in formats() if (f.write if param.name == "to" else f.read))
                    names = ", ".join(f.name for f in able)
                    param.help = f"{param.help} One of: {names}."
        return cast(list[Any], super().get_params(ctx))


def format_options() -> list[Any]:
    """One click option per option a converter declares (``Format.options``), built by Typer
    from a signature: a new format or option needs no change here."""

    def options(**chosen: Any) -> None:  # pragma: no cover - never called
        del chosen

    setattr(options, "__signature__", format_flags())  # noqa: B010
    holder = typer.Typer(add_completion=False)  # completion is the top-level command's
    holder.command()(options)
    return list(typer.main.get_command(holder).params)


def format_flags() -> inspect.Signature:
    from bbox_lark.convert import SHARED_OPTIONS, formats

    keyword = inspect.Parameter.KEYWORD_ONLY
    declared: dict[str, list[tuple[str, Any]]] = {o.name: [("convert", o)] for o in SHARED_OPTIONS}
    for fmt in formats():
        for option in fmt.options:
            declared.setdefault(option.name, []).append((fmt.name, option))
    flags = []
    for name, owners in declared.items():
        option = owners[0][1]
        helps = " ".join(dict.fromkeys(o.help for _, o in owners))
        if option.choices:
            helps += f" One of: {', '.join(option.choices)}."
        annotation: Any = bool | None if isinstance(option.default, bool) else str | None
        flag = (
            option.flag if not isinstance(option.default, bool) else f"{option.flag}/--no-{option.flag[2:]}"
        )
        flags.append(
            inspect.Parameter(
                name,
                keyword,
                default=None,
                annotation=Annotated[annotation, typer.Option(flag, help=helps, show_default=False)],
            )
        )
    return inspect.Signature(flags)


def without_var_keyword(command: Callable[..., None]) -> Callable[..., None]:
    """Hide ``**options`` from Typer: :class:`ConvertCommand` adds those flags itself."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    setattr(command, "__signature__", signature.replace(parameters=own))  # noqa: B010
    return command


#: ``--redact`` of the commands that write an artefact for others (``export``).
RedactSecrets = Annotated[
    bool,
    typer.Option(
        "--redact", help="Replace each secret (the S codes) with [redacted:KIND] in what is written."
    ),
]
#: ``--keep-secrets``: write a file that holds a provider's credential as it is (docs/reference.md#secrets).
KeepSecrets = Annotated[
    bool,
    typer.Option(
        "--keep-secrets",
        help="Write files that hold a provider's credential (S001) as they are; without it or"
        " --redact, such a file is refused (exit 1).",
    ),
]
