"""The Spanish help of every command and option: one catalogue, applied when the language is Spanish.

``HELP_ES`` maps a command's path (``"kata next"``) to its help, and a path and an option's longest name
(``"kata next --skip"``) to the option's help. ``SHARED_ES`` maps an English help text that many options share
word for word (``--dir``, ``--lang``, ``--track``...) to its Spanish; an option whose English differs needs its
own entry. ``HelpContext`` (the context class the `kata` group gives every command it holds) renders help in
Spanish when ``--lang es`` is anywhere on the command line, else when $KATA_LANG (or the locale) says Spanish:
the commands' and options' texts from here, click's own headings and notes translated (``HelpFormatter``).
tests/test_help_es.py walks every command and option and names any without a Spanish entry.

In Spanish a track is a «recorrido» (a «pista» is a hint).
"""

from __future__ import annotations

from contextlib import contextmanager

import click

from checker.base.i18n import resolve_lang

# where ``ctx.meta`` keeps the --lang found on the command line (shared by every context of one run)
LANG_KEY = "kata.help_lang"

SHARED_ES: dict[str, str] = {
    "Folder to write into (created if missing).": "Carpeta donde escribir (se crea si no existe).",
    "The course folder (the one holding kata.toml): bundled, and kata runs from inside it.":
        "La carpeta del curso (la que contiene kata.toml): se empaqueta y kata se ejecuta desde dentro.",
    "What pip installs as kata: a requirement (e.g. 'kata @ git+https://HOST/YOU/kata') or a wheel file (default: "
    "a copy of this kata's source, bundled).":
        "Lo que pip instala como kata: un requisito (p. ej. 'kata @ git+https://HOST/TU/kata') o un archivo wheel "
        "(por defecto: una copia empaquetada del código de este kata).",
    "Grade only this check (repeatable).": "Evalúa solo esta comprobación (repetible).",
    "Replace what an earlier run wrote there.": "Reemplaza lo que escribió allí una ejecución anterior.",
    "Show this message and exit.": "Muestra esta ayuda y termina.",
    "Show the version and exit.": "Muestra la versión y termina.",
    "Your working folder (default: $KATA_DIR, else the current directory).":
        "Tu carpeta de trabajo (por defecto: $KATA_DIR, si no la carpeta actual).",
    "Language of messages (default: $KATA_LANG, else the locale).":
        "Idioma de los mensajes (por defecto: $KATA_LANG, si no el del sistema).",
    "The track (setting, reference, katas) to use: see `kata tracks` (default: the one the file's folder "
    "belongs to, else moons).":
        "El recorrido (escenario, referencia, katas) que usar: ver `kata tracks` (por defecto: aquel al que "
        "pertenece la carpeta del archivo, si no moons).",
    "Grading secret: the differential checks' arguments derive from it and the file's code, so the same file "
    "and secret give the same report, and nobody without it can predict them (default: $KATA_SECRET; without "
    "one, fresh arguments each run).":
        "Secreto de evaluación: los argumentos de las comprobaciones diferenciales se derivan de él y del código "
        "del archivo, así que el mismo archivo con el mismo secreto da el mismo informe, y nadie sin él puede "
        "predecirlos (por defecto: $KATA_SECRET; sin él, argumentos nuevos en cada ejecución).",
    "cpu or cuda[:N].": "cpu o cuda[:N].",
    "Also show what passing checks measured.": "Muestra también lo que midieron las comprobaciones que pasan.",
    "Most seconds any one check may run (default: each check's own limit; env KATA_CHECK_TIMEOUT).":
        "Segundos que puede durar como mucho cada comprobación (por defecto: el límite propio de cada una; "
        "variable KATA_CHECK_TIMEOUT).",
    "Also show draft katas (texts incomplete or mutant unproven), as KATA_DRAFTS=1 does.":
        "Muestra también las katas en borrador (textos incompletos o mutante sin probar), como KATA_DRAFTS=1.",
    "Run the lesson's own loop (the track's reference; moons: solutions/loop.py) instead of a file of yours.":
        "Ejecuta el bucle de la lección (la referencia del recorrido; moons: solutions/loop.py) en lugar de un "
        "archivo tuyo.",
    "Default: $KATA_KATAS_DIR, else the checkout's katas/.":
        "Por defecto: $KATA_KATAS_DIR, si no la carpeta katas/ del repositorio.",
    "Print the catalogue as JSON.": "Imprime el catálogo como JSON.",
    "No progress on stderr.": "Sin avance por stderr.",
}

HELP_ES: dict[str, str] = {
    # ------------------------------------------------------------------ the group
    "kata": "kata: aprende a escribir bucles de entrenamiento de PyTorch correctos arreglando bucles rotos.\n\n"
            "Empieza con `kata next`, arregla el archivo que escribe y luego `kata check`.",
    # ------------------------------------------------------------------ kata run / trace
    "kata run": "Entrena con el bucle de PATH y muestra cada época.\n\n"
                "Todo sale de las funciones del propio PATH: los datos y su partición (make_data), el cargador, "
                "el modelo, el optimizador y fit(), que valida tras cada época. Un fallo en cualquiera de ellas "
                "se ve en la tabla; la columna de pasos cuenta los pasos del optimizador por época.",
    "kata run --lr": "Tasa de aprendizaje.",
    "kata run --batch-size": "Por defecto: el tamaño de lote del recorrido (32 en moons); como mucho su conjunto de "
                             "entrenamiento (150 en moons).",
    "kata check --course": "Un archivo de curso, o una carpeta de curso (su kata.toml): sus [points] eligen las "
                           "comprobaciones y las ponderan en todos los formatos (max_score de Gradescope, JUnit, "
                           "JSON).",
    "kata run --scheduler": "step: StepLR(step_size=10, gamma=0.5); cosine: CosineAnnealingLR(T_max=epochs).",
    "kata run --clip": "Recorta la norma del gradiente a este valor.",
    "kata run --seed": "Semilla del orden del cargador y de los pesos iniciales del modelo.",
    "kata run --seed-loader": "Semilla solo del orden del cargador (por defecto: --seed).",
    "kata run --seed-model": "Semilla solo de los pesos iniciales del modelo (por defecto: --seed).",
    "kata run --compare": "Un segundo archivo de bucle que ejecutar con los mismos ajustes, mostrado al lado.",
    "kata run --plot": "Guarda además en este archivo PNG las curvas de pérdida y la frontera de decisión de cada "
                       "ejecución tras el entrenamiento.",
    "kata explore": "Escribe una página que muestra el entrenamiento de PATH época a época, junto al de la "
                    "referencia.\n\n"
                    "La página (un solo archivo HTML que funciona sin conexión) muestra la frontera de decisión "
                    "sobre los puntos de entrenamiento y de validación y las dos curvas de pérdida, con un "
                    "deslizador y un botón de reproducir, a varias tasas de aprendizaje (10 entre ellas). Sin PATH: "
                    "el archivo de la kata actual. Tu bucle se ejecuta en el sandbox, como en `kata run`. Un archivo "
                    "que no se puede cargar sale con 2; un bucle que lanza un error a alguna tasa obtiene una página "
                    "donde esas tasas muestran solo la referencia, con tu error.",
    "kata explore --output": "Dónde escribir la página (por defecto: junto a PATH, loop.py -> loop.explore.html). "
                             "Un archivo que no escribió kata explore nunca se reemplaza.",
    "kata explore --track": "Entrena en el escenario propio de este recorrido (los datos y el modelo del archivo, el "
                            "tamaño de lote y las épocas del recorrido) en lugar del escenario del explorador (por "
                            "defecto: el del explorador para un archivo de moons; si no, el propio del recorrido "
                            "del archivo).",
    "kata run --json": "Imprime el historial por época como JSON.",
    "kata trace": "Sigue unos pocos ejemplos por el train_epoch de PATH, lote a lote.\n\n"
                  "Para cada lote: la forma de xb, qué ejemplos contiene (numerados desde 0), si cada fila "
                  "conserva su etiqueta y cuántas veces se llamó a step() en cada época.",
    "kata trace --examples": "Entrena con este número de ejemplos (los primeros de la partición de "
                             "entrenamiento; 150 como mucho en moons).",
    "kata trace --json": "Imprime la traza como JSON.",
    # ------------------------------------------------------------------ kata check / checks / tracks
    "kata check": "Evalúa el bucle de PATH con cada comprobación de comportamiento (sin PATH: la kata en curso).\n\n"
                  "Código de salida: 0 pasan todas las comprobaciones, 1 alguna falla, 2 el archivo no se "
                  "puede evaluar.",
    "kata check --json": "Lo mismo que --format json.",
    "kata check --only": "Ejecuta solo esta comprobación (repetible).",
    "kata checks": "Lista las comprobaciones de comportamiento de un recorrido (por defecto: moons): su id, su "
                   "familia y lo que verifica cada una.",
    "kata tracks": "Lista los recorridos: cada uno un escenario (datos, modelo, umbrales) con su referencia, sus "
                   "mutantes y sus katas.",
    "kata tracks --json": "Imprime los recorridos como JSON.",
    # ------------------------------------------------------------------ the learner's commands
    "kata next": "Abre la siguiente kata sin resolver: escribe su archivo inicial y cuenta su historia.\n\n"
                 "Con KATA (un nombre o número de `kata list`), abre esa kata; con --track, la siguiente kata de "
                 "ese recorrido (`kata tracks` los lista). Un archivo de tu carpeta distinto del inicial nunca se "
                 "sobrescribe.",
    "kata next --skip": "Pasa a la siguiente aunque la kata en curso aún no esté resuelta.",
    "kata next --notebook": "Escribe el archivo inicial como cuaderno de Jupyter (<kata>.ipynb).",
    "kata next --json": 'Imprime {"kata", "path", "title"} como JSON.',
    "kata show": "Repite la historia de la kata en curso, las pistas vistas hasta ahora y qué ejecutar.",
    "kata hint": "Muestra la siguiente pista de la kata en curso (de vaga a precisa); las pistas se recuerdan.",
    "kata list": "Todas las katas en orden, agrupadas por recorrido, con su estado (resuelta, en curso, "
                 "pendiente) y tu progreso.\n\nCon --track, solo las katas de ese recorrido.",
    "kata list --json": 'Imprime [{"kata", "title", "status"}] como JSON.',
    "kata reset": "Restaura el archivo inicial de la kata en curso (tu versión se guarda como copia).",
    "kata reset --yes": "No pregunta antes de restaurar el archivo inicial.",
    "kata solution": "Una vez resuelta una kata: la versión de la referencia de la parte que estaba rota, y qué "
                     "leer.",
    "kata watch": "Vuelve a comprobar un archivo de bucle cada vez que lo guardas (por defecto: el de la kata en "
                  "curso).\n\n"
                  "Cada guardado se comprueba como lo hace `kata check` (las mismas --only, --timeout, --secret y "
                  "--track). Cuando la kata en curso pasa, se abre y se vigila la siguiente (--stay se queda). "
                  "torch sigue importado en este proceso, así que cada comprobación tras guardar empieza al "
                  "instante.",
    "kata watch --only": "Ejecuta solo esta comprobación (repetible); pasar con --only no resuelve la kata.",
    "kata watch --stay": "Se queda en una kata resuelta en lugar de pasar a la siguiente.",
    "kata watch --max-checks": "Para tras este número de comprobaciones (para guiones y pruebas).",
    "kata read": "Lee una sección de la guía de kata en la terminal; sin SECTION, lista las secciones.\n\n"
                 "SECTION es un id o un número de la lista (`kata read step`, `kata read 5`).",
    # ------------------------------------------------------------------ the instructor's commands
    "kata grade": "Evalúa cada archivo .py e .ipynb de DIRECTORY, y la subcarpeta de cada estudiante, en OUT.\n\n"
                  "Una subcarpeta es un estudiante: se evalúa el único .py o .ipynb que contiene, con el nombre de "
                  "la subcarpeta (una con ninguno o varios se lista como no evaluable). "
                  "Cada entrega se ejecuta en su propio proceso aislado con un límite de tiempo por comprobación; "
                  "la que se cuelga o falla se registra como tal y las demás se evalúan con normalidad. Un "
                  "archivo que no se puede leer ni compilar aparece como no evaluable, con el motivo.\n\n"
                  "OUT recibe grades.csv, results.json, feedback/<entrega>.md (qué falló, qué se midió, qué "
                  "leer), class.html (aprobados por comprobación, una fila por estudiante) y similar.csv (parejas "
                  "idénticas o casi idénticas para revisar; no cambia ninguna nota), todo escrito al final, cada "
                  "archivo de forma atómica y legible según la umask. Con --course, los [points] del "
                  "archivo del curso dicen qué comprobaciones cuentan y cuánto vale cada una. Evaluar de nuevo en "
                  "el mismo OUT (--force) escribe changes.md: qué cambió desde entonces, por qué, y si cambió cada "
                  "archivo. Las notas son reproducibles: los argumentos de cada archivo se derivan de un secreto "
                  "de evaluación y de su código; sin --secret (ni $KATA_SECRET) se crea uno y se guarda en "
                  "OUT/.secret, así que reevaluar en OUT repite la nota de cada archivo sin cambios. Código de "
                  "salida 0 una vez escrito el libro de notas, 2 ante un argumento incorrecto. Un archivo de "
                  "curso (docs/grading.md):\n\n"
                  "\b\n"
                  "    title = \"Práctica 4: el bucle de entrenamiento\"\n"
                  "    [points]                 # las comprobaciones que cuentan, y sus puntos\n"
                  "    \"steps.fresh_grads\" = 3\n"
                  "    \"loss.falls\" = 1\n"
                  "    [read]                   # opcional: qué leer cuando falla una comprobación\n"
                  "    \"steps.fresh_grads\" = \"Lección 4, apartado 4\"",
    "kata grade --out": "Carpeta para grades.csv, results.json, class.html y feedback/ (se crea si falta).",
    "kata autograder": "Empaqueta kata para los evaluadores que usan los profesores: un zip de autograder para "
                       "Gradescope, un flujo de trabajo de GitHub Actions o una imagen de Docker que evalúa una "
                       "carpeta de clase sin red (docs/autograding.md).",
    "kata autograder gradescope": "Escribe OUT/autograder.zip para «Configure autograder» de Gradescope.\n\n"
                                  "El zip contiene setup.sh (la versión CPU de torch y luego kata), run_autograder "
                                  "(`kata check` del único archivo entregado, en results/results.json), el código de "
                                  "kata, la carpeta del curso (--course) y el secreto de evaluación (--secret o "
                                  "$KATA_SECRET; que los estudiantes no vean el zip).",
    "kata autograder github": "Escribe OUT/.github/workflows/kata.yml: GitHub Actions (y Classroom) comprueba el "
                              "archivo del estudiante en cada push.\n\n"
                              "OUT es el repositorio plantilla de la tarea. El secreto de evaluación es un secreto "
                              "de Actions llamado KATA_SECRET, nunca está en el archivo.",
    "kata autograder github --file": "El archivo del estudiante en el repositorio.",
    "kata autograder docker": "Escribe OUT/Dockerfile: una imagen que evalúa la carpeta de clase montada en /class "
                              "y escribe en /gradebook.\n\n"
                              "Ejecútala sin red, como dicen sus primeras líneas (docker run --network none ...). "
                              "--course también acepta un archivo de puntos del curso, como `kata grade`.",
    "kata grade --course": "Un archivo de curso (TOML), o una carpeta de curso (su kata.toml): las comprobaciones "
                           "que cuentan y sus puntos, qué leer.",
    "kata grade --workers": "Entregas evaluadas a la vez (un núcleo cada una).",
    "kata grade --timeout": "Segundos que puede durar una comprobación en una entrega (por defecto: el límite "
                            "propio de cada comprobación).",
    "kata grade --only": "Evalúa solo esta comprobación (repetible).",
    "kata grade --force": "Evalúa de nuevo en un OUT que ya tiene notas; las nuevas se comparan con ellas.",
    "kata new": "Crea un mutante nuevo ID y su kata: mutants/ID.toml y katas/NNN-SLUG.toml.\n\n"
                "El mutante se aplica a la referencia antes de escribir nada, así que el objetivo debe ser código "
                "real de FUNCTION. SLUG nombra el síntoma (el archivo del alumno es SLUG.py): se pregunta si no se "
                "da --slug. Ambos archivos explican cada campo en comentarios; rellena sus textos TODO y luego "
                "ejecuta `kata new --check SLUG`: nombra cada pieza que falta o falla, prueba que las "
                "comprobaciones atrapan al mutante y solo sale con 0 cuando la kata está lista (hasta entonces es "
                "un borrador, oculto en `kata list` y `kata next`). Los archivos existentes nunca se "
                "sobrescriben.",
    "kata new --check": "No crea nada: dice qué le falta aún a la kata (o al mutante) ID antes de que la vean "
                        "los alumnos, pasando su mutante por las comprobaciones que declara.",
    "kata new --slug": "El slug de la kata, que nombra el síntoma (se pregunta si no se da).",
    "kata new --target": "El código que romper, tal como está escrito en la referencia, p. ej. "
                         "'optimizer.zero_grad()'.",
    "kata new --killed-by": "Una comprobación que debe atrapar al mutante (repetible), p. ej. steps.fresh_grads.",
    "kata new --operator": "Cómo romperlo (el archivo del mutante lista todos los operadores).",
    "kata new --function": "La función de la referencia que contiene el objetivo.",
    "kata new --call": "Solo lugares dentro de esta llamada, p. ej. torch.optim.Adam (un objetivo que es un "
                       "argumento puede ser entonces solo el nombre de la palabra clave).",
    "kata new --occurrence": "De varios lugares donde encaja el objetivo, el n-ésimo en orden del archivo.",
    "kata new --arg": "Un argumento del operador (repetible), p. ej. --arg anchor='optimizer.step()'.",
    "kata new --number": "El número de la kata (por defecto: el siguiente múltiplo de 10).",
    "kata new --mutants-dir": "Por defecto: $KATA_MUTANTS_DIR, si no la carpeta mutants/ del repositorio.",
    # ------------------------------------------------------------------ kata mutants
    "kata mutants": "Los bucles rotos detrás de las katas, y la prueba de que las comprobaciones atrapan cada "
                    "uno.\n\n"
                    "Cada recorrido tiene sus propios mutantes y su referencia: "
                    "`kata mutants --track three-classes verify`.",
    "kata mutants --mutants-dir": "Lee los mutantes de esta carpeta en lugar de la incluida.",
    "kata mutants list": "Lista cada mutante: id, operador, dónde se aplica, las comprobaciones que deben "
                         "matarlo.",
    "kata mutants show": "Muestra el mutante ID como diff unificado frente a la referencia (en color en una "
                         "terminal).",
    "kata mutants export": "Escribe el archivo de bucle del mutante ID en DEST (un archivo, o una carpeta que "
                           "guardará ID.py).",
    "kata mutants export --force": "Sobrescribe DEST si existe.",
    "kata mutants verify": "Evalúa la referencia y cada mutante; imprime la matriz de muertes.\n\n"
                           "La referencia pasa la batería entera. Un mutante pasa las comprobaciones que alcanzan "
                           "el código que cambió (una que no alcanza nada de él se comporta como con la "
                           "referencia, que la pasa), y la batería entera otra vez si así sobrevive o no lo mata "
                           "una comprobación que declara; --all-checks pasa todas las comprobaciones a cada "
                           "mutante.\n\n"
                           "Cada veredicto se guarda en el proofs.json de la carpeta de mutantes (lo que lee "
                           "`kata list` para distinguir una kata lista de un borrador; súbelo con los archivos de "
                           "mutantes).\n\n"
                           "Código de salida: 0 cuando la referencia pasa cada comprobación con cada semilla y "
                           "cada mutante muere por cada comprobación que declara; 1 si no (un superviviente, una "
                           "muerte declarada que no ocurre, una referencia inestable o que falla, un mutante que "
                           "no se puede construir ni evaluar); 2 ante una petición incorrecta.",
    "kata mutants verify --only": "Verifica solo este mutante (repetible).",
    "kata mutants verify --all-checks": "Pasa todas las comprobaciones a cada mutante, también las que no "
                                        "alcanzan nada del código que el mutante cambió.",
    "kata mutants verify --json": "Escribe un informe de mutation-testing de Stryker (versión 2 del esquema) en "
                                  "este archivo.",
    "kata mutants verify --html": "Escribe una página HTML autónoma con la matriz de muertes y cada diff.",
    "kata mutants verify --seeds": "Ejecuta la referencia con este número de semillas globales; una "
                                   "comprobación cuyo veredicto cambia es inestable.",
    "kata mutants doc": "La página del catálogo de katas (docs/katas.md), generada a partir de los archivos de "
                        "katas y mutantes.\n\n"
                        "Los borradores quedan fuera. `kata new --check` actualiza docs/katas.md por sí solo "
                        "cuando una kata está lista.",
    "kata mutants doc --out": "Escribe la página aquí (p. ej. docs/katas.md) en lugar de imprimirla.",
    "kata mutants generate": "Aplica cada operador en cada lugar razonable de la referencia y lista los "
                             "supervivientes.\n\n"
                             "Un superviviente es un cambio que ninguna comprobación nota: un hueco en la batería, "
                             "o un cambio que no cambia nada (un mutante equivalente). Los equivalentes se "
                             "reconocen por el código (dos sentencias que no comparten nada, una línea solo de "
                             "CUDA) y por el comportamiento (cada comprobación midió exactamente las cifras de la "
                             "referencia, p. ej. un argumento quitado cuyo valor por defecto da lo mismo); solo el "
                             "resto se lista como huecos. Los veredictos se guardan por (código mutado, versión "
                             "del corrector) en $KATA_CACHE_DIR (si no ~/.cache/kata), así que repetir evalúa solo "
                             "lo que cambió. Código de salida: 0 cuando no queda ningún hueco, 1 si no.",
    "kata mutants generate --function": "Muta solo esta función del protocolo (repetible; por defecto: todas "
                                        "menos las que llaman a seed_everything).",
    "kata mutants generate --operator": "Usa solo este operador (repetible).",
    "kata mutants generate --limit": "Evalúa como mucho este número de mutantes generados.",
    "kata mutants generate --dry-run": "Lista los mutantes generados sin evaluarlos.",
    "kata mutants generate --json": "Escribe los mutantes generados y sus veredictos como informe de Stryker.",
    "kata mutants generate --no-cache": "Evalúa de nuevo cada mutante (los veredictos se guardan por código "
                                        "mutado y versión del corrector).",
}

# click's own words in a help page (its headings and the notes after an option's help)
CLICK_ES: dict[str, str] = {
    "Usage:": "Uso:", "Options": "Opciones", "Commands": "Comandos", "Arguments": "Argumentos",
    "default:": "por defecto:", "required": "obligatorio", "env var:": "variable de entorno:",
}


def option_name(param: click.Parameter) -> str:
    """An option's longest name (``--batch-size``), as the catalogue keys it."""
    return max(param.opts, key=len)


def spanish_help(path: str, english: str | None, option: str | None = None) -> str | None:
    """The Spanish help of command ``path`` (or of its ``option``), else None when the catalogue lacks it."""
    key = f"{path} {option}" if option else path
    if key in HELP_ES:
        return HELP_ES[key]
    return SHARED_ES.get(" ".join((english or "").split())) if english else None


def help_lang(ctx: click.Context) -> str:
    """The language of a help page: a --lang on the command line, else $KATA_LANG, else the locale."""
    return resolve_lang(ctx.meta.get(LANG_KEY))


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


class HelpFormatter(click.HelpFormatter):
    """click's help formatter, with its headings and notes in Spanish."""

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        args = args.replace("[OPTIONS]", "[OPCIONES]").replace("COMMAND [ARGS]", "COMANDO [ARGS]")
        super().write_usage(prog, args, prefix=f"{CLICK_ES['Usage:']} " if prefix is None else prefix)

    @contextmanager
    def section(self, name: str):
        with super().section(CLICK_ES.get(name, name)):
            yield

    def write_dl(self, rows, col_max: int = 30, col_spacing: int = 2) -> None:
        def spanish(text: str) -> str:
            for en in ("default:", "env var:", "required"):
                text = text.replace(f"[{en}", f"[{CLICK_ES[en]}").replace(f"; {en}", f"; {CLICK_ES[en]}")
            return text

        super().write_dl([(first, spanish(second)) for first, second in rows], col_max, col_spacing)


class HelpContext(click.Context):
    """The context of every `kata` command: its help page in Spanish when the language is Spanish."""

    def make_formatter(self) -> click.HelpFormatter:
        if help_lang(self) != "es":
            return super().make_formatter()
        return HelpFormatter(width=self.terminal_width, max_width=self.max_content_width)

    def get_help(self) -> str:
        if help_lang(self) != "es":
            return super().get_help()
        with _texts_in_spanish(self):
            return super().get_help()


@contextmanager
def _texts_in_spanish(ctx: click.Context):
    """The command's help, its options' and its subcommands' in Spanish while its page is written; restored
    after. A text the catalogue lacks stays English (tests/test_help_es.py names it)."""
    command, path = ctx.command, ctx.command_path
    saved: list[tuple[object, str, object]] = []

    def swap(obj: object, attr: str, value: object) -> None:
        saved.append((obj, attr, getattr(obj, attr)))
        setattr(obj, attr, value)

    try:
        text = spanish_help(_catalogue_path(ctx), command.help)
        if text is not None:
            swap(command, "help", text)
        for param in command.get_params(ctx):
            if isinstance(param, click.Option) and param.help:
                text = spanish_help(_catalogue_path(ctx), param.help, option_name(param))
                if text is not None:
                    swap(param, "help", text)
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                text = spanish_help(f"{_catalogue_path(ctx)} {name}", sub.help)
                if text is not None:
                    swap(sub, "help", text)
                    swap(sub, "short_help", None)
        yield path
    finally:
        for obj, attr, value in reversed(saved):
            setattr(obj, attr, value)


def _catalogue_path(ctx: click.Context) -> str:
    """The command's path as the catalogue keys it: ``kata`` then the subcommands' names, whatever the program
    was called (``python -m checker``)."""
    names = []
    while ctx.parent is not None:
        names.append(ctx.info_name or ctx.command.name or "")
        ctx = ctx.parent
    return " ".join(["kata", *reversed(names)])


# click's own usage errors, as it words them, and their Spanish (tried in order, on the whole message)
CLICK_ERRORS_ES: tuple[tuple[str, str], ...] = (
    (r"^Invalid value for (.+?): (.*)$", "Valor no válido para {0}: {1}"),
    (r"^Invalid value: (.*)$", "Valor no válido: {0}"),
    (r"^(.+?) is not a valid float(?: range)?\.$", "{0} no es un número decimal válido."),
    (r"^(.+?) is not a valid integer(?: range)?\.$", "{0} no es un número entero válido."),
    (r"^(.+?) is not in the range (.+?)\.$", "{0} no está en el rango {1}."),
    (r"^(.+?) is not one of (.+?)\.$", "{0} no es ninguno de {1}."),
    (r"^No such option:? (\S+?)\.?\s*Did you mean (.+?)\?$", "No existe la opción {0}. ¿Quisiste decir {1}?"),
    (r"^No such option:? (\S+?)\.?$", "No existe la opción {0}."),
    (r"^No such command (.+?)\.\s*Did you mean (.+?)\?$", "No existe el comando {0}. ¿Quisiste decir {1}?"),
    (r"^No such command (.+?)\.$", "No existe el comando {0}."),
    (r"^Missing argument (.+?)\.$", "Falta el argumento {0}."),
    (r"^Missing option (.+?)\.$", "Falta la opción {0}."),
    (r"^Got unexpected extra arguments? \((.+)\)$", "Sobran argumentos ({0})"),
    (r"^Option (\S+) requires an argument\.$", "La opción {0} necesita un valor."),
    (r"^Option (\S+) does not take a value\.$", "La opción {0} no lleva valor."),
    (r"^File (.+?) does not exist\.$", "El archivo {0} no existe."),
    (r"^Directory (.+?) does not exist\.$", "La carpeta {0} no existe."),
    (r"^(File|Directory|Path) (.+?) is a directory\.$", "{1} es una carpeta."),
)


def spanish_click_error(message: str) -> str:
    """One of click's usage messages in Spanish (the parts it recognises; the rest as click wrote them)."""
    import re

    for pattern, spanish in CLICK_ERRORS_ES:
        found = re.match(pattern, message, re.S)
        if found:
            return spanish.format(*(spanish_click_error(g) for g in found.groups()))
    return message


class SpanishUsageError(click.UsageError):
    """A usage error of click's, said in Spanish: its usage line, the message, where to find help."""

    def __init__(self, error: click.UsageError):
        super().__init__(spanish_click_error(error.format_message()), error.ctx)
        self.exit_code = error.exit_code

    def show(self, file=None) -> None:
        ctx = self.ctx
        if ctx is not None:
            hint = ""
            if ctx.command.get_help_option(ctx) is not None:
                option = max(ctx.command.get_help_option_names(ctx), key=len)
                hint = f"Prueba '{ctx.command_path} {option}' para ver la ayuda.\n"
            click.echo(f"{ctx.get_usage()}\n{hint}", file=file, err=file is None, color=ctx.color)
        click.echo(f"Error: {self.format_message()}", file=file, err=file is None,
                   color=ctx.color if ctx is not None else None)
