"""Issue 34's rough edges, as a new user met them: each one's behaviour, as the learner sees it."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.cli import main
from tests.conftest import REFERENCE
from tests.test_help_es import english_lines


def _reference_with(tmp_path: Path, name: str, old: str, new: str) -> Path:
    text = REFERENCE.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_a_crashing_run_in_spanish_says_no_english_line(runner, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    crash = _reference_with(tmp_path, "crash.py", "    model.train()\n", "    raise ValueError('boom')\n")
    result = runner.invoke(main, ["--lang", "es", "run", str(crash), "--epochs", "1"])
    assert result.exit_code == 1, result.output
    assert "Traceback (solo los marcos de tu archivo):" in result.output, result.output
    assert "ValueError: boom" in result.output and english_lines(result.output) == [], result.output
    english = runner.invoke(main, ["--lang", "en", "run", str(crash), "--epochs", "1"])
    assert "Traceback (your file's frames only):" in english.output, english.output


def test_kata_lang_es_run_of_a_loop_that_raises_prints_no_english_from_a_real_process(tmp_path: Path) -> None:
    """The issue's own command, `kata --lang es run BROKEN.py`, as a learner's shell runs it (an English locale):
    the error line, the traceback's heading and its frames, and nothing in English but the loop's own error."""
    import os
    import subprocess
    import sys

    crash = _reference_with(tmp_path, "roto.py", "    model.train()\n", "    raise ValueError('boom')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("KATA_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    done = subprocess.run([sys.executable, "-m", "checker", "--lang", "es", "run", crash.name, "--epochs", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**env, "LANG": "C.UTF-8", "NO_COLOR": "1"})
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "la ejecución se detuvo porque el bucle lanzó un error" in said, said
    assert "Traceback (solo los marcos de tu archivo):" in said and "ValueError: boom" in said, said
    assert english_lines(said) == [], said


def test_a_childs_error_text_is_said_in_both_languages() -> None:
    from checker.engine.worker import describe_exception, in_both

    said = in_both(describe_exception(SystemExit(3), "x.py"))
    assert said.render("en") == "your loop called exit(3) in the middle of the check"
    assert said.render("es") == "tu bucle llamó a exit(3) en mitad de la comprobación"
    said = in_both(describe_exception(MemoryError("cannot allocate memory"), "x.py"))
    assert said.render("es").startswith("tu bucle se quedó sin memoria") and "cannot allocate" in said.render("es")


@pytest.mark.parametrize(("steps", "en", "es"), [
    (1, "1 step per epoch at batch size 150", "1 paso por época con lotes de 150"),
    (19, "19 steps per epoch at batch size 150", "19 pasos por época con lotes de 150"),
])
def test_one_step_is_one_step(steps: int, en: str, es: str) -> None:
    from checker.learn.practice import steps_per_epoch

    assert steps_per_epoch(steps, 150).render("en") == en and steps_per_epoch(steps, 150).render("es") == es


@pytest.mark.parametrize("lang, said", [("en", "nothing you wrote was changed or lost"),
                                         ("es", "nada de lo que escribiste se ha cambiado ni perdido")])
def test_ctrl_c_during_a_check_exits_130_and_says_nothing_was_lost(runner, tmp_path: Path, monkeypatch,
                                                                  lang: str, said: str) -> None:
    import checker.learn.check

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(checker.learn.check, "check", interrupted)
    loop = tmp_path / "mine.py"
    loop.write_text(REFERENCE.read_text())
    result = runner.invoke(main, ["--lang", lang, "check", str(loop)])
    assert result.exit_code == 130, result.output
    assert said in result.output and "Aborted" not in result.output and "Traceback" not in result.output
    assert loop.read_text() == REFERENCE.read_text()


def test_a_loader_seeded_through_the_global_generator_is_named_as_the_cause(runner, tmp_path: Path,
                                                                             monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    loop = _reference_with(tmp_path, "global.py", "    generator = torch.Generator().manual_seed(seed)\n"
                           "    return DataLoader(\n"
                           "        TensorDataset(X, y), batch_size=batch_size, shuffle=True, generator=generator\n"
                           "    )", "    torch.manual_seed(seed)\n"
                           "    return DataLoader(TensorDataset(X, y), batch_size=batch_size, shuffle=True)")
    result = runner.invoke(main, ["--lang", "en", "check", str(loop), "--only", "repro.seeds"])
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert "the same order; what differed was drawn later, from the global random state" in text, text
    assert "takes its shuffle from the global generator" in text
    assert "started from the same weights and batch order" not in text


def test_a_file_missing_evaluate_hears_that_first(runner, tmp_path: Path, monkeypatch) -> None:
    """The real cause (a function missing) first; which track it was graded against, and --track, after."""
    monkeypatch.chdir(tmp_path)
    loop = _reference_with(tmp_path, "noeval.py", "def evaluate(", "def evaluate_model(")
    result = runner.invoke(main, ["--lang", "en", "check", str(loop)])
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert "does not follow loop protocol" in lines[0] and "missing function evaluate" in lines[1], lines
    assert lines[-1].startswith("graded against track moons"), lines


def test_always_the_last_states_the_tie_rule_its_check_applies() -> None:
    """best.history fails a `<=` tie-break with "the first one counts": the story says so first, in both
    languages."""
    import tomllib

    from checker.checks.best import BEST_TIE

    kata = tomllib.loads((Path(__file__).parent.parent / "katas" / "three-classes" / "050-always-the-last.toml")
                         .read_text(encoding="utf-8"))
    assert "first one counts" in BEST_TIE.en and "primera" in BEST_TIE.es
    story_en, story_es = (" ".join(kata["story"][lang].split()) for lang in ("en", "es"))
    assert "where two epochs tie for the lowest validation loss, the first of them counts" in story_en
    assert "si dos épocas empatan con la menor pérdida de validación, cuenta la primera" in story_es


def test_readme_names_exactly_the_learner_commands_that_take_track() -> None:
    """README's commands table says which commands take --track: each named one does, each said not to does not."""
    import re

    import click

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| `kata tracks` |"))
    taking, _, rest = row.partition(" take `--track NAME`")
    named = set(re.findall(r"`(\w+)`", taking.rsplit(";", 1)[-1]))
    not_taking = set(re.findall(r"`(\w+)`", rest.split(" act on ")[0]))
    assert named and not_taking and not named & not_taking

    def takes_track(name: str) -> bool:
        command = main.commands[name]
        ctx = click.Context(command, info_name=name, **main.context_settings)
        return any("--track" in p.opts for p in command.get_params(ctx) if isinstance(p, click.Option))

    assert {n for n in named if not takes_track(n)} == set()
    assert {n for n in not_taking if takes_track(n)} == set()
