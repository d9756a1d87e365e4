"""`--format gradescope` and `--format junit`: validated against the documented shapes.

Gradescope: a JSON Schema written from the autograder specification (tests/data). JUnit: the
structure Jenkins' xUnit plugin schema (junit-10.xsd) and GitLab/GitHub reporters accept, checked
element by element with xml.etree.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from checker.cli import main
from checker.engine.formats import render_gradescope, render_junit
from checker.engine.grading import CheckResult, Report
from tests.conftest import REFERENCE

SCHEMA = json.loads((Path(__file__).parent / "data" / "gradescope_results.schema.json").read_text())
LEARNER_OUTPUT = "epoch 1 \x1b[31mloss\x1b[0m <b>&amp; 0.5\x00\x07 done\n"


def mixed_report() -> Report:
    checks = [
        CheckResult("steps.overfit", "steps", "overfit 8 examples", "pass", "all 8 right",
                    {"loss": 0.01}, 1.25),
        CheckResult("steps.fresh_grads", "steps", "fresh gradients", "fail",
                    "at step 2 the gradient was the sum of 2 batches\nexpected only the current batch's",
                    {}, 0.5),
        CheckResult("schedule.step", "schedule", "StepLR", "error",
                    "the check stopped because your loop raised an error:\nZeroDivisionError", {}, 0.1),
        CheckResult("memory.graphs", "memory", "no graph kept", "timeout", "did not finish within 30 s",
                    {}, 30.0),
    ]
    return Report(file="sub/loop.py", checks=checks, output=LEARNER_OUTPUT, output_dropped=1234)


def ungradable_report() -> Report:
    return Report(file="sub/broken.py", error_kind="syntax",
                  error="sub/broken.py:3:9: syntax error: expected ':'\n    def f()\n           ^")


# --- Gradescope ----------------------------------------------------------------------------------

def test_the_schema_itself_rejects_what_the_spec_does_not_allow():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    assert validator.is_valid({"score": 1, "tests": [{"name": "a", "status": "passed"}]})
    assert not validator.is_valid({"tests": [{"name": "a", "status": "error"}]})  # status is passed/failed
    assert not validator.is_valid({"tests": [{"name": "a"}]})  # no score anywhere
    assert not validator.is_valid({"score": 1, "tests": [{"max_points": 1}]})  # unknown key


def test_gradescope_results_follow_the_spec_one_test_per_check():
    report = mixed_report()
    data = json.loads(render_gradescope(report))
    jsonschema.validate(data, SCHEMA)
    assert data["score"] == 1.0
    assert [t["status"] for t in data["tests"]] == ["passed", "failed", "failed", "failed"]
    assert [t["score"] for t in data["tests"]] == [1.0, 0.0, 0.0, 0.0]
    assert all(t["max_score"] == 1.0 for t in data["tests"])
    assert data["tests"][0]["name"] == "steps.overfit: overfit 8 examples"
    assert data["tests"][1]["output"].startswith("at step 2 the gradient was the sum of 2 batches")
    assert "could not finish: an error" in data["tests"][2]["output"]
    assert "could not finish: out of time" in data["tests"][3]["output"]
    assert data["tests"][3]["tags"] == ["memory"]
    assert data["output"].startswith("1/4 checks pass")
    assert "<b>&amp; 0.5" in data["output"] and "1,234 more bytes" in data["output"]
    assert data["output_format"] == "text"  # the learner's printing is never rendered as HTML


def test_gradescope_in_spanish():
    data = json.loads(render_gradescope(mixed_report(), lang="es"))
    jsonschema.validate(data, SCHEMA)
    assert data["output"].startswith("1/4 comprobaciones correctas")
    assert "se acabó el tiempo" in data["tests"][3]["output"]


def test_gradescope_for_an_ungradable_file_scores_zero_with_the_reason():
    data = json.loads(render_gradescope(ungradable_report()))
    jsonschema.validate(data, SCHEMA)
    assert data["score"] == 0
    assert data["tests"] == []
    assert "cannot grade sub/broken.py" in data["output"]
    assert "syntax error: expected ':'" in data["output"]


# --- JUnit ---------------------------------------------------------------------------------------

_TIME = re.compile(r"^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$")  # the xUnit schema's time pattern
_XML_CHAR = re.compile("^[\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*$")
_ALLOWED = {
    "testsuites": ({"testsuite"}, set(), {"name", "time", "tests", "failures", "errors"}),
    "testsuite": ({"testsuite", "properties", "testcase", "system-out", "system-err"},
                  {"name", "tests", "failures", "errors"},
                  {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp", "hostname",
                   "id", "package", "file", "log", "url"}),
    "properties": ({"property"}, set(), set()),
    "property": (set(), {"name", "value"}, {"name", "value"}),
    "testcase": ({"skipped", "error", "failure", "system-out", "system-err"}, {"name"},
                 {"name", "time", "classname", "group"}),
    "failure": (set(), set(), {"type", "message"}),
    "error": (set(), set(), {"type", "message"}),
    "skipped": (set(), set(), {"type", "message"}),
    "system-out": (set(), set(), set()),
    "system-err": (set(), set(), set()),
}


def assert_junit_shape(element: ET.Element) -> None:
    """Every element, child and attribute is one the JUnit schema allows; counts and times well formed."""
    children, required, allowed = _ALLOWED[element.tag]
    assert required <= set(element.attrib), f"<{element.tag}> lacks {required - set(element.attrib)}"
    assert set(element.attrib) <= allowed, f"<{element.tag}> has {set(element.attrib) - allowed}"
    for key in ("tests", "failures", "errors", "skipped"):
        if key in element.attrib:
            assert element.attrib[key].isdigit()
    if "time" in element.attrib:
        assert _TIME.match(element.attrib["time"]), element.attrib["time"]
    for value in [*element.attrib.values(), element.text or ""]:
        assert _XML_CHAR.match(value)
    for child in element:
        assert child.tag in children, f"<{child.tag}> inside <{element.tag}>"
        assert_junit_shape(child)


def parse_junit(text: str) -> ET.Element:
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    assert_junit_shape(root)
    return root


def test_the_shape_check_itself_rejects_what_the_schema_does_not_allow():
    for bad in ('<testsuites><testcase name="x"/></testsuites>',
                '<testsuites><testsuite name="s" tests="1" failures="0"/></testsuites>',
                '<testsuites><testsuite name="s" tests="1" failures="0" errors="0" time="1.5s"/>'
                '</testsuites>',
                '<testsuites><testsuite name="s" tests="1" failures="0" errors="0">'
                '<testcase name="a"><failure reason="x"/></testcase></testsuite></testsuites>'):
        with pytest.raises(AssertionError):
            assert_junit_shape(ET.fromstring(bad))


def test_junit_has_a_testcase_per_check_with_failures_and_errors():
    root = parse_junit(render_junit(mixed_report()))
    (suite,) = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "1", "2")
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "2")
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("steps", "steps.overfit"), ("steps", "steps.fresh_grads"), ("schedule", "schedule.step"),
        ("memory", "memory.graphs")]
    assert cases[0].get("time") == "1.250" and list(cases[0]) == []
    (failure,) = cases[1]
    assert failure.tag == "failure"
    assert failure.get("message") == "at step 2 the gradient was the sum of 2 batches"
    assert "expected only the current batch's" in failure.text
    assert [(c[0].tag, c[0].get("type")) for c in cases[2:]] == [("error", "error"), ("error", "timeout")]
    assert "ZeroDivisionError" in cases[2][0].text
    out = suite.find("system-out").text
    assert "epoch 1 loss <b>&amp; 0.5 done" in out  # colour codes and control characters removed, text kept
    assert "1,234 more bytes" in out
    assert suite.find("properties/property").attrib == {"name": "file", "value": "sub/loop.py"}


def test_junit_for_an_ungradable_file_is_one_error():
    root = parse_junit(render_junit(ungradable_report()))
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("1", "0", "1")
    (case,) = suite.findall("testcase")
    (error,) = case
    assert error.tag == "error" and error.get("type") == "syntax"
    assert "syntax error: expected ':'" in error.get("message")
    assert "def f()" in error.text


# --- through `kata check` ------------------------------------------------------------------------

def test_kata_check_prints_gradescope_results_for_the_reference(runner):
    args = ["check", str(REFERENCE), "--only", "steps.overfit", "--format", "gradescope"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    jsonschema.validate(data, SCHEMA)
    assert data["score"] == 1.0 and data["tests"][0]["status"] == "passed"


def test_kata_check_prints_junit_for_a_failing_loop(tmp_path, runner):
    broken = tmp_path / "broken.py"
    broken.write_text(REFERENCE.read_text().replace("        loss.backward()\n", "        pass\n"))
    result = runner.invoke(main, ["check", str(broken), "--only", "steps.overfit", "--format", "junit"])
    assert result.exit_code == 1, result.output
    suite = parse_junit(result.output).find("testsuite")
    assert suite.get("failures") == "1"
    assert suite.find("testcase/failure") is not None


@pytest.mark.parametrize("content", [None, "def f(:\n"])
def test_kata_check_still_prints_a_report_for_a_file_it_cannot_grade(tmp_path, runner, content):
    path = tmp_path / "sub.py"
    if content is not None:
        path.write_text(content)
    gradescope = runner.invoke(main, ["check", str(path), "--format", "gradescope"])
    assert gradescope.exit_code == 2
    data = json.loads(gradescope.stdout)
    jsonschema.validate(data, SCHEMA)
    assert data["score"] == 0 and str(path) in data["output"]
    junit = runner.invoke(main, ["check", str(path), "--format", "junit"])
    assert junit.exit_code == 2
    suite = parse_junit(junit.stdout).find("testsuite")
    assert suite.get("errors") == "1"
    assert suite.find("testcase/error").get("type") == ("not_found" if content is None else "syntax")


# --- held for review (the integrity note) ---------------------------------------------------------

def held_report() -> Report:
    checks = [CheckResult("steps.overfit", "steps", "overfit 8 examples", "pass", "all 8 right", {}, 1.0),
              CheckResult("steps.fresh_grads", "steps", "fresh gradients", "pass", "fresh", {}, 0.5)]
    report = Report(file="sub/sly.py", checks=checks)
    report.integrity = ["line 3: inspects the interpreter (sys.modules)", "line 9: imports kata's own code (checker)"]
    return report


def test_a_held_report_scores_zero_on_gradescope_with_a_visible_note():
    data = json.loads(render_gradescope(held_report()))
    jsonschema.validate(data, SCHEMA)
    assert data["score"] == 0 and all(t["score"] == 0 for t in data["tests"])
    assert data["output"].startswith("held for review: line 3: inspects the interpreter (sys.modules)")
    assert data["extra_data"]["held_for_review"] is True and data["extra_data"]["passed"] is False
    es = json.loads(render_gradescope(held_report(), "es"))
    assert es["output"].startswith("retenido para revisión:")


def test_a_held_report_is_a_failed_integrity_case_in_junit():
    root = parse_junit(render_junit(held_report()))
    assert_junit_shape(root)
    suite = root.find("testsuite")
    case = next(c for c in suite.findall("testcase") if c.get("name") == "integrity")
    failure = case.find("failure")
    assert failure.get("type") == "held_for_review" and "sys.modules" in failure.text
    assert suite.get("failures") == "1" and suite.get("tests") == "3"


def test_a_held_report_is_not_shown_as_passing_in_text_or_json():
    from rich.console import Console

    from checker.engine.formats import render_json, render_text

    console = Console(record=True, width=120, color_system=None)
    render_text(held_report(), console)
    text = console.export_text()
    assert "every check passes" not in text and "held for review" in text and "line 9" in text
    data = json.loads(render_json(held_report()))
    assert data["passed"] is False and data["held_for_review"] is True and len(data["integrity"]) == 2


# --- a course's weights (kata check --course) -----------------------------------------------------

WEIGHTS = {"steps.overfit": 3.0, "steps.fresh_grads": 5.0, "schedule.step": 1.0, "memory.graphs": 0.5}


def test_a_courses_weights_are_each_tests_max_score_on_gradescope():
    data = json.loads(render_gradescope(mixed_report(), weights=WEIGHTS))
    jsonschema.validate(data, SCHEMA)
    assert [t["max_score"] for t in data["tests"]] == [3.0, 5.0, 1.0, 0.5]
    assert [t["score"] for t in data["tests"]] == [3.0, 0.0, 0.0, 0.0]
    assert data["score"] == 3.0


def test_a_courses_weights_in_junit_json_and_text():
    from rich.console import Console

    from checker.engine.formats import render_json, render_text

    root = parse_junit(render_junit(mixed_report(), weights=WEIGHTS))
    assert_junit_shape(root)
    props = {p.get("name"): p.get("value") for p in root.find("testsuite").find("properties")}
    assert props["points"] == "3" and props["max_points"] == "9.5"
    assert props["points:steps.overfit"] == "3/3" and props["points:steps.fresh_grads"] == "0/5"
    data = json.loads(render_json(mixed_report(), WEIGHTS))
    assert (data["points"], data["max_points"]) == (3.0, 9.5)
    assert {c["id"]: (c["points"], c["max_points"]) for c in data["checks"]}["steps.overfit"] == (3.0, 3.0)
    console = Console(record=True, width=120, color_system=None)
    render_text(mixed_report(), console, weights=WEIGHTS)
    assert "course points: 3/9.5" in console.export_text()


def test_a_held_report_shows_no_green_test_and_no_points_in_any_format():
    from checker.engine.formats import render_json

    weights = {"steps.overfit": 2.0, "steps.fresh_grads": 4.0}
    data = json.loads(render_gradescope(held_report(), weights=weights))
    jsonschema.validate(data, SCHEMA)
    assert [t["status"] for t in data["tests"]] == ["failed", "failed"]
    assert all(t["output"].startswith("held for review: this check passed") for t in data["tests"])
    assert [t["max_score"] for t in data["tests"]] == [2.0, 4.0] and data["score"] == 0
    as_json = json.loads(render_json(held_report(), weights))
    assert as_json["points"] == 0 and all(c["held_for_review"] for c in as_json["checks"])
    props = {p.get("name"): p.get("value")
             for p in parse_junit(render_junit(held_report(), weights=weights)).find("testsuite").find("properties")}
    assert props["points"] == "0" and props["held_for_review"] == "true"


def test_hostile_names_land_as_text_in_gradescope_and_junit():
    """A name made to run where it lands (a formula, HTML, a Markdown link) stays text: Gradescope is told every
    output is plain text, and JUnit's XML escapes it (one element per check, no element from the name)."""
    name = '=HYPERLINK("https:evil.example?")<script>alert(1)</script>[open](javascript:alert(1)).py'
    report = mixed_report()
    report.file = name
    report.checks[1].message = f"{name}:3: see here"
    results = json.loads(render_gradescope(report))
    jsonschema.validate(results, SCHEMA)
    formats = [results["output_format"], *(t["output_format"] for t in results["tests"]),
               *(t["name_format"] for t in results["tests"])]
    assert set(formats) == {"text"}
    root = ET.fromstring(render_junit(report))
    assert not [el for el in root.iter() if el.tag.lower() in ("script", "a")]
    assert any(name in (el.text or "") for el in root.iter())  # the text itself, escaped by XML, not dropped
    broken = Report(file=name, error_kind="syntax", error=f"{name}:1: syntax error")
    assert json.loads(render_gradescope(broken))["output_format"] == "text"
    ET.fromstring(render_junit(broken))
