"""What every command shares: the --lang and --dir options (and, re-exported for the commands, the usage error,
loading a submission and preparing the lab).

``--lang`` and ``--dir`` are declared once (``session_options``). The group takes them
(`kata --lang es next`) and so does every learner command (`kata next --lang es`); either way
they land on one ``Options`` object on ``ctx.obj`` (click's ``make_pass_decorator``), and a value
given after the subcommand wins over one given before it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import click

from checker.base.errors import UsageProblem  # noqa: F401  (what commands share)
from checker.base.i18n import LANGS, resolve_lang
from checker.engine.request import BAD_SECRET
from checker.loopfile.loading import read_loop_file  # noqa: F401
from checker.setting.lab import prepared_lab  # noqa: F401


@dataclass
class Options:
    """The options every learner command shares, wherever on the command line they were given."""

    lang: str | None = None
    workdir: str | None = None

    def session(self, *, need_katas: bool = True, track: str | None = None):
        """The learner's session (working folder, progress, catalogue; only ``track``'s katas when given)."""
        from checker.learn.session import open_session

        # --lang, else $KATA_LANG, else the course's language (kata.toml), else the locale: as every command speaks
        return open_session(self.workdir, current_lang(self.lang), need_katas=need_katas, track=track)


pass_options = click.make_pass_decorator(Options, ensure=True)


def _store(field: str):
    def callback(ctx: click.Context, _param: click.Parameter, value):
        if value is not None:
            options = ctx.find_object(Options)
            if options is None and ctx.obj is None:
                options = ctx.ensure_object(Options)
            if options is not None:
                setattr(options, field, value)
            # and in the run's meta, which a group keeping its own object (`kata mutants`) leaves alone
            ctx.meta[f"kata.{field}"] = value
            if field == "workdir":  # the working folder's record (its course and track) is read from there
                from checker.setting.course import use_workdir

                use_workdir(value)
        return value

    return callback


def stored_lang_option(fn):
    """``--lang``, stored on ``ctx.obj`` (an ``Options``) instead of passed as an argument."""
    return click.option("--lang", type=click.Choice(LANGS), default=None, expose_value=False, is_eager=True,
                        callback=_store("lang"),
                        help="Language of messages (default: $KATA_LANG, else the locale).")(fn)


def session_options(fn):
    """``--lang`` and ``--dir``, stored on ``ctx.obj`` (an ``Options``) instead of passed as arguments."""
    return click.option("--dir", "workdir", type=click.Path(file_okay=False), default=None, expose_value=False,
                        is_eager=True, callback=_store("workdir"),
                        help="Your working folder (default: $KATA_DIR, else the current directory).")(
        stored_lang_option(fn))


def track_option(fn=None, *, onto_group: bool = False):
    """``--track NAME``: which track's setting, reference and catalogue a command uses (see `kata tracks`).

    ``onto_group``: a subcommand's ``--track`` that acts as if given to its group (`kata mutants list --track NAME`):
    the group's ``ctx.obj`` gets the track and, unless --mutants-dir was given, the track's mutants folder."""
    if fn is None:
        return lambda f: track_option(f, onto_group=onto_group)
    text = ("The track (setting, reference, katas) to use: see `kata tracks` (default: the one the file's folder "
            "belongs to, else moons).")
    if not onto_group:
        return click.option("--track", "track", default=None, metavar="NAME", help=text)(fn)

    def onto(ctx: click.Context, _param: click.Parameter, track: str | None) -> None:
        if track:
            from checker.setting.tracks import track_named

            ctx.obj["track"] = chosen = track_named(track)
            if ctx.parent is None or ctx.parent.params.get("mutants_dir") is None:
                ctx.obj["mutants_dir"] = str(chosen.mutants_dir)

    return click.option("--track", default=None, metavar="NAME", expose_value=False, callback=onto, help=text)(fn)


def _secret(_ctx: click.Context, _param: click.Parameter, value: str | None) -> bytes | None:
    # read once, here: the children forked later (where a graded file runs) never inherit it
    os.environ.pop("KATA_SECRET", None)
    if value is None:
        return None
    if not value.strip():
        raise UsageProblem(BAD_SECRET.render(current_lang(None)))
    return value.encode("utf-8")


def secret_option(fn):
    """``--secret TEXT`` (else $KATA_SECRET; an empty $KATA_SECRET counts as unset): the grading secret, as bytes."""
    return click.option(
        "--secret", envvar="KATA_SECRET", default=None, metavar="TEXT", callback=_secret, show_envvar=False,
        help="Grading secret: the differential checks' arguments derive from it and the file's code, so the same "
             "file and secret give the same report, and nobody without it can predict them (default: "
             "$KATA_SECRET; without one, fresh arguments each run).",
    )(fn)


def use_course(path) -> None:
    """``--course PATH``: when PATH is a course folder (or its kata.toml), its tracks and default track are known
    wherever the command runs, as with ``$KATA_COURSE`` (a folder inside another course keeps its own)."""
    from pathlib import Path

    from checker.setting.course import COURSE_ENV, COURSE_FILE, PYPROJECT

    if path is None:
        return
    path = Path(path)
    if path.is_dir() or path.name in (COURSE_FILE, PYPROJECT):
        os.environ[COURSE_ENV] = str(path.resolve())


def lang_option(fn):
    return click.option(
        "--lang", type=click.Choice(LANGS), default=None,
        help="Language of messages (default: $KATA_LANG, else the locale).",
    )(fn)


def current_lang(lang: str | None) -> str:
    """``lang``, else the running command's --lang, else one given to the `kata` group, else $KATA_LANG,
    else the course's language (kata.toml), else the locale."""
    if lang is None:
        ctx = click.get_current_context(silent=True)
        if ctx is not None:  # a command's own --lang, else the one on ctx.obj
            options = ctx.find_object(Options)
            lang = (ctx.params.get("lang") or (options.lang if options is not None else None)
                    or ctx.meta.get("kata.lang"))
    if lang is None and not os.environ.get("KATA_LANG"):  # the course's language (kata.toml), else the locale
        lang = course_language()
    return resolve_lang(lang)


def course_language() -> str | None:
    """The ``language`` of the course folder (kata.toml) the command runs in, else None."""
    from checker.setting.course import CourseError, find_course

    try:
        course = find_course()
    except CourseError:
        return None
    return course.language if course is not None else None


def current_workdir(workdir: str | None) -> str | None:
    """``workdir``, else a --dir given to the `kata` group."""
    if workdir is None:
        ctx = click.get_current_context(silent=True)
        options = ctx.find_object(Options) if ctx is not None else None
        workdir = options.workdir if options is not None else None
    return workdir
