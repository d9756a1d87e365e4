"""kata's pytest plugin (entry point ``pytest11``): the ``kata_loop`` fixture.

    def test_training_loop(kata_loop):
        kata_loop(model=Net, data=train_set, optimizer=make_optimizer, train=train, evaluate=test)

The test fails with kata's message, each fault at its ``file:line``, and no traceback from kata. Nothing heavy
is imported until the fixture is used, so the plugin costs nothing to test suites that do not use it.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kata")
    group.addoption("--kata-lang", default=None, choices=("en", "es"),
                    help="language of kata's messages (default: $KATA_LANG, else the locale)")


@pytest.fixture
def kata_loop(request: pytest.FixtureRequest):
    """A function taking the pieces :func:`kata.check_loop` takes: it runs kata's checks on them and fails the
    test with the report when a check fails (or the pieces cannot be used); it returns the report."""
    lang = request.config.getoption("--kata-lang")

    def check(**pieces):
        from checker.base.i18n import resolve_lang
        from checker.project.report import ProjectInputError
        from checker.project.runner import check_loop

        try:
            report = check_loop(**pieces)
        except ProjectInputError as exc:
            pytest.fail(f"kata: {exc.render(resolve_lang(lang))}", pytrace=False)
        if not report.ok:
            pytest.fail(report.render(lang), pytrace=False)
        return report

    return check
