"""Loading a loop file: reading, compiling, importing under a private name, validating the protocol."""

from __future__ import annotations

import pytest

from checker.base.errors import LoopFileError
from checker.loopfile.loading import compile_source, load_loop, protocol_problems, read_source
from checker.loopfile.protocol import BY_NAME, FUNCTIONS


def test_reference_loads_and_follows_the_protocol(reference_source):
    module = load_loop(reference_source, "loop.py")
    assert protocol_problems(module) == []
    assert module.__name__.startswith("_kata_loop_")
    assert module.__name__ != "__main__"


def test_two_loads_are_independent_modules(reference_source):
    a = load_loop(reference_source, "a.py")
    b = load_loop(reference_source, "b.py")
    assert a is not b and a.__name__ != b.__name__


@pytest.mark.parametrize("name", [f.name for f in FUNCTIONS])
def test_missing_function_is_named_with_its_signature(reference_source, name):
    broken = reference_source.replace(f"def {name}(", f"def renamed_{name}(")
    with pytest.raises(LoopFileError) as err:
        load_loop(broken, "broken.py")
    assert err.value.kind == "protocol"
    assert f"missing function {name}" in err.value.message
    assert BY_NAME[name].signature in err.value.message


def test_wrong_signature_is_reported(reference_source):
    broken = reference_source.replace(
        "def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device=\"cpu\"):",
        "def train_epoch(model, loader, optimizer, loss_fn):",
    )
    assert broken != reference_source
    with pytest.raises(LoopFileError) as err:
        load_loop(broken, "broken.py")
    assert "train_epoch(model, loader, optimizer, loss_fn) cannot be called as" in err.value.message
    assert "scheduler" in err.value.message


def test_other_correct_signatures_are_accepted(reference_source):
    relaxed = reference_source.replace(
        "def evaluate(model, X, y, loss_fn, *, device=\"cpu\"):", "def evaluate(model, X, y, loss_fn, **options):\n"
        "    device = options.get('device', 'cpu')"
    )
    assert relaxed != reference_source
    load_loop(relaxed, "relaxed.py")


def test_not_callable_is_reported(reference_source):
    with pytest.raises(LoopFileError, match="make_model is a int, not a function"):
        load_loop(reference_source + "\nmake_model = 3\n", "x.py")


def test_syntax_error_names_file_line_and_shows_the_line():
    with pytest.raises(LoopFileError) as err:
        compile_source("import torch\n\ndef f(:\n    pass\n", "mine.py")
    assert err.value.kind == "syntax"
    assert err.value.message.startswith("mine.py:3")
    assert "def f(:" in err.value.message and "^" in err.value.message


def test_import_error_names_the_module():
    with pytest.raises(LoopFileError) as err:
        load_loop("import torchh_not_there\n", "x.py")
    assert err.value.kind == "import"
    assert "'torchh_not_there'" in err.value.message


def test_exception_at_import_shows_only_the_learner_frames():
    with pytest.raises(LoopFileError) as err:
        load_loop("def f():\n    return 1 / 0\n\nf()\n", "mine.py")
    message = err.value.message
    assert 'File "mine.py", line 2' in message and "ZeroDivisionError" in message
    assert "loading.py" not in message


def test_exit_at_import_is_reported():
    with pytest.raises(LoopFileError) as err:
        load_loop("import sys\nsys.exit(0)\n", "x.py")
    assert err.value.kind == "exit"


def test_main_block_does_not_run(reference_source):
    load_loop(reference_source + "\nif __name__ == '__main__':\n    raise SystemExit('ran')\n", "x.py")


@pytest.mark.parametrize(
    "content, kind",
    [(None, "not_found"), ("", "empty"), ("   \n\n", "empty"), (b"\x00\x01\x02", "binary"),
     (b"\xff\xfe\xfa", "binary")],
)
def test_bad_files(tmp_path, content, kind):
    path = tmp_path / "loop.py"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(LoopFileError) as err:
        read_source(path)
    assert err.value.kind == kind
    assert str(path) in err.value.message


def test_directory_is_refused(tmp_path):
    with pytest.raises(LoopFileError) as err:
        read_source(tmp_path)
    assert err.value.kind == "not_file" and "directory" in err.value.message
