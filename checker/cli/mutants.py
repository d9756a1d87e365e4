"""`kata mutants ...`: the mutant catalogue, its diffs, and the proof that the battery kills it.

Only click code: each command reads its arguments and calls checker.author.actions, which loads,
prints, verifies and generates. The group keeps --mutants-dir on ``ctx.obj`` for its commands.
"""

from __future__ import annotations

from pathlib import Path

import click

from checker.base.errors import UsageProblem
from checker.cli.common import current_lang, lang_option, stored_lang_option, track_option


@click.group("mutants")
@click.option(
    "--mutants-dir",
    type=click.Path(file_okay=False),
    envvar="KATA_MUTANTS_DIR",
    hidden=True,
    help="Read the mutants from this folder instead of the shipped one.",
)
@track_option
@stored_lang_option
@click.pass_context
def mutants_group(ctx: click.Context, mutants_dir: str | None, track: str | None) -> None:
    """The broken loops behind the katas, and the proof that the checks catch each one.

    Each track has its own mutants and reference: `kata mutants --track three-classes verify`.
    """
    from checker.setting.tracks import track_named

    ctx.ensure_object(dict)
    ctx.obj["track"] = chosen = track_named(track)
    # a --mutants-dir (or $KATA_MUTANTS_DIR) wins; else the track's folder
    ctx.obj["mutants_dir"] = mutants_dir or (str(chosen.mutants_dir) if track else None)


@mutants_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the catalogue as JSON.")
@track_option(onto_group=True)
@stored_lang_option
@click.pass_context
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """List every mutant: id, operator, where it applies, the checks that must kill it."""
    from checker.author.actions import load, print_catalogue

    print_catalogue(load(ctx.obj.get("mutants_dir")), as_json=as_json, lang=current_lang(None))


@mutants_group.command("show")
@click.argument("mutant_id", metavar="ID")
@track_option(onto_group=True)
@stored_lang_option
@click.pass_context
def show_cmd(ctx: click.Context, mutant_id: str) -> None:
    """Show mutant ID as a unified diff against the reference (coloured on a terminal)."""
    from checker.author.actions import one, print_mutant

    print_mutant(one(ctx.obj.get("mutants_dir"), mutant_id), ctx.obj["track"], current_lang(None))


@mutants_group.command("export")
@click.argument("mutant_id", metavar="ID")
@click.argument("dest", type=click.Path())
@click.option("--force", is_flag=True, help="Overwrite DEST if it exists.")
@click.option("--toml", "as_toml", is_flag=True,
              help="Write the mutant's own file (ID.toml) instead: a catalogue mutant to copy into a course's "
                   "mutants folder and adapt.")
@track_option(onto_group=True)
@stored_lang_option
@click.pass_context
def export_cmd(ctx: click.Context, mutant_id: str, dest: str, force: bool, as_toml: bool) -> None:
    """Write mutant ID's loop file to DEST (a file, or a folder to hold ID.py); with --toml, its mutant file."""
    from checker.author.actions import export, one

    export(one(ctx.obj.get("mutants_dir"), mutant_id), dest, force=force, track=ctx.obj["track"], as_toml=as_toml)


@mutants_group.command("verify")
@click.option("--only", multiple=True, metavar="ID", help="Verify only this mutant (repeatable).")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write a Stryker mutation-testing report (schema version 2) to this file.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write a self-contained HTML page with the kill matrix and every diff.",
)
@click.option(
    "--seeds",
    type=click.IntRange(1, 20),
    default=3,
    show_default=True,
    help="Run the reference under this many global RNG seeds; a check whose verdict changes is flaky.",
)
@click.option(
    "--all-checks",
    is_flag=True,
    help="Run every check on every mutant, also the checks that reach none of the code the mutant changed.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@click.option("--boundary", is_flag=True,
              help="Verify the boundary mutants instead of the catalogue: a threshold on one parameter of one "
                   "function (`kata mutants generate --boundary --dry-run` lists them); each must be killed under "
                   "every one of --seeds draws of the checks' arguments, and a survivor is a hole in the classes.")
@click.option("--all-tracks", is_flag=True, help="With --boundary: every track, one after the other.")
@click.option("--function", "functions", multiple=True, metavar="NAME",
              help="With --boundary: only this protocol function's parameters (repeatable).")
@track_option
@lang_option
@click.pass_context
def verify_cmd(ctx: click.Context, only, json_path, html_path, seeds, all_checks, quiet, boundary, all_tracks,
               functions, lang, track) -> None:
    """Grade the reference and every mutant; print the kill matrix.

    The reference runs the whole battery. A mutant runs the checks that reach the code it changed (a check
    reaching none of it behaves as on the reference, which passes it), and the whole battery again whenever
    that leaves it surviving or misses a check it declares; --all-checks runs every check on every mutant.

    Each verdict is recorded in the mutants folder's proofs.json (what `kata list` reads to tell a
    ready kata from a draft; commit it with the mutant files).

    Exit status: 0 when the reference passes every check under every seed and every mutant is
    killed by each check it declares; 1 otherwise (a survivor, a missed declared kill, a flaky or
    failing reference, a mutant that cannot be built or graded); 2 for a bad request.
    """
    from checker.author.actions import BOUNDARY_VERIFY_ONLY, boundary_mutants, verify

    if boundary or all_tracks or functions:
        if json_path or html_path or all_checks:
            raise UsageProblem(BOUNDARY_VERIFY_ONLY.render(current_lang(lang)))
        raise SystemExit(boundary_mutants(track or ctx.obj["track"], only=only, functions=functions,
                                          all_tracks=all_tracks, seeds=seeds, quiet=quiet, dry_run=False))
    if track:  # given after `verify` (`kata mutants verify --only ID --track NAME`): as if given to the group
        from checker.setting.tracks import track_named

        ctx.obj["track"] = chosen = track_named(track)
        if not ctx.obj.get("mutants_dir") or ctx.parent.params.get("mutants_dir") is None:
            ctx.obj["mutants_dir"] = str(chosen.mutants_dir)
    raise SystemExit(verify(ctx.obj.get("mutants_dir"), only=only, json_path=json_path, html_path=html_path,
                            seeds=seeds, quiet=quiet, lang=current_lang(lang), track=ctx.obj["track"],
                            all_checks=all_checks))


@mutants_group.command("doc")
@click.option("-o", "--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the page here (e.g. docs/katas.md) instead of printing it.")
@click.option("--katas-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Default: $KATA_KATAS_DIR, else the checkout's katas/.")
@stored_lang_option
@click.pass_context
def doc_cmd(ctx: click.Context, out_path: Path | None, katas_dir: Path | None) -> None:
    """The kata catalogue page (docs/katas.md), generated from the kata and mutant files.

    Drafts are left out. `kata new --check` refreshes docs/katas.md by itself once a kata is ready.
    """
    from checker.author.actions import write_doc

    write_doc(katas_dir, ctx.obj.get("mutants_dir"), out_path, ctx.obj["track"])


@mutants_group.command("generate")
@click.option(
    "--function",
    "functions",
    multiple=True,
    metavar="NAME",
    help="Mutate only this protocol function (repeatable; default: all but seed_everything's callers).",
)
@click.option(
    "--operator", "operators", multiple=True, metavar="NAME", help="Use only this operator (repeatable)."
)
@click.option(
    "--limit", type=click.IntRange(1), default=None, help="Grade at most this many generated mutants."
)
@click.option("--dry-run", is_flag=True, help="List the generated mutants without grading them.")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the generated mutants and their verdicts as a Stryker report.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@click.option("--no-cache", is_flag=True,
              help="Grade every mutant again (verdicts are cached per mutated source and checker version).")
@click.option("--boundary", is_flag=True,
              help="Generate the boundary mutants instead: at thresholds spread over each parameter's domain, a cap, "
                   "a floor, the first T rows, a behaviour switched on past T, at every parameter of every protocol "
                   "function; graded under one draw (`kata mutants verify --boundary --seeds N` for N).")
@click.option("--all-tracks", is_flag=True, help="With --boundary: every track.")
@stored_lang_option
@click.pass_context
def generate_cmd(ctx: click.Context, functions, operators, limit, dry_run, json_path, quiet, no_cache, boundary,
                 all_tracks) -> None:
    """Apply every operator at every sensible place of the reference and list the survivors.

    A survivor is a change no check notices: a gap in the battery, or a change that makes no
    difference (an equivalent mutant). Equivalents are recognised from the code (two statements that
    share nothing, a CUDA-only line) and by behaviour (every check measured exactly the reference's
    figures, e.g. an argument removed whose default gives the same); only the rest are listed as gaps.
    Verdicts are cached per (mutated source, checker version) in $KATA_CACHE_DIR (else ~/.cache/kata),
    so a re-run grades only what changed. Exit status: 0 when no gap is left, 1 otherwise.
    """
    from checker.author.actions import BOUNDARY_GENERATE_ONLY, boundary_mutants, generate

    if boundary or all_tracks:
        if operators or limit or json_path:
            raise UsageProblem(BOUNDARY_GENERATE_ONLY.render(current_lang(None)))
        code = boundary_mutants(ctx.obj["track"], only=(), functions=functions, all_tracks=all_tracks, seeds=1,
                                quiet=quiet, dry_run=dry_run)
        if code is not None:
            raise SystemExit(code)
        return
    code = generate(functions=functions, operators=operators, limit=limit, dry_run=dry_run, json_path=json_path,
                    quiet=quiet, no_cache=no_cache, track=ctx.obj["track"])
    if code is not None:  # None: --dry-run, nothing graded
        raise SystemExit(code)


