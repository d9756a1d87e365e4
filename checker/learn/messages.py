"""What kata says to a learner, in English and Spanish: every message of the learner commands."""

from __future__ import annotations

from checker.base.i18n import Message

NO_CURRENT = Message(
    en="there is no current kata in {dir}: run `kata next` to start one",
    es="no hay ninguna kata en curso en {dir}: ejecuta `kata next` para empezar una",
)
UNKNOWN_KATA = Message(
    en="there is no kata called {name!r}; `kata list` shows them all{close}",
    es="no hay ninguna kata llamada {name!r}; `kata list` las muestra todas{close}",
)
DID_YOU_MEAN = Message(en=" (did you mean {names}?)", es=" (¿quizás {names}?)")
CURRENT_GONE = Message(
    en="your progress says the current kata is {name!r}, which this kata catalogue does not have; "
       "run `kata next` to pick up from the next kata",
    es="tu progreso dice que la kata en curso es {name!r}, que este catálogo no tiene; "
       "ejecuta `kata next` para seguir con la siguiente",
)
CATALOGUE_BROKEN = Message(
    en="the kata catalogue cannot be read: {error}",
    es="no se puede leer el catálogo de katas: {error}",
)
CATALOGUE_EMPTY = Message(
    en="the kata catalogue {dir} holds no kata yet",
    es="el catálogo de katas {dir} aún no contiene ninguna kata",
)
STARTER_BROKEN = Message(
    en="cannot build the starter of kata {kata} from mutant {mutant!r}: {error}",
    es="no se puede generar el archivo inicial de la kata {kata} a partir del mutante {mutant!r}: {error}",
)
HEADER = Message(en="Kata {pos}/{total} · {title}", es="Kata {pos}/{total} · {title}")
HEADER_TRACK = Message(en="Kata {pos}/{total} of track {track} · {title}",
                       es="Kata {pos}/{total} del recorrido {track} · {title}")
FILE_WRITTEN = Message(en="Your file: {path} (new)", es="Tu archivo: {path} (nuevo)")
FILE_SAME = Message(en="Your file: {path} (already there, still the starter)",
                    es="Tu archivo: {path} (ya estaba, sigue siendo el inicial)")
FILE_KEPT = Message(
    en="Your file: {path} — it was already there and differs from the starter, so it is kept as it is "
       "(`kata reset` restores the starter, keeping a backup)",
    es="Tu archivo: {path} — ya existía y es distinto del inicial, así que se conserva tal cual "
       "(`kata reset` restaura el inicial y guarda una copia)",
)
DATA_WRITTEN = Message(
    en="The track's data: {path} (new), beside your file; your make_data reads it as "
       "Path(__file__).with_name({name!r})",
    es="Los datos del recorrido: {path} (nuevo), junto a tu archivo; tu make_data lo lee como "
       "Path(__file__).with_name({name!r})",
)
DATA_KEPT = Message(
    en="The track's data: {path} was already there and differs from the course's {name}, so yours is kept as it "
       "is (the checks use the course's; delete yours and `kata next` or `kata reset` puts the course's there)",
    es="Los datos del recorrido: {path} ya existía y es distinto del {name} del curso, así que se conserva el tuyo "
       "tal cual (las comprobaciones usan el del curso; borra el tuyo y `kata next` o `kata reset` pone ahí el del "
       "curso)",
)
FILE_MISSING = Message(
    en="Your file {path} is missing: `kata reset` writes the starter again",
    es="Falta tu archivo {path}: `kata reset` vuelve a escribir el inicial",
)
STILL_ON = Message(
    en="You are still on this kata (not solved yet). `kata next --skip` moves on anyway.",
    es="Sigues en esta kata (aún sin resolver). `kata next --skip` pasa a la siguiente de todos modos.",
)
WHAT_NEXT = Message(
    en="What to do:\n  1. see the symptom:   {run}\n  2. fix {file}, then:  {check}   "
       "(or `kata watch` to re-check on every save)\n  stuck?  kata hint",
    es="Qué hacer:\n  1. mira el síntoma:    {run}\n  2. arregla {file} y:  {check}   "
       "(o `kata watch` para comprobar a cada guardado)\n  ¿atascado?  kata hint",
)
ALL_SOLVED = Message(
    en="Every kata is solved ({total}/{total}). Well done! `kata list` shows them; "
       "`kata next KATA` reopens one.",
    es="Todas las katas están resueltas ({total}/{total}). ¡Bien hecho! `kata list` las muestra; "
       "`kata next KATA` vuelve a abrir una.",
)
SOLVED_NOW = Message(en="Solved! Progress saved in {path}.", es="¡Resuelta! Progreso guardado en {path}.")
SOLVED_BEFORE = Message(en="Solved (already recorded on {when}).", es="Resuelta (ya registrada el {when}).")
YOUR_CHANGE = Message(en="What you changed (starter → your file):",
                      es="Lo que cambiaste (inicial → tu archivo):")
AFTER_PASS = Message(
    en="Next: `kata solution` compares with the reference; `kata next` opens the next kata ({left} left).",
    es="Después: `kata solution` compara con la referencia; `kata next` abre la siguiente kata "
       "(quedan {left}).",
)
AFTER_PASS_LAST = Message(
    en="Next: `kata solution` compares with the reference. That was the last unsolved kata!",
    es="Después: `kata solution` compara con la referencia. ¡Era la última kata sin resolver!",
)
NOT_YET = Message(
    en="Not yet. Stuck? `kata hint` ({shown}/{total} hints shown). See the symptom: {run}",
    es="Todavía no. ¿Atascado? `kata hint` ({shown}/{total} pistas vistas). Mira el síntoma: {run}",
)
UNCHANGED = Message(
    en="(your file is still exactly the starter: open it and look for the broken line)",
    es="(tu archivo sigue siendo exactamente el inicial: ábrelo y busca la línea rota)",
)
PARTIAL = Message(
    en="(only some checks ran (--only): the kata counts as solved when the full battery passes)",
    es="(solo se ejecutaron algunas comprobaciones (--only): la kata cuenta como resuelta cuando pasa "
       "la batería completa)",
)
HINT = Message(en="Hint {n}/{total}:", es="Pista {n}/{total}:")
LAST_HINT = Message(
    en="That was the last hint. `kata show` repeats the story and every hint.",
    es="Era la última pista. `kata show` repite la historia y todas las pistas.",
)
MORE_HINTS = Message(en="`kata hint` again for a more precise one.",
                     es="`kata hint` otra vez para una más precisa.")
NO_MORE_HINTS = Message(
    en="No more hints: all {total} are above. Run the symptom again ({run}) and read, line by line, "
       "the part of {file} the hints point to.",
    es="No hay más pistas: las {total} están arriba. Vuelve a ver el síntoma ({run}) y lee, línea a línea, "
       "la parte de {file} a la que apuntan las pistas.",
)
NOT_OPENED = Message(en="You have not opened this kata yet: `kata next {kata}` opens it.",
                     es="Aún no has abierto esta kata: `kata next {kata}` la abre.")
HINTS_SO_FAR = Message(en="Hints so far:", es="Pistas hasta ahora:")
NO_HINTS_YET = Message(en="No hint revealed yet (`kata hint`).",
                       es="Aún no has visto ninguna pista (`kata hint`).")
STATUS_SOLVED = Message(en="solved", es="resuelta")
STATUS_CURRENT = Message(en="current", es="en curso")
STATUS_PENDING = Message(en="pending", es="pendiente")
SOLVED_ON = Message(en="Solved on {when}: `kata solution` shows the reference's version.",
                    es="Resuelta el {when}: `kata solution` muestra la versión de la referencia.")
OVERALL = Message(en="{solved}/{total} katas solved", es="{solved}/{total} katas resueltas")
LIST_NEXT = Message(en="`kata next` opens the next one.", es="`kata next` abre la siguiente.")
RESET_CONFIRM = Message(
    en="Replace {path} with the starter of this kata? Your version is kept as {backup}",
    es="¿Sustituir {path} por el archivo inicial de esta kata? Tu versión se guarda como {backup}",
)
RESET_DONE = Message(en="{path} is the starter again; your version is in {backup}.",
                     es="{path} vuelve a ser el inicial; tu versión está en {backup}.")
RESET_WRITTEN = Message(en="{path} written again from the starter.",
                        es="{path} escrito de nuevo desde el inicial.")
RESET_SAME = Message(en="{path} is already the starter: nothing to restore.",
                     es="{path} ya es el archivo inicial: nada que restaurar.")
RESET_ABORTED = Message(en="Nothing changed.", es="No se ha cambiado nada.")
YES_NO = Message(en="[y/N]", es="[s/N]")
SOLUTION_LOCKED = Message(
    en="solve kata {kata} first (`kata check` until it passes); then `kata solution` shows the reference's "
       "version",
    es="resuelve primero la kata {kata} (`kata check` hasta que pase); después `kata solution` muestra la "
       "versión de la referencia",
)
SOLUTION_DIFF = Message(en="The broken part, fixed (starter → reference):",
                        es="La parte rota, arreglada (inicial → referencia):")
SOLUTION_FUNCS = Message(en="In the reference ({path}):", es="En la referencia ({path}):")
READ_MORE = Message(en="Read more:", es="Para leer más:")
WATCHING = Message(
    en="watching {path}: save it to re-check (Ctrl-C to stop)",
    es="vigilando {path}: guárdalo para volver a comprobar (Ctrl-C para salir)",
)
WATCH_STOPPED = Message(en="stopped watching.", es="vigilancia detenida.")
INTERRUPTED = Message(en="stopped (Ctrl-C): nothing you wrote was changed or lost.",
                      es="detenido (Ctrl-C): nada de lo que escribiste se ha cambiado ni perdido.")
WATCH_WAITING = Message(en="{path} is missing: waiting for it to come back",
                        es="falta {path}: esperando a que vuelva")
STATUS_PASS = Message(en="every check passes", es="todas las comprobaciones pasan")
STATUS_FAILS = Message(en="{id} fails", es="{id} falla")
STATUS_MORE = Message(en=" (+{n} more)", es=" (+{n} más)")
STATUS_CANNOT = Message(en="cannot grade the file", es="no se puede evaluar el archivo")
CURVE = Message(
    en="training loss, {epochs} epochs of SGD at lr={lr}:  {line}  ({first} → {last})",
    es="pérdida de entrenamiento, {epochs} épocas de SGD con lr={lr}:  {line}  ({first} → {last})",
)
CURVE_STORY = Message(
    en="training loss, your file run as the story runs it ({flags}):  {line}  ({first} → {last})",
    es="pérdida de entrenamiento, tu archivo ejecutado como en la historia ({flags}):  {line}  ({first} → {last})",
)

WATCH_MOVED = Message(
    en="On to the next kata: {path} is written and watched now (`kata watch --stay` stays on a solved kata).",
    es="A por la siguiente kata: {path} está escrito y ahora es el vigilado (`kata watch --stay` se queda en "
       "una kata resuelta).",
)
SHOW_PRACTICE = Message(
    en="A practice kata: nothing is broken. Write your predictions in {file}, then `kata check` compares "
       "them with a real run.",
    es="Una kata de práctica: no hay nada roto. Escribe tus predicciones en {file} y `kata check` las compara "
       "con una ejecución real.",
)
WHAT_NEXT_PRACTICE = Message(
    en="What to do:\n  1. predict: write your answers in {file} (before running anything)\n"
       "  2. {check}   compares them with a run of the lesson's loop\n  3. see for yourself:  {run}",
    es="Qué hacer:\n  1. predice: escribe tus respuestas en {file} (antes de ejecutar nada)\n"
       "  2. {check}   las compara con una ejecución del bucle de la lección\n  3. compruébalo tú:  {run}",
)
PRACTICE_MEASURING = Message(en="Measuring: training the lesson's loop as the exercise says…",
                             es="Midiendo: se entrena el bucle de la lección como dice el ejercicio…")
PRACTICE_RIGHT = Message(en="matches the run: {seen}", es="coincide con la ejecución: {seen}")
PRACTICE_WRONG = Message(en="your answer {answer} is not what the run measured; see it with: {run}",
                         es="tu respuesta {answer} no es lo que midió la ejecución; míralo con: {run}")
PRACTICE_OPEN = Message(en="not answered yet: replace its \"?\" in {file} with your prediction",
                        es="sin responder: cambia su \"?\" en {file} por tu predicción")
PRACTICE_SUMMARY = Message(en="{right}/{total} predictions match what the run measured",
                           es="{right}/{total} predicciones coinciden con lo que midió la ejecución")
PRACTICE_NOT_YET = Message(
    en="Not yet. Run it and look: {run}. Stuck? `kata hint` ({shown}/{total} hints shown).",
    es="Todavía no. Ejecútalo y mira: {run}. ¿Atascado? `kata hint` ({shown}/{total} pistas vistas).",
)
PRACTICE_FORMAT = Message(
    en="a practice kata's answers are reported as text or JSON, not as {fmt}",
    es="las respuestas de una kata de práctica se muestran como texto o JSON, no como {fmt}",
)
PRACTICE_NO_NOTEBOOK = Message(
    en="{kata} is a practice kata: its answers are a TOML file, there is no loop to write as a notebook",
    es="{kata} es una kata de práctica: sus respuestas son un archivo TOML; no hay bucle que escribir como "
       "cuaderno",
)
PRACTICE_SOLUTION = Message(en="What the run measured:", es="Lo que midió la ejecución:")
PRACTICE_ANYFILE = Message(
    en="{path} is a practice kata's answers file: `kata watch` follows it only as the current kata",
    es="{path} es el archivo de respuestas de una kata de práctica: `kata watch` solo lo sigue como kata "
       "en curso",
)
GUIDE_TITLE = Message(en="The guide, section by section (`kata read ID`):",
                      es="La guía, apartado por apartado (`kata read ID`):")
GUIDE_UNKNOWN = Message(
    en="the guide has no section {name!r}; `kata read` lists them{close}",
    es="la guía no tiene ningún apartado {name!r}; `kata read` los lista{close}",
)
GUIDE_MISSING = Message(en="the guide is not installed here ({dir} is missing)",
                        es="la guía no está instalada aquí (falta {dir})")
GUIDE_SEE = Message(en="`kata read {id}` — {title}", es="`kata read {id}` — {title}")
PRACTICE_AFTER = Message(
    en="Next: `kata solution` lists every figure the run measured; `kata next` opens the next kata ({left} left).",
    es="Después: `kata solution` enumera cada cifra que midió la ejecución; `kata next` abre la siguiente kata "
       "(quedan {left}).",
)
PRACTICE_NO_MORE_HINTS = Message(
    en="No more hints: all {total} are above. Run it and look at the figures: {run}",
    es="No hay más pistas: las {total} están arriba. Ejecútalo y mira las cifras: {run}",
)

TRACK_DETAILS = Message(en="{data}, split {split}; {model}; protocol {protocol}; reference {reference}",
                        es="{data}, partición {split}; {model}; protocolo {protocol}; referencia {reference}")
TRACKS_USE = Message(en="Use one with --track NAME: kata next, list, run, check, mutants.",
                     es="Elige uno con --track NOMBRE: kata next, list, run, check, mutants.")
TOO_MANY = Message(en="Invalid value for '{option}': {value} is more than the {n} training examples of track {track!r}",
                   es="Valor no válido para '{option}': {value} es más que los {n} ejemplos de entrenamiento del "
                      "recorrido {track!r}")
AFTER_TRACK_DONE = Message(
    en="Next: `kata solution` compares with the reference. That was the last unsolved kata of track {track}; "
       "`kata next` opens one of another track ({left} left there, `kata list` shows them).",
    es="Después: `kata solution` compara con la referencia. Era la última kata sin resolver del recorrido "
       "{track}; `kata next` abre una de otro recorrido (quedan {left} allí, `kata list` las muestra).",
)
