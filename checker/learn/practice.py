"""Practice katas: predict what a run of the lesson's loop measures, then compare with a real run.

A practice kata breaks no loop. `kata next` writes an answers file (``<slug>.toml``) with one
question per line, each answered ``"?"``; the learner writes a prediction, then `kata check`
trains the lesson's loop (the reference, in a sandboxed child, exactly as `kata run --lesson` and
`kata trace --lesson` do) and compares every answer with what that run measured. Nothing expected
is written down anywhere: the right answers are computed from the run, every time.

An exercise is a list of questions and a ``measure(lab)`` function returning, for each question,
the measured answer and a short text saying what was measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker.base.i18n import Message
from checker.base.paths import REFERENCE
from checker.runs.training import RunSettings, TraceSettings, measure

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

UNANSWERED = "?"


class AnswersError(ValueError):
    """The answers file cannot be read, or an answer has the wrong type; ``render(lang)`` says which."""

    def __init__(self, message: Message, **params: object):
        super().__init__(message.render("en", **params))
        self.message, self.params = message, params

    def render(self, lang: str) -> str:
        return self.message.render(lang, **self.params)


@dataclass(frozen=True)
class Question:
    key: str
    kind: str
    """'int' (a whole number), 'bool' (true/false), 'shapes' (a list of [rows, columns]), 'choice'"""
    prompt: Message
    choices: tuple[str | int, ...] = ()


@dataclass(frozen=True)
class Exercise:
    id: str
    questions: tuple[Question, ...]
    measure: Callable[[Any], dict[str, tuple[Any, Message]]]
    """``measure(lab)`` -> {question key: (measured answer, what was measured, in words)}"""


# ---------------------------------------------------------------------------------------------
# The measurements: the reference loop, run in sandboxed children

TRACE = TraceSettings(examples=6, batch_size=4, epochs=2, seed=0)
BATCH_SIZES = (8, 150)
BATCH_RUN = {"optimizer": "adam", "lr": 0.01, "epochs": 30}
SEEDS = range(5)
SEED_RUN = {"optimizer": "adam", "lr": 0.01, "epochs": 30}


def _reference() -> tuple[str, str]:
    return REFERENCE.read_text(encoding="utf-8"), "lesson-loop.py"


def measure_trace(lab) -> dict[str, tuple[Any, Message]]:
    trace = measure([_reference()], [TRACE], lab, what="trace")[0]
    first = [b for b in trace["batches"] if b["epoch"] == 1]
    second = [b for b in trace["batches"] if b["epoch"] == 2]
    shapes = [b["shape"] for b in first]
    order1 = [r for b in first for r in b["rows"]]
    order2 = [r for b in second for r in b["rows"]]
    kept = all(b["labels_kept"] for b in trace["batches"])
    shown = ", ".join(str(s) for s in shapes)
    steps = trace["steps"][0]
    return {
        "batches": (len(first), _m(f"{len(first)} batches in epoch 1", f"{len(first)} lotes en la época 1")),
        "xb_shapes": (shapes, _m(f"xb shapes {shown}", f"formas de xb {shown}")),
        "steps": (steps, _m(f"step() called {steps} times in epoch 1", f"step() llamado {steps} veces en la época 1")),
        "labels_kept": (kept, _m("every row reached the loss with its own label",
                                 "cada fila llegó a la pérdida con su propia etiqueta") if kept
                        else _m("some row reached the loss with another row's label",
                                "alguna fila llegó a la pérdida con la etiqueta de otra")),
        "same_order": (order1 == order2, _m(f"epoch 1 saw examples {order1}, epoch 2 saw {order2}",
                                            f"la época 1 vio los ejemplos {order1}, la época 2 {order2}")),
    }


def steps_per_epoch(steps: int, batch_size: int) -> Message:
    """``steps`` optimizer steps per epoch at ``batch_size``: "1 step", "19 steps"."""
    if steps == 1:
        return _m(f"1 step per epoch at batch size {batch_size}", f"1 paso por época con lotes de {batch_size}")
    return _m(f"{steps} steps per epoch at batch size {batch_size}",
              f"{steps} pasos por época con lotes de {batch_size}")


def measure_batch_sizes(lab) -> dict[str, tuple[Any, Message]]:
    runs = measure([_reference()] * len(BATCH_SIZES),
                   [RunSettings(**BATCH_RUN, batch_size=b) for b in BATCH_SIZES], lab)
    last = {b: r["history"][-1]["train_loss"] for b, r in zip(BATCH_SIZES, runs, strict=True)}
    steps = {b: r["steps"][0] for b, r in zip(BATCH_SIZES, runs, strict=True)}
    lower = min(BATCH_SIZES, key=last.__getitem__)
    ends = ", ".join(f"{b}: {last[b]:.4f}" for b in BATCH_SIZES)
    epochs = BATCH_RUN["epochs"]
    return {
        "steps_8": (steps[8], steps_per_epoch(steps[8], 8)),
        "steps_150": (steps[150], steps_per_epoch(steps[150], 150)),
        "ends_lower": (lower, _m(f"train loss after {epochs} epochs, by batch size: {ends}",
                                 f"pérdida de entrenamiento tras {epochs} épocas, por tamaño de lote: {ends}")),
    }


def measure_seed_sources(lab) -> dict[str, tuple[Any, Message]]:
    pairs = [(s, 0) for s in SEEDS] + [(0, s) for s in SEEDS if s != 0] + [(0, 0)]
    runs = measure([_reference()] * len(pairs),
                   [RunSettings(**SEED_RUN, seed_loader=lo, seed_model=mo) for lo, mo in pairs], lab)
    final = [r["history"][-1]["val_loss"] for r in runs]
    by_loader = [final[i] for i, (_, mo) in enumerate(pairs[:-1]) if mo == 0]
    by_model = [final[i] for i, (lo, _) in enumerate(pairs[:-1]) if lo == 0]
    spread = {"loader": max(by_loader) - min(by_loader), "model": max(by_model) - min(by_model)}
    more = max(spread, key=spread.__getitem__)
    identical = runs[0]["history"] == runs[-1]["history"]
    n = len(SEEDS)
    lo, mo = f"{spread['loader']:.4f}", f"{spread['model']:.4f}"
    return {
        "moves_more": (more, _m(f"the final val loss spans {lo} over {n} loader seeds and {mo} over {n} model seeds",
                                f"la pérdida de validación final abarca {lo} con {n} semillas del cargador y {mo} "
                                f"con {n} del modelo")),
        "same_seeds_same_table": (identical, _m("two runs with the same two seeds printed the same table",
                                                "dos ejecuciones con las mismas dos semillas imprimieron la misma "
                                                "tabla") if identical
                                  else _m("two runs with the same two seeds printed different tables",
                                          "dos ejecuciones con las mismas dos semillas imprimieron tablas "
                                          "distintas")),
    }


def _m(en: str, es: str) -> Message:
    return Message(en=en, es=es)


def _q(key: str, kind: str, en: str, es: str, choices: tuple = ()) -> Question:
    return Question(key, kind, Message(en=en, es=es), choices)


EXERCISES: dict[str, Exercise] = {
    "trace": Exercise("trace", (
        _q("batches", "int", "How many batches does one epoch give? (a whole number)",
           "¿Cuántos lotes da una época? (un número entero)"),
        _q("xb_shapes", "shapes", "The shape of xb in each batch of an epoch, in order, e.g. [[3, 2], [3, 2]]",
           "La forma de xb en cada lote de una época, en orden; p. ej. [[3, 2], [3, 2]]"),
        _q("steps", "int", "How many times is optimizer.step() called in one epoch? (a whole number)",
           "¿Cuántas veces se llama a optimizer.step() en una época? (un número entero)"),
        _q("labels_kept", "bool", "After shuffling, does every row still reach the loss with its own label? "
           "(true or false)", "Tras barajar, ¿llega cada fila a la pérdida con su propia etiqueta? "
           "(true o false)"),
        _q("same_order", "bool", "Does epoch 2 see the six examples in the same order as epoch 1? (true or false)",
           "¿Ve la época 2 los seis ejemplos en el mismo orden que la época 1? (true o false)"),
    ), measure_trace),
    "batch-sizes": Exercise("batch-sizes", (
        _q("steps_8", "int", "Optimizer steps per epoch at batch size 8 (a whole number)",
           "Pasos del optimizador por época con lotes de 8 (un número entero)"),
        _q("steps_150", "int", "Optimizer steps per epoch at batch size 150 (a whole number)",
           "Pasos del optimizador por época con lotes de 150 (un número entero)"),
        _q("ends_lower", "choice", "Which batch size ends with the lower train loss after 30 epochs? (8 or 150)",
           "¿Con qué tamaño de lote acaba más baja la pérdida de entrenamiento tras 30 épocas? (8 o 150)",
           BATCH_SIZES),
    ), measure_batch_sizes),
    "seed-sources": Exercise("seed-sources", (
        _q("same_seeds_same_table", "bool", "Two runs with the same loader seed and the same model seed: "
           "the same table, number for number? (true or false)",
           "Dos ejecuciones con la misma semilla del cargador y la misma del modelo: ¿la misma tabla, número "
           "a número? (true o false)"),
        _q("moves_more", "choice", "Which seed moves the final validation loss more? (\"loader\" or \"model\")",
           "¿Qué semilla mueve más la pérdida de validación final? (\"loader\" o \"model\")",
           ("loader", "model")),
    ), measure_seed_sources),
}


# ---------------------------------------------------------------------------------------------
# The answers file

TEMPLATE_HEAD = Message(
    en="# {slug}: your predictions.\n"
       "# Predict every answer BEFORE you run anything: replace each \"?\" with your answer,\n"
       "# then `kata check`. Afterwards, see the figures yourself with the commands the story gives.\n",
    es="# {slug}: tus predicciones.\n"
       "# Predice cada respuesta ANTES de ejecutar nada: cambia cada \"?\" por tu respuesta\n"
       "# y después `kata check`. Luego mira tú las cifras con las órdenes que da la historia.\n",
)
NOT_TOML = Message(
    en="{path} cannot be read as answers: {why}. Each line is `name = answer`, e.g. `batches = 3`; "
       "`kata reset` restores the questions",
    es="{path} no se puede leer como respuestas: {why}. Cada línea es `nombre = respuesta`, p. ej. "
       "`batches = 3`; `kata reset` restaura las preguntas",
)
UNKNOWN_ANSWER = Message(
    en="{path}: {key!r} is not a question of this kata (the questions: {known})",
    es="{path}: {key!r} no es una pregunta de esta kata (las preguntas: {known})",
)
WRONG_TYPE = Message(
    en="{path}: the answer to {key!r} should be {want}, not {got}",
    es="{path}: la respuesta a {key!r} debería ser {want}, no {got}",
)
WANTS = {
    "int": Message(en="a whole number, e.g. 3", es="un número entero, p. ej. 3"),
    "bool": Message(en="true or false (without quotes)", es="true o false (sin comillas)"),
    "shapes": Message(en="a list of shapes, e.g. [[3, 2], [3, 2]]", es="una lista de formas, p. ej. [[3, 2], [3, 2]]"),
}


def answers_template(kata, lang: str) -> str:
    """The answers file `kata next` writes: a comment per question, every answer still "?"."""
    exercise = EXERCISES[kata.practice.exercise]
    lines = [TEMPLATE_HEAD.render(lang, slug=kata.slug)]
    for q in exercise.questions:
        lines.append(f"# {q.prompt.render(lang)}")
        lines.append(f'{q.key} = "{UNANSWERED}"\n')
    return "\n".join(lines)


def _want(q: Question, lang: str) -> str:
    if q.kind == "choice":
        return " / ".join(repr(c) if isinstance(c, str) else str(c) for c in q.choices)
    return WANTS[q.kind].render(lang)


def _typed(q: Question, value: object) -> bool:
    if q.kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if q.kind == "bool":
        return isinstance(value, bool)
    if q.kind == "shapes":
        return isinstance(value, list) and all(
            isinstance(s, list) and all(isinstance(d, int) and not isinstance(d, bool) for d in s) for s in value)
    return value in q.choices and type(value) is type(q.choices[0])


def read_answers(path: Path, exercise: Exercise) -> dict[str, Any]:
    """The answers in ``path``: key -> value, or None where still unanswered. AnswersError when malformed."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise AnswersError(NOT_TOML, path=path, why="not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise AnswersError(NOT_TOML, path=path, why=str(exc)) from None
    known = {q.key: q for q in exercise.questions}
    for key in data:
        if key not in known:
            raise AnswersError(UNKNOWN_ANSWER, path=path, key=key, known=", ".join(known))
    answers: dict[str, Any] = {}
    for key, q in known.items():
        value = data.get(key, UNANSWERED)
        if value == UNANSWERED or value == "":
            answers[key] = None
        elif not _typed(q, value):
            raise WrongType(path, q, value)
        else:
            answers[key] = value
    return answers


class WrongType(AnswersError):
    """A wrong type, with the expected type named in the learner's language."""

    def __init__(self, path: Path, q: Question, value: object):
        self.path, self.q, self.value = path, q, value
        super().__init__(WRONG_TYPE, path=path, key=q.key, want=_want(q, "en"), got=repr(value))

    def render(self, lang: str) -> str:
        unquoted = _unquoted(self.q, self.value)
        if unquoted is not None:  # `batches = "2"`: the right answer's form, made text by its quotes
            return QUOTED.render(lang, path=self.path, key=self.q.key, got=_toml(self.value), want=unquoted)
        return WRONG_TYPE.render(lang, path=self.path, key=self.q.key, want=_want(self.q, lang), got=repr(self.value))


QUOTED = Message(
    en="{path}: the answer to {key!r} is in quotes ({key} = {got}), which makes it text; write it without them: "
       "{key} = {want}",
    es="{path}: la respuesta a {key!r} está entre comillas ({key} = {got}), lo que la convierte en texto; "
       "escríbela sin ellas: {key} = {want}",
)


def _toml(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _unquoted(q: Question, value: object) -> str | None:
    """The answer without its quotes (``"2"`` -> ``2``) when, unquoted, it has the type ``q`` asks for; else None."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        parsed = tomllib.loads(f"x = {text}")["x"]
    except tomllib.TOMLDecodeError:
        return None
    return text if _typed(q, parsed) else None


# ---------------------------------------------------------------------------------------------
# Comparing

@dataclass(frozen=True)
class Verdict:
    key: str
    status: str
    """'pass', 'fail' or 'unanswered'"""
    answer: Any
    measured: Any
    seen: Message


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b)
    return a == b


def compare(exercise: Exercise, answers: dict[str, Any], measured: dict[str, tuple[Any, Message]]) -> list[Verdict]:
    verdicts = []
    for q in exercise.questions:
        value, seen = measured[q.key]
        answer = answers.get(q.key)
        if answer is None:
            status = "unanswered"
        else:
            status = "pass" if _same(answer, value) else "fail"
        verdicts.append(Verdict(q.key, status, answer, value, seen))
    return verdicts
