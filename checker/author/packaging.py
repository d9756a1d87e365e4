"""`kata autograder gradescope|github|docker`: kata packaged for the graders instructors use.

- ``gradescope``: ``OUT/autograder.zip``, what Gradescope's "Configure autograder" takes: ``setup.sh`` (run once
  when the image is built: the CPU build of torch first, then kata), ``run_autograder`` (run for every
  submission: ``kata check FILE --format gradescope`` into ``results/results.json``), kata itself under ``kata/``
  (unless ``kata`` names a pip requirement), the course folder under ``course/`` (run_autograder runs kata
  from inside it, so kata finds it) and the grading secret as ``secret`` when one is given.
- ``github``: ``OUT/.github/workflows/kata.yml``, a GitHub Actions workflow for an assignment's template
  repository (GitHub Classroom too): it checks the learner's file on every push, its JUnit report kept; a course
  is fetched from its private repository (``--course-repo``) with a token in an Actions secret.
- ``docker``: ``OUT/Dockerfile`` (and what it copies), an image that grades a mounted class folder into a
  mounted gradebook with ``kata grade``; its first lines say how to run it with no network.

Every grader is given the course explicitly: ``--course`` (its [points] and [read] weigh every score, as in `kata
grade --course`) and ``--lang`` (the course's ``language`` unless --lang is given, never the packaging machine's
locale). The GitHub template never holds the course: the workflow fetches it from a private repository.

The scripts are templates in ``checker/templates/autograder/``. Both scripts honour ``AUTOGRADER_ROOT``
(default ``/autograder``) and ``KATA_VENV`` (default ``/opt/kata``), and run_autograder ``KATA_BIN`` (default
``$KATA_VENV/bin/kata``), so a test runs them in a scratch folder exactly as Gradescope would run them.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import stat
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from checker import __version__
from checker.base.errors import UsageProblem
from checker.base.files import atomic_write, new_file_mode
from checker.base.i18n import Message

TORCH = "2.13.0"
"""The torch every artefact installs (its CPU build: kata needs no GPU, and it is a fraction of the size)."""
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
COURSE_FILE = "kata.toml"
"""What makes a folder a course folder (kata finds it from the working folder upwards)."""

_PACKAGE = Path(__file__).resolve().parents[1]
_CHECKOUT = _PACKAGE.parent


def _source_parts() -> list[str]:
    """What ``pip install`` of kata's source needs, as pyproject.toml says: itself, the readme, the wheel's
    packages and the folders it force-includes (the katas, mutants, solutions, tracks and guide)."""
    from checker.base.toml import read_toml

    project = read_toml(_CHECKOUT / "pyproject.toml", ValueError)
    wheel = project.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {}).get("wheel", {})
    readme = project.get("project", {}).get("readme")
    return ["pyproject.toml", *([readme] if isinstance(readme, str) else []), *wheel.get("packages", ["checker"]),
            *wheel.get("force-include", {})]

ONE_FILE = Message(
    en="Submit exactly one .py or .ipynb file (found %d).",
    es="Entrega exactamente un archivo .py o .ipynb (se encontraron %d).",
)
NO_RESULT = Message(
    en="kata could not grade the submission (exit status %d); ask your instructor.",
    es="kata no pudo evaluar la entrega (código de salida %d); avisa a tu profesor.",
)

PROBLEMS = {
    "installed": Message(
        en="kata runs from an installed package ({package}), not from a checkout of its source, so there is nothing "
           "to bundle: give --kata with a pip requirement (e.g. 'kata @ git+https://HOST/YOU/kata') or a wheel file",
        es="kata se ejecuta desde un paquete instalado ({package}), no desde una copia de su código, así que no hay "
           "nada que empaquetar: da --kata con un requisito de pip (p. ej. 'kata @ git+https://HOST/TU/kata') o un "
           "archivo wheel"),
    "no_toml": Message(en="--course {course}: the folder holds no {toml}, so it is no course folder",
                       es="--course {course}: la carpeta no contiene {toml}, así que no es una carpeta de curso"),
    "course_file": Message(
        en="--course {course} is a file: give the course folder (the one holding {toml}); a course file of points "
           "is read by `kata grade` (and `kata autograder docker`)",
        es="--course {course} es un archivo: da la carpeta del curso (la que contiene {toml}); un archivo de puntos "
           "del curso lo leen `kata grade` (y `kata autograder docker`)"),
    "no_course": Message(en="--course {course}: no such folder", es="--course {course}: no existe esa carpeta"),
    "no_wheel": Message(en="--kata {kata}: no such wheel file", es="--kata {kata}: no existe ese archivo wheel"),
    "empty_kata": Message(en="--kata is empty: give a pip requirement for kata, or a wheel file",
                          es="--kata está vacío: da un requisito de pip para kata, o un archivo wheel"),
    "exists": Message(en="{paths} already exist(s): use --force to replace, or choose another -o",
                      es="{paths} ya existe(n): usa --force para reemplazarlo, o elige otra carpeta -o"),
    "out_file": Message(en="-o {out}: that is a file, not a folder", es="-o {out}: es un archivo, no una carpeta"),
    "out_mkdir": Message(en="-o {out}: cannot create the folder ({why})",
                         es="-o {out}: no se puede crear la carpeta ({why})"),
    "file": Message(en="--file {file}: give the learner's file name in the repository, ending in .py or .ipynb",
                    es="--file {file}: da el nombre del archivo del estudiante en el repositorio, acabado en .py o "
                       ".ipynb"),
    "course_repo": Message(
        en="--course {course}: a GitHub template repository is what every student gets, so the course (its "
           "reference and mutants: the answer key) never goes in it; keep the course in a private repository and "
           "give it with --course-repo OWNER/NAME (docs/autograding.md, \"GitHub Classroom\")",
        es="--course {course}: un repositorio plantilla de GitHub es lo que recibe cada estudiante, así que el curso "
           "(su referencia y sus mutantes: las respuestas) nunca va en él; guarda el curso en un repositorio privado "
           "y dalo con --course-repo PROPIETARIO/NOMBRE (docs/autograding.md, \"GitHub Classroom\")"),
    "repo_alone": Message(
        en="--course-repo goes with --course: the course folder (its copy on this machine) says the course's "
           "language and weights, which the workflow passes to kata",
        es="--course-repo va con --course: la carpeta del curso (su copia en esta máquina) dice el idioma y los "
           "pesos del curso, que el flujo de trabajo pasa a kata"),
    "bad_repo": Message(en="--course-repo {repo}: give a GitHub repository as OWNER/NAME",
                        es="--course-repo {repo}: da un repositorio de GitHub como PROPIETARIO/NOMBRE"),
    "bad_course": Message(en="--course {course}: {why}", es="--course {course}: {why}"),
    "course_only": Message(
        en="--course and --only both choose the checks: list them in the course file's [points]",
        es="--course y --only eligen las dos las comprobaciones: enuméralas en los [points] del archivo del curso"),
    "no_course_given": Message(en="give the course folder with --course DIR (the folder holding kata.toml)",
                               es="da la carpeta del curso con --course DIR (la carpeta que contiene kata.toml)"),
    "students_again": Message(
        en="--course {course} is already a students' copy: make a new one from the course folder itself",
        es="--course {course} ya es una copia para estudiantes: haz otra desde la propia carpeta del curso"),
    "students_reference_data": Message(
        en="track {track}: its data is its reference's own make_data, so a students' copy (no reference) could not "
           "compute it; give the track a [data] file or dataset before handing the course out",
        es="recorrido {track}: sus datos son el make_data de su propia referencia, así que una copia para "
           "estudiantes (sin referencia) no podría calcularlos; da al recorrido un archivo o conjunto de datos en "
           "[data] antes de repartir el curso"),
    "students_outside": Message(
        en="track {track}: {path} lies outside the course folder {course}, so a copy of the folder cannot carry it",
        es="recorrido {track}: {path} está fuera de la carpeta del curso {course}, así que una copia de la carpeta "
           "no puede llevarlo"),
    "students_none": Message(en="--course {course}: the course has no track of its own to hand out",
                             es="--course {course}: el curso no tiene ningún recorrido propio que repartir"),
    "students_out": Message(en="-o {out}: the folder is not empty; choose a new folder for the students' copy",
                            es="-o {out}: la carpeta no está vacía; elige una carpeta nueva para la copia de los "
                               "estudiantes"),
    "only": Message(en="--only: unknown check id(s) {ids} (`kata checks` lists them)",
                    es="--only: comprobación(es) desconocida(s) {ids} (`kata checks` las enumera)"),
}


def _problem(key: str, lang: str, **values) -> UsageProblem:
    return UsageProblem(PROBLEMS[key].render(lang, **values))


@dataclass(frozen=True)
class Options:
    """What every artefact is built from."""

    kata: str | None = None
    """A pip requirement (or a wheel file) for kata; None: a copy of this kata's source, bundled."""
    course: Path | None = None
    """A course folder (holding kata.toml), bundled, kata run from inside it; or (docker only) a course file."""
    track: str | None = None
    only: tuple[str, ...] = ()
    lang: str = "en"
    file: str = "loop.py"
    """The learner's file in the repository (github)."""
    course_repo: str | None = None
    """(github) The private repository (OWNER/NAME) the workflow fetches the course folder from, with the token in
    the Actions secret KATA_COURSE_TOKEN: the course never goes into the students' template."""
    course_ref: str | None = None
    """(github) The branch or tag of ``course_repo`` to fetch (default: its default branch)."""


# --------------------------------------------------------------------------- what goes in


def _walk(path: Path) -> Iterator[Path]:
    """Every file under ``path`` (itself, if a file), sorted, without caches and compiled files."""
    if path.is_file():
        yield path
        return
    for p in sorted(path.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc" and not p.name.startswith(".#"):
            yield p


def kata_source(lang: str = "en") -> list[tuple[Path, str]]:
    """(file, its path inside the bundle) for kata's own source, as ``pip install`` builds it."""
    if not (_CHECKOUT / "pyproject.toml").is_file() or not (_CHECKOUT / "solutions").is_dir():
        raise _problem("installed", lang, package=_PACKAGE)
    files = []
    for part in _source_parts():
        for p in _walk(_CHECKOUT / part):
            files.append((p, p.relative_to(_CHECKOUT).as_posix()))
    return files


def _course_files(course: Path) -> list[tuple[Path, str]]:
    """The course folder's files, hidden ones (``.git``, a gradebook's ``.secret``) left out."""
    files = [(p, p.relative_to(course)) for p in _walk(course)]
    return [(p, rel.as_posix()) for p, rel in files if not any(part.startswith(".") for part in rel.parts)]


def check_course(course: Path | None, *, file_ok: bool, lang: str = "en") -> str | None:
    """``"folder"``, ``"file"`` (a course file, where ``file_ok``) or None; UsageProblem for anything else."""
    if course is None:
        return None
    if course.is_dir():
        if not (course / COURSE_FILE).is_file():
            raise _problem("no_toml", lang, course=course, toml=COURSE_FILE)
        return "folder"
    if course.is_file() and file_ok:
        return "file"
    if course.is_file():
        raise _problem("course_file", lang, course=course, toml=COURSE_FILE)
    raise _problem("no_course", lang, course=course)


def course_folder(course: Path | None, lang: str = "en"):
    """The course a course folder's kata.toml declares (``checker.setting.course.CourseFolder``), else None
    (``course`` is None or no course folder); a kata.toml that cannot be read is exit 2, naming the field."""
    if course is None or not (course / COURSE_FILE).is_file():
        return None
    from checker.setting.course import CourseError, parse_course

    try:
        return parse_course(course)
    except CourseError as exc:
        raise _problem("bad_course", lang, course=course, why=exc) from None


def _weights(options: Options, seen_as: str) -> str | None:
    """``seen_as`` (the course as the grader sees it) where the course weighs the checks (a course file, or a
    folder whose kata.toml has [points]), else None; --only beside weights is exit 2."""
    if options.course is None:
        return None
    if options.course.is_dir():
        folder = course_folder(options.course, options.lang)
        if folder is None or not folder.has_points:
            return None
    if options.only:
        raise _problem("course_only", options.lang)
    return seen_as


def _kata_install(options: Options, where: str) -> tuple[str, list[tuple[Path, str]]]:
    """What pip installs as kata, as shell words (``where``: the bundle's path where the target machine sees it,
    already fit for a shell), and the files to bundle for it."""
    if options.kata is None:
        return where, [(p, f"kata/{rel}") for p, rel in kata_source(options.lang)]
    wheel = Path(options.kata)
    if options.kata.endswith(".whl"):
        if not wheel.is_file():
            raise _problem("no_wheel", options.lang, kata=options.kata)
        return f"{where}/{_shell_quote(wheel.name)}", [(wheel, f"kata/{wheel.name}")]
    if not options.kata.strip():
        raise _problem("empty_kata", options.lang)
    return _shell_quote(options.kata), []


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _check_args(options: Options, course: str | None = None) -> list[str]:
    """kata's arguments in every packaged grader: the language, track and checks, and ``course`` (the course
    folder as the grader sees it) so that its [points] and [read] weigh every score as `kata grade --course` does."""
    args = ["--lang", options.lang]
    if course is not None:
        args += ["--course", course]
    if options.track:
        args += ["--track", options.track]
    for cid in options.only:
        args += ["--only", cid]
    return args


def _render(name: str, **values) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("checker", "templates/autograder"),
                             autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True,
                             comment_start_string="{%#", comment_end_string="#%}")  # bash's ${#x[@]} stays
    env.filters["sh"] = _shell_quote
    return env.get_template(name).render(version=__version__, torch=TORCH, torch_index=TORCH_CPU_INDEX,
                                         **values)


def _refuse_existing(paths: Sequence[Path], force: bool, lang: str) -> None:
    there = [str(p) for p in paths if p.exists() or p.is_symlink()]
    if there and not force:
        raise _problem("exists", lang, paths=", ".join(there))


def _out_folder(out: Path, lang: str) -> None:
    if out.exists() and not out.is_dir():
        raise _problem("out_file", lang, out=out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _problem("out_mkdir", lang, out=out, why=exc.strerror) from None


# --------------------------------------------------------------------------- Gradescope


def _zero_results(output: str) -> str:
    """A results.json scoring 0 with ``output`` (holding one ``%d``), as a printf format, shell-quoted."""
    line = json.dumps({"score": 0, "output": output, "output_format": "text", "tests": []}, ensure_ascii=False)
    return _shell_quote(line.replace("\\", "\\\\") + "\\n")


def gradescope_scripts(options: Options, *, has_secret: bool) -> dict[str, str]:
    """setup.sh and run_autograder's text."""
    kata, _ = _kata_install(options, '"$ROOT/source/kata"')
    bundled = options.kata is None or options.kata.endswith(".whl")
    # run_autograder runs kata inside the course folder: `--course .` is that folder
    course = _weights(options, ".")
    values = dict(kata=kata, bundled=bundled, course=options.course is not None,
                  secret=has_secret, check_args=" ".join(_shell_quote(a) for a in _check_args(options, course)),
                  one_file=_zero_results(ONE_FILE.render(options.lang)),
                  no_result=_zero_results(NO_RESULT.render(options.lang)))
    return {"setup.sh": _render("setup.sh.j2", **values), "run_autograder": _render("run_autograder.j2", **values)}


def _zip_entry(zf: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (stat.S_IFREG | mode) << 16
    zf.writestr(info, data)


def build_gradescope(out: Path, options: Options, *, secret: bytes | None, force: bool = False) -> Path:
    """``out/autograder.zip``, written whole or not at all; the path."""
    check_course(options.course, file_ok=False, lang=options.lang)
    _out_folder(out, options.lang)
    target = out / "autograder.zip"
    _refuse_existing([target], force, options.lang)
    scripts = gradescope_scripts(options, has_secret=secret is not None)
    _, kata_files = _kata_install(options, "")
    course_files = [(p, f"course/{rel}") for p, rel in _course_files(options.course)] if options.course else []
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in ("setup.sh", "run_autograder"):
            _zip_entry(zf, name, scripts[name].encode("utf-8"), 0o755)
        if secret is not None:
            _zip_entry(zf, "secret", secret + b"\n", 0o600)
        for path, name in [*kata_files, *course_files]:
            _zip_entry(zf, name, path.read_bytes(), 0o644)
    _write_bytes(target, buf.getvalue())
    return target


def _write_bytes(path: Path, data: bytes) -> None:
    """Like ``atomic_write``, for bytes: a temporary file beside ``path`` renamed over it, mode per the umask."""
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, new_file_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------- GitHub Actions


WORKFLOW = Path(".github") / "workflows" / "kata.yml"
GITHUB_BUNDLE = ".github/kata"


def _copy_tree(files: Sequence[tuple[Path, str]], root: Path) -> None:
    for src, rel in files:
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        os.chmod(dst, new_file_mode())


def _replace_folder(folder: Path, files: Sequence[tuple[Path, str]], prefix: str) -> None:
    """``folder`` made anew from ``files`` (their paths under ``prefix``)."""
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)
    _copy_tree([(p, rel[len(prefix):]) for p, rel in files if rel.startswith(prefix)], folder)


COURSE_CHECKOUT = ".kata-course"
"""Where the workflow checks the course's private repository out, inside the runner's workspace (never committed)."""
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def build_github(out: Path, options: Options, *, force: bool = False) -> list[Path]:
    """``out/.github/workflows/kata.yml`` (and kata's source under ``out/.github/kata``, where bundled); the paths
    written. The course is never written into ``out`` (the template every student gets): the workflow fetches it
    from ``options.course_repo`` with a token the students never see."""
    check_course(options.course, file_ok=False, lang=options.lang)
    if (options.course is None) != (options.course_repo is None):
        raise _problem("course_repo" if options.course_repo is None else "repo_alone", options.lang,
                       course=options.course)
    if options.course_repo is not None and not _REPO.fullmatch(options.course_repo):
        raise _problem("bad_repo", options.lang, repo=options.course_repo)
    if "/" in options.file or "\\" in options.file or not options.file.endswith((".py", ".ipynb")):
        raise _problem("file", options.lang, file=options.file)
    _out_folder(out, options.lang)
    kata, kata_files = _kata_install(options, f"./{GITHUB_BUNDLE}")
    targets = [out / WORKFLOW]
    if kata_files:
        targets.append(out / GITHUB_BUNDLE)
    _refuse_existing(targets, force, options.lang)
    course = COURSE_CHECKOUT if options.course_repo else None
    # the check runs inside the fetched course folder: `--course .` is that folder
    args = _check_args(options, _weights(options, "."))
    text = _render("kata.yml.j2", kata=kata, file=options.file, course=course, course_repo=options.course_repo,
                   course_ref=options.course_ref, check_args=" ".join(_shell_quote(a) for a in args),
                   secret_expression="${{ secrets.KATA_SECRET }}",
                   token_expression="${{ secrets.KATA_COURSE_TOKEN }}")
    if kata_files:
        _replace_folder(out / GITHUB_BUNDLE, kata_files, "kata/")
    (out / WORKFLOW).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out / WORKFLOW, text)
    return targets


# --------------------------------------------------------------------------- Docker


def build_docker(out: Path, options: Options, *, force: bool = False) -> list[Path]:
    """``out/Dockerfile`` and what it copies (``out/kata``, ``out/course``); the paths written."""
    kind = check_course(options.course, file_ok=True, lang=options.lang)
    _out_folder(out, options.lang)
    kata, kata_files = _kata_install(options, "/opt/kata-src")
    targets = [out / "Dockerfile"]
    if kata_files:
        targets.append(out / "kata")
    if kind:
        targets.append(out / "course")
    _refuse_existing(targets, force, options.lang)
    # the course folder is the image's working folder, and named: its [points] weigh every grade
    args = _check_args(options, _weights(options, f"/course/{options.course.name}" if kind == "file" else "/course"))
    entry = ["kata", "grade", "/class", "-o", "/gradebook", *args]
    text = _render("Dockerfile.j2", kata=kata, bundled=bool(kata_files), course=kind,
                   entrypoint=json.dumps(entry))
    if kata_files:
        _replace_folder(out / "kata", kata_files, "kata/")
    if kind == "folder":
        _replace_folder(out / "course", _course_files(options.course), "")
    elif kind == "file":
        _replace_folder(out / "course", [(options.course, options.course.name)], "")
    atomic_write(out / "Dockerfile", text)
    return targets


def validate(options: Options) -> None:
    """Without a course folder, the track and checks must be this kata's own: exit 2 before anything is written
    for an unknown one (a course folder may bring tracks of its own, so kata checks them where it runs)."""
    if options.course is not None and options.course.is_dir():
        return
    from checker.checks import ordered_ids
    from checker.setting.tracks import track_named

    track = track_named(options.track)
    try:
        ordered_ids(list(options.only) or None, device="cpu", track=track)
    except KeyError as exc:
        raise _problem("only", options.lang, ids=exc.args[0]) from None


# --------------------------------------------------------------------------- the students' copy


def _course_tracks(course, lang: str) -> list:
    """The course's own tracks (their files in the course's track folders), read with the course known."""
    from checker.setting.tracks import TrackError, all_tracks

    folders = {f.resolve() for f in course.track_folders}
    try:
        tracks = [t for t in all_tracks().values() if t.file.parent.resolve() in folders]
    except TrackError as exc:
        raise _problem("bad_course", lang, course=course.root, why=exc) from None
    if not tracks:
        raise _problem("students_none", lang, course=course.root)
    return tracks


def _inside(course, track_id: str, path: Path, lang: str) -> str:
    """``path`` relative to the course folder (a POSIX path); exit 2 when it lies outside it."""
    try:
        return Path(os.path.realpath(path)).relative_to(course.root.resolve()).as_posix()
    except ValueError:
        raise _problem("students_outside", lang, track=track_id, path=path, course=course.root) from None


def _students_toml(course) -> str:
    """The students' kata.toml: the course's title, language, track, track folders, katas and [read], marked
    ``students = true``; no [points] (the graders weigh) and no ``mutants`` (none travel)."""
    raw = course.raw
    lines = ["# A students' copy of the course, written by `kata autograder students`: no reference, no mutant.",
             "students = true"]
    for name in ("title", "language", "track", "katas"):
        if isinstance(raw.get(name), str):
            lines.append(f"{name} = {json.dumps(raw[name], ensure_ascii=False)}")
    lines.append(f"tracks = {json.dumps(list(course.tracks), ensure_ascii=False)}")
    read = raw.get("read") if isinstance(raw.get("read"), dict) else {}
    if read:
        lines += ["", "[read]", *(f"{json.dumps(k, ensure_ascii=False)} = {json.dumps(v, ensure_ascii=False)}"
                                  for k, v in read.items() if isinstance(v, str))]
    return "\n".join(lines) + "\n"


def _track_parts(course, track, lang: str) -> tuple[list[tuple[Path, str]], dict[str, str]]:
    """(files to copy: the track file, its data file, its katas; starters to write, by path) of one track."""
    from checker.catalogue.katas import KataFileError, load_katas, starter_source
    from checker.setting.course import STARTERS

    if track.data.source == "reference":
        raise _problem("students_reference_data", lang, track=track.id)
    files = [(track.file, _inside(course, track.id, track.file, lang))]
    if track.data.source == "file" and track.data.path:
        files.append((Path(track.data.path), _inside(course, track.id, Path(track.data.path), lang)))
    starters: dict[str, str] = {}
    try:
        katas = load_katas(track=track.id)  # the ready ones (KATA_DRAFTS=1: the drafts too)
        for kata in katas:
            files.append((kata.path, _inside(course, track.id, kata.path, lang)))
            if kata.practice is None:  # a practice kata has answers, not a starter loop
                starters[f"{STARTERS}/{track.id}/{kata.slug}.py"] = starter_source(kata)
    except (KataFileError, OSError, ValueError, KeyError) as exc:
        raise _problem("bad_course", lang, course=course.root, why=exc) from None
    return files, starters


def build_students(course_dir: Path | None, out: Path, *, lang: str = "en") -> list[Path]:
    """``out``: the course as its students get it (``docs/courses.md``, "How students get a course"): its kata.toml
    (``students = true``, no [points]), each track's file and data file, its katas, and each kata's starter under
    ``starters/<track>/``, written here from the reference and the mutant; never a reference, a mutant or a proof.
    Returns the paths written."""
    if course_dir is None:
        raise _problem("no_course_given", lang)
    check_course(course_dir, file_ok=False, lang=lang)
    course = course_folder(course_dir, lang)
    if course.students:
        raise _problem("students_again", lang, course=course_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise _problem("out_file" if not out.is_dir() else "students_out", lang, out=out)
    files: list[tuple[Path, str]] = []
    texts: dict[str, str] = {COURSE_FILE: _students_toml(course)}
    for track in _course_tracks(course, lang):
        copied, starters = _track_parts(course, track, lang)
        files += copied
        texts.update(starters)
    _out_folder(out, lang)
    _copy_tree(files, out)
    for rel, text in texts.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out / rel, text)
    return sorted({out / rel for _, rel in files} | {out / rel for rel in texts})
