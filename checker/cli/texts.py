"""The command line in the run's language: every command's and option's help, the placeholders of values
(``NAME``, ``DIRECTORY``), and click's own words (``Usage:``, ``Options:``, its errors), from one gettext
catalogue per language: ``checker/locale/LANG/LC_MESSAGES/kata.po`` (compiled to ``kata.mo`` by
``python .ci/compile_texts.py``; CONTRIBUTING.md, "Texts in another language").

In a catalogue an entry's ``msgid`` is the English text as the code writes it (a docstring as ``inspect.cleandoc``
leaves it). A command's help has the command's path as its context (``msgctxt "kata next"``), an option's the
path and the option's longest name (``msgctxt "kata next --skip"``); a help that many options share word for word
(``--dir``, ``--lang``) may have no context. Placeholders have the context ``metavar`` (``NAME``), value types
``type`` (``directory``, ``float``), the usage line's ``[OPTIONS]`` ``usage``; click's own words have none (their
``msgid`` is click's English, which click looks up itself, through gettext, in the domain ``kata``).

``texts_in`` puts a run in its language: the language of ``--lang`` wherever it is on the command line, else
$KATA_LANG, else the locale. For the run, each command and option holds its translated text (restored after),
and gettext's domain and language are click's catalogue. A text without an entry stays English
(tests/test_help_es.py names every one).
"""

from __future__ import annotations

import gettext
import inspect
import os
from collections.abc import Iterator
from contextlib import contextmanager

import click

from checker.base.i18n import DOMAIN, LOCALE_DIR, catalogue

# where ``ctx.meta`` keeps the --lang found on the command line (shared by every context of one run)
LANG_KEY = "kata.help_lang"


def lang_on_command_line(args: list[str]) -> str | None:
    """The value of the last ``--lang`` in ``args`` (``--lang es`` or ``--lang=es``), before any ``--``."""
    found = None
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--lang" and i + 1 < len(args):
            found = args[i + 1]
        elif arg.startswith("--lang="):
            found = arg.split("=", 1)[1]
    return found


def option_name(param: click.Parameter) -> str:
    """An option's longest name (``--batch-size``): with the command's path, its help's context."""
    return max(param.opts, key=len)


def translated(texts: gettext.NullTranslations, context: str, english: str | None) -> str | None:
    """``english`` in the catalogue's language: its entry under ``context``, else its entry without one, else
    None."""
    if not english:
        return None
    key = inspect.cleandoc(english)
    for found in (texts.pgettext(context, key), texts.gettext(key)):
        if found != key:
            return found
    return None


class _Swaps:
    """Attributes of click's objects set to their translations for one run, and put back after it."""

    def __init__(self, texts: gettext.NullTranslations):
        self.texts, self.saved = texts, []

    def set(self, obj: object, attr: str, value: object, *, none_too: bool = False) -> None:
        """``obj.attr = value`` for the run; a None ``value`` (no translation) leaves it, unless ``none_too``."""
        if (value is not None or none_too) and value != getattr(obj, attr):
            self.saved.append((obj, attr, getattr(obj, attr)))
            setattr(obj, attr, value)

    def restore(self) -> None:
        for obj, attr, value in reversed(self.saved):
            setattr(obj, attr, value)
        self.saved.clear()

    def word(self, context: str, english: str | None) -> str | None:
        """A placeholder's or a type's translation (``context``: metavar, type, usage), else None."""
        if not english:
            return None
        found = self.texts.pgettext(context, english)
        return found if found != english else None

    def command(self, command: click.Command, path: str, parent: click.Context | None = None) -> None:
        """``command``'s texts, its parameters' and its subcommands', in the catalogue's language (``parent``: the
        context of the group holding it, whose settings, such as -h for --help, it inherits)."""
        text = translated(self.texts, path, command.help)
        if text is not None:
            self.set(command, "help", text)
            self.set(command, "short_help", None, none_too=True)  # the listing: the translation's first sentence
        self.set(command, "options_metavar", self.word("usage", command.options_metavar))
        if isinstance(command, click.Group):
            self.set(command, "subcommand_metavar", self.word("usage", command.subcommand_metavar))
        ctx = click.Context(command, parent=parent, info_name=path.split()[-1], **command.context_settings)
        for param in command.get_params(ctx):  # --help made now, in English, then translated like the rest
            self.param(param, path)
        for name, sub in getattr(command, "commands", {}).items():
            self.command(sub, f"{path} {name}", ctx)

    def param(self, param: click.Parameter, path: str) -> None:
        if isinstance(param, click.Option):
            self.set(param, "help", translated(self.texts, f"{path} {option_name(param)}", param.help))
        if param.metavar:
            self.set(param, "metavar", self.word("metavar", param.metavar))
        elif isinstance(param, click.Argument) and param.name:
            self.set(param, "metavar", self.word("metavar", param.name.upper()))
        self.set(param.type, "name", self.word("type", param.type.name))


@contextmanager
def texts_in(lang: str, group: click.Command) -> Iterator[None]:
    """For the time of one run: ``group``'s commands and options, and click's own words, in ``lang``."""
    texts = catalogue(lang)
    if type(texts) is gettext.NullTranslations:  # English, or a language without a catalogue: as written
        yield
        return
    swaps = _Swaps(texts)
    swaps.command(group, "kata")
    old_language, old_domain = os.environ.get("LANGUAGE"), gettext.textdomain()
    gettext.bindtextdomain(DOMAIN, str(LOCALE_DIR))
    gettext.textdomain(DOMAIN)
    os.environ["LANGUAGE"] = lang  # click's gettext calls read the language from the environment
    try:
        yield
    finally:
        gettext.textdomain(old_domain)
        if old_language is None:
            os.environ.pop("LANGUAGE", None)
        else:
            os.environ["LANGUAGE"] = old_language
        swaps.restore()
