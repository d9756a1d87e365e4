"""`kata explore`: the page. One self-contained HTML file (inline CSS, script and data; nothing fetched), from
``templates/explore.html.j2``: the decision boundary over the training and validation points, and both loss
curves, epoch by epoch, for the file's loop beside the reference's, at every learning rate of the setting.

The page reads a fragment such as ``#epoch=5&lr=10`` when it opens (and whenever it changes): the slider and
the learning rate are set from it as if a learner had moved them, which is how the browser tests drive it.
"""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

from checker.base.errors import Failure, UsageProblem
from checker.base.i18n import Message
from checker.runs.explore import (
    EXPLORER,
    Explored,
    ExploreSetting,
    LrRun,
    explore_files,
    steps_per_epoch,
    track_setting,
)
from checker.runs.training import RunFailed
from checker.setting.tracks import Track

GENERATOR = "kata explore"
"""The page's ``<meta name="generator">``: a file that has it may be written over by the next page."""

T = {
    "title": Message("kata explore", "kata explore"),
    "mine": Message("Your loop", "Tu bucle"),
    "reference": Message("The reference", "La referencia"),
    "lr": Message("learning rate", "tasa de aprendizaje"),
    "epoch": Message("epoch", "época"),
    "play": Message("Play", "Reproducir"),
    "pause": Message("Pause", "Pausa"),
    "train_loss": Message("train loss", "pérdida de entrenamiento"),
    "val_loss": Message("val loss", "pérdida de validación"),
    "val_acc": Message("val acc", "val acc"),
    "train_points": Message("training points", "puntos de entrenamiento"),
    "val_points": Message("validation points (ringed)", "puntos de validación (con anillo)"),
    "shading": Message("shading: how sure the model is (pale: a guess)",
                       "sombreado: cuán segura está la red (pálido: al azar)"),
    "no_boundary": Message("no boundary: the model's output over the grid was not one number per class",
                           "sin frontera: la salida de la red sobre la rejilla no era un número por clase"),
    "diverged": Message("the model's outputs are not numbers here (NaN)",
                        "las salidas de la red no son números aquí (NaN)"),
    "after_only": Message("your fit trains without calling train_epoch: the boundary is the one after training",
                          "tu fit entrena sin llamar a train_epoch: la frontera es la del final"),
    "failed": Message("Your loop gave no run at this learning rate:", "Tu bucle no dio resultados con esta tasa:"),
    "initial": Message("before training", "antes de entrenar"),
    "try_title": Message("What to try", "Qué probar"),
    "try": Message(
        "Move the slider: the boundary bends while both losses fall. Then raise the lr to 10 and the training "
        "loss turns unstable: the boundary jumps from epoch to epoch. At 0.01 it barely moves in {epochs} "
        "epochs. Where your loop and the reference part, look at the first epoch where the curves differ.",
        "Mueve el deslizador: la frontera se curva mientras bajan las dos pérdidas. Después sube la lr a 10 y "
        "la pérdida de entrenamiento se vuelve inestable: la frontera salta de una época a otra. Con 0.01 apenas "
        "se mueve en {epochs} épocas. Donde tu bucle y la referencia se separan, mira la primera época en que "
        "las curvas difieren."),
    "setting_explorer": Message(
        "The explorer's setting: {data}, {n_train} training and {n_val} validation points; an MLP {arch} "
        "(kata's, seed {seed}); {optimizer} with batches of {batch} ({steps} steps an epoch: {sizes}); "
        "{epochs} epochs. Your file's loader, optimizer, train_epoch, evaluate and fit train it (with --track "
        "moons, its make_data and make_model too).",
        "El escenario del explorador: {data}, {n_train} puntos de entrenamiento y {n_val} de validación; una "
        "MLP {arch} (la de kata, semilla {seed}); {optimizer} con lotes de {batch} ({steps} pasos por época: "
        "{sizes}); {epochs} épocas. Lo entrenan el loader, el optimizador, train_epoch, evaluate y fit de tu "
        "archivo (con --track moons, también su make_data y su make_model)."),
    "setting_track": Message(
        "Track {track}'s own setting: your file's data and model (make_data, make_model) and the rest of its "
        "loop; {optimizer} with batches of {batch}; {epochs} epochs; seed {seed}.",
        "El escenario propio del recorrido {track}: los datos y el modelo de tu archivo (make_data, make_model) "
        "y el resto de su bucle; {optimizer} con lotes de {batch}; {epochs} épocas; semilla {seed}."),
    "offline": Message("This page works offline: everything it shows was computed when it was written.",
                       "Esta página funciona sin conexión: todo lo que muestra se calculó al escribirla."),
    "not_run": Message("not run", "sin ejecutar"),
    "no_curve": Message("no numbers to draw", "no hay números que dibujar"),
}

WRITTEN = Message("page written to {path}", "página escrita en {path}")
REPLACED = Message("page written to {path} (replacing the page written before)",
                   "página escrita en {path} (en lugar de la escrita antes)")
OPEN = Message("open it in a browser: {url}", "ábrela en un navegador: {url}")
SUMMARY = Message("at lr {lr:g} after {epochs} epochs: {who}: train loss {train}, val loss {val}, val acc {acc}",
                  "con lr {lr:g} tras {epochs} épocas: {who}: pérdida de entrenamiento {train}, de validación "
                  "{val}, val acc {acc}")
YOURS_FAILED = Message("your loop gave no run at lr {lr:g}: {error}",
                       "tu bucle no dio resultados con lr {lr:g}: {error}")
NOT_OURS = Message("{path} exists and is not a page kata explore wrote: give another --output, or move it away",
                   "{path} ya existe y no es una página de kata explore: da otro --output o muévelo")
NO_FOLDER = Message("{path}: the folder does not exist", "{path}: la carpeta no existe")
SAME = Message("here your loop trains exactly as the reference, at every learning rate; the explorer's data and "
               "model are kata's: `kata explore {path} --track {track}` trains with your make_data and make_model too",
               "aquí tu bucle entrena exactamente como la referencia, con todas las tasas; los datos y el modelo del "
               "explorador son los de kata: `kata explore {path} --track {track}` entrena también con tu make_data "
               "y tu make_model")
PRACTICE = Message("{kata} is a practice kata: it has no loop to explore; give a loop file",
                   "{kata} es una kata de práctica: no tiene bucle que explorar; da un archivo de bucle")


def is_explore_page(path: Path) -> bool:
    """Whether ``path`` is a page ``kata explore`` wrote (its generator meta tag, near the top)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(2048)
    except OSError:
        return False
    return f'<meta name="generator" content="{GENERATOR}">'.encode() in head


def default_output(path: Path) -> Path:
    """``loop.py`` -> ``loop.explore.html``, beside it."""
    return path.with_name(f"{path.stem}.explore.html")


def check_output(out: Path, lang: str) -> bool:
    """Whether ``out`` already holds a page of ours (it will be replaced); exit 2 when it holds anything else,
    or its folder is missing. Nothing a learner wrote is ever written over."""
    if not out.parent.is_dir():
        raise UsageProblem(NO_FOLDER.render(lang, path=out.parent))
    if out.exists() or out.is_symlink():
        if out.is_symlink() or not out.is_file() or not is_explore_page(out):
            raise UsageProblem(NOT_OURS.render(lang, path=out))
        return True
    return False


# ---------------------------------------------------------------------------------------------
# the page's data

def _num(v: float | None) -> float | str | None:
    """A number for the page's JSON (which has no NaN): non-finite values as texts the script knows."""
    if v is None:
        return None
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return round(v, 6)


def _run_data(run: LrRun) -> dict[str, Any]:
    return {
        "history": [[_num(r["epoch"]), _num(r["train_loss"]), _num(r["val_loss"]), _num(r["val_acc"])]
                    for r in run.history],
        "frames": [None if f is None else base64.b64encode(f).decode("ascii") for f in run.frames],
        "per_epoch": run.per_epoch,
        "points": None if run.points is None else run.points.as_dict(),
    }


def _text(error: str | Message, lang: str) -> str:
    return error.render(lang) if isinstance(error, Message) else error


def _loop_data(explored: Explored | None, name: str, role: str, setting: ExploreSetting,
               lang: str) -> dict[str, Any]:
    runs: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for lr in setting.lrs:
        key = f"{lr:g}"
        if explored is not None and lr in explored.runs:
            runs[key] = _run_data(explored.runs[lr])
        elif explored is not None and lr in explored.errors:
            errors[key] = _text(explored.errors[lr], lang)
    # the file's name only: the page is shared, and never carries the learner's folders
    return {"name": Path(name).name, "shown": Path(name).name, "role": role, "runs": runs, "errors": errors}


def setting_text(setting: ExploreSetting, lang: str) -> str:
    if setting.data is not None and setting.model is not None:
        n_train = setting.data.n_train
        sizes = steps_per_epoch(setting, n_train)
        full = sum(1 for s in sizes if s == setting.batch_size)
        rest = [s for s in sizes if s != setting.batch_size]
        shown = f"{full}×{setting.batch_size}" + (f" + {rest[0]}" if rest else "")
        data = f"{setting.data.call()}, random_state={setting.seed}"
        return T["setting_explorer"].render(
            lang, data=data, n_train=n_train, n_val=setting.data.n_val, arch=setting.model.arch, seed=setting.seed,
            optimizer=setting.optimizer.upper(), batch=setting.batch_size, steps=len(sizes), sizes=shown,
            epochs=setting.epochs)
    return T["setting_track"].render(lang, track=setting.name, optimizer=setting.optimizer.upper(),
                                     batch=setting.batch_size, epochs=setting.epochs, seed=setting.seed)


def page_data(mine: Explored | None, reference: Explored, setting: ExploreSetting, lang: str) -> dict[str, Any]:
    """Everything the page's script draws, as plain JSON."""
    first = next(iter(reference.runs.values()))
    loops = []
    if mine is not None:
        loops.append(_loop_data(mine, mine.name, "mine", setting, lang))
    loops.append(_loop_data(reference, reference.name, "reference", setting, lang))
    return {
        "lang": lang, "lrs": [f"{lr:g}" for lr in setting.lrs], "default_lr": f"{setting.default_lr:g}",
        "epochs": setting.epochs, "classes": setting.classes, "grid": int(round(len(first.frames[0] or b"") ** 0.5))
        if first.frames[0] else 60, "bounds": first.bounds.as_list(), "loops": loops,
        "text": {k: m.render(lang, epochs=setting.epochs) if k == "try" else m.render(lang)
                 for k, m in T.items() if not k.startswith("setting_")},
    }


def _script_json(data: dict[str, Any]) -> str:
    """JSON safe inside a <script> element (no "</script>", no HTML comment)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


PLANE = Message("The data has {features} features: each boundary is drawn on {plane}, the model evaluated at the "
                "points of the data's space that plane's grid stands for.",
                "Los datos tienen {features} características: cada frontera se dibuja sobre {plane}, evaluando el "
                "modelo en los puntos del espacio de los datos que representa la rejilla de ese plano.")


def plane_text(features: int, lang: str) -> str | None:
    """What the boundaries are drawn on, for data of more than two features (``boundary.projection_of``)."""
    from checker.runs.boundary import PROJECTED, PROJECTED_ES

    if features <= 2:
        return None
    return PLANE.render(lang, features=features, plane=PROJECTED_ES if lang == "es" else PROJECTED)


def render_page(mine: Explored | None, reference: Explored, setting: ExploreSetting, lang: str,
                title: str, features: int = 2) -> str:
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(loader=jinja2.PackageLoader("checker", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    script = env.loader.get_source(env, "explore.js")[0]
    if "</" in script:  # pragma: no cover - a guard for whoever edits the script
        raise RuntimeError("explore.js must not contain '</'")
    data = page_data(mine, reference, setting, lang)
    text = data["text"]
    return env.get_template("explore.html.j2").render(
        lang=lang, generator=GENERATOR, title=title, t=text,
        setting=" ".join(filter(None, [setting_text(setting, lang), plane_text(features, lang)])),
        loops=data["loops"], data=Markup(_script_json(data)), script=Markup(script))


# ---------------------------------------------------------------------------------------------
# the command

def explore(mine: tuple[str, str] | None, reference: tuple[str, str], track: Track, *, explorer: bool,
            out: Path, lang: str, echo) -> int:
    """Train both loops, write the page to ``out``, say what was written; the exit code (0: a page).

    A file that cannot be loaded is a UsageProblem (exit 2, no page); a loop that loads but raises, hangs or
    is stopped at some learning rate gets a page where those learning rates show the reference alone, with
    its error stated."""
    setting = EXPLORER if explorer else track_setting(track)
    replacing = check_output(out, lang)
    try:
        mine_runs, ref_runs = explore_files(mine, reference, setting, track)
    except RunFailed as exc:
        if exc.file_error:
            raise UsageProblem(exc.message) from None
        raise Failure(exc.message) from None
    name = mine[1] if mine is not None else reference[1]
    features = setting.model.widths[0] if setting.model is not None else track.model.widths[0]
    page = render_page(mine_runs, ref_runs, setting, lang, title=f"kata explore · {Path(name).name}",
                       features=features)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    echo((REPLACED if replacing else WRITTEN).render(lang, path=out))
    lr = setting.default_lr
    for who, runs in ((T["mine"], mine_runs), (T["reference"], ref_runs)):
        if runs is None:
            continue
        if lr in runs.runs and runs.runs[lr].history:
            last = runs.runs[lr].history[-1]
            echo(SUMMARY.render(lang, lr=lr, epochs=len(runs.runs[lr].history), who=who,
                                train=_shown(last["train_loss"]), val=_shown(last["val_loss"]),
                                acc=_shown(last["val_acc"], 3)))
        elif lr in runs.errors:
            echo(YOURS_FAILED.render(lang, lr=lr, error=_text(runs.errors[lr], lang).strip()))
    if explorer and mine_runs is not None and mine_runs.runs == ref_runs.runs and not mine_runs.errors:
        echo(SAME.render(lang, path=mine[1], track=track.id))
    echo(OPEN.render(lang, url=out.resolve().as_uri()))
    return 0


def _shown(v: float | None, digits: int = 4) -> str:
    if v is None:
        return "—"
    return f"{v:.{digits}f}" if math.isfinite(v) else str(v)
