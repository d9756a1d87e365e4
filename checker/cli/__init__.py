"""The `kata` command line. Only click code lives here; each command delegates to the package."""

from __future__ import annotations

import sys

import click

from checker import __version__
from checker.base.errors import Failure
from checker.base.i18n import resolve_lang
from checker.cli.autograder import autograder_group
from checker.cli.check import check_cmd, checks_cmd, tracks_cmd
from checker.cli.common import session_options
from checker.cli.explore import explore_cmd
from checker.cli.instructor import grade_cmd, new_cmd
from checker.cli.learner import register as register_learner
from checker.cli.mutants import mutants_group
from checker.cli.project import project_cmd
from checker.cli.run import run_cmd, trace_cmd
from checker.cli.texts import LANG_KEY, lang_on_command_line, texts_in
from checker.learn.messages import INTERRUPTED
from checker.sandbox.zygote import ZygoteError


class _Kata(click.Group):
    """The group: a sandbox that cannot start, or any error of the package, is said in one line, never as a
    traceback. A run speaks the language of its --lang, else $KATA_LANG, else the locale: its help pages, click's
    own words and errors included (checker.cli.texts)."""

    def main(self, args=None, *rest, **extra):
        args = list(sys.argv[1:] if args is None else args)
        with texts_in(resolve_lang(lang_on_command_line(args)), self):
            return super().main(args, *rest, **extra)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # before any option is read: `kata next --help --lang es` is a Spanish page, --help coming first
        lang = lang_on_command_line(args)
        if lang is not None:
            ctx.meta[LANG_KEY] = lang
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ZygoteError as exc:
            raise SandboxUnavailable(str(exc)) from None
        except Failure as exc:  # the package's own errors: said as click says its own, in the run's language
            raise Said(exc.render(resolve_lang(ctx.meta.get(LANG_KEY))), exc.exit_code) from None
        except KeyboardInterrupt:  # Ctrl-C: 130, the shell's code for it (1 would say "some checks fail")
            raise Interrupted(INTERRUPTED.render(resolve_lang(ctx.meta.get(LANG_KEY)))) from None


class Said(click.ClickException):
    """A ``checker.base.errors.Failure`` (or ``UsageProblem``) raised below the command line: one line, its exit
    code."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


class Interrupted(click.ClickException):
    """Ctrl-C during a command: one line saying so, exit code 130 (128 + SIGINT)."""

    exit_code = 130

    def show(self, file=None) -> None:
        click.echo(f"\n{self.message}", err=True)


class SandboxUnavailable(click.ClickException):
    exit_code = 2

    def format_message(self) -> str:
        return f"kata could not start the process that runs loop files: {self.message}"


@click.group(cls=_Kata, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kata", message="%(prog)s %(version)s")  # in every language
@session_options
def main() -> None:
    """kata: learn to write correct PyTorch training loops by fixing broken ones.

    Start with `kata next`, fix the file it writes, then `kata check`.
    """


main.add_command(run_cmd)
main.add_command(trace_cmd)
main.add_command(explore_cmd)
main.add_command(check_cmd)
main.add_command(checks_cmd)
main.add_command(tracks_cmd)
register_learner(main)
main.add_command(grade_cmd)
main.add_command(new_cmd)
main.add_command(mutants_group)
main.add_command(autograder_group)
main.add_command(project_cmd)
