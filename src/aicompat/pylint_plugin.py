"""pylint plugin: ``pylint --load-plugins=aicompat.pylint_plugin file.py``.

A thin adapter: it runs the same linter as ``aicompat lint`` on the module
pylint is checking and reports each diagnostic as a pylint message with the
same text. Message ids are stable: ``E73NN`` where NN comes from the rule code
(AIC101 -> E7311), symbols are ``aicompat-<rule name>``. The target comes from
``[tool.aicompat]`` as for the CLI, overridden by ``--aicompat-gpu``,
``--aicompat-python`` and ``--aicompat-pin``.
"""

from __future__ import annotations

from pathlib import Path

from pylint.checkers import BaseRawFileChecker

from .config import build_settings
from .errors import ConfigError, MatrixError
from .linter import Linter
from .matrix import default_matrix
from .registry import CODES
from .target import Target


def msgid(code: str) -> str:
    """AIC001 -> E7301, AIC101 -> E7311, AIC302 -> E7332 (family digit, then rule number)."""
    family, number = code[3], int(code[4:])
    return f"E73{family}{number % 10}" if code != "AIC000" else "F7300"


def symbol(name: str) -> str:
    return f"aicompat-{name}"


MSGS = {
    msgid(code): ("%s", symbol(name), f"aicompat {code} {name}: see `aicompat explain {code}`.")
    for code, name in CODES.items()
}
MSGS["F7300"] = ("%s", "aicompat-internal-error", "aicompat could not check this module (configuration or internal error).")


class AicompatChecker(BaseRawFileChecker):
    name = "aicompat"
    msgs = MSGS
    options = (
        ("aicompat-gpu", {"type": "csv", "metavar": "<gpus>", "default": (),
                          "help": "Fleet members (sm_90, H100, ...); overrides [tool.aicompat] gpus."}),
        ("aicompat-python", {"type": "string", "metavar": "<X.Y>", "default": "",
                             "help": "Target Python; overrides [tool.aicompat] python."}),
        ("aicompat-pin", {"type": "csv", "metavar": "<requirements>", "default": (),
                          "help": "Package pins such as torch==2.4.0; override the project's."}),
    )

    def process_module(self, node) -> None:
        path = node.file
        if not path:
            return
        try:
            data = Path(path).read_bytes()
            matrix = default_matrix()
            cfg = self.linter.config
            cli = Target(gpus=list(cfg.aicompat_gpu) or None, python=cfg.aicompat_python or None)
            settings = build_settings(matrix, start=Path(path), cli=cli, cli_pins=list(cfg.aicompat_pin))
        except (OSError, ConfigError, MatrixError) as exc:
            self.add_message("aicompat-internal-error", line=1, args=(f"aicompat: {exc}",))
            return
        linter = Linter(settings.target, matrix, select=settings.select, ignore=settings.ignore)
        for d in linter.lint_bytes(data, path).diagnostics:
            sym = "aicompat-internal-error" if d.code == "AIC000" else symbol(d.rule)
            self.add_message(sym, line=d.line, col_offset=d.column - 1, end_lineno=d.end_line,
                             end_col_offset=d.end_column - 1, args=(f"{d.code} {d.message}",))


def register(linter) -> None:
    linter.register_checker(AicompatChecker(linter))
