"""pylint plugin: ``pylint --load-plugins=aicompat.pylint_plugin file.py``.

A thin adapter: it runs the same lint as ``aicompat lint`` (``api.run``, with
the CLI's size and time limits and a worker process per checked module) on the
text pylint parsed, which is the editor's unsaved buffer under ``pylint
--from-stdin``, and reports each diagnostic as a pylint message with the same
text. The target comes from ``[tool.aicompat]`` as for the CLI, overridden by
``--aicompat-gpu``, ``--aicompat-python`` and ``--aicompat-pin`` (each
repeatable, or comma-separated).

Message ids are a contract: ``rules/codes.toml`` assigns each rule code its
two digits once (``MESSAGE_NUMBERS``), never derived (``number % 10`` would give AIC111 the id of
AIC101); the letter is the rule's documented severity (E or W).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from pylint.checkers import BaseRawFileChecker

from .base.errors import ConfigError, MatrixError
from .cli import DEFAULT_TIMEOUT
from .matrix import default_matrix
from .matrix.target import Target
from .report.ruledocs import load_docs
from .rules.registry import CODES, MESSAGE_NUMBERS  # the ids: rules/codes.toml
from .run.api import run
from .run.config import build_settings

# E73NN / W73NN with NN from rules/codes.toml; a new code needs a new free number there
# (tests/test_pylint_plugin.py checks they are distinct).
CONFIG_ERROR = "F7399"
_LETTER = {"error": "E", "warning": "W"}


@lru_cache(maxsize=1)
def _docs() -> dict:
    """The rule docs, read once: every message id needs its rule's severity (once per code they
    cost ~0.3 s of each pylint run, which an editor pays on every save)."""
    return load_docs()


def msgid(code: str) -> str:
    """AIC001 -> E7301, AIC101 -> E7311, AIC203 -> W7323 (a warning-level rule), AIC000 -> F7300."""
    if code == "AIC000":
        return "F7300"
    doc = _docs().get(code)
    return f"{_LETTER.get(doc.severity if doc else 'error', 'E')}73{MESSAGE_NUMBERS[code]}"


def symbol(name: str) -> str:
    return f"aicompat-{name}"


def _messages() -> dict:
    msgs = {msgid(code): ("%s", symbol(name), f"aicompat {code} {name}: see `aicompat explain {code}`.")
            for code, name in CODES.items()}
    msgs["F7300"] = ("%s", "aicompat-internal-error", "aicompat failed on this module (AIC000).")
    msgs[CONFIG_ERROR] = ("%s", "aicompat-config-error",
                          "aicompat's configuration ([tool.aicompat] or the --aicompat-* options) is wrong.")
    return msgs


MSGS = _messages()
_SPEC_START = re.compile(r"\s*(===|==|!=|~=|<=|>=|<|>)")


def join_pins(parts) -> list[str]:
    """pylint splits a csv option at every comma: ``torch>=2.1,<2.4`` arrives as
    ``["torch>=2.1", "<2.4"]``. A part that starts with a version operator
    continues the requirement before it."""
    out: list[str] = []
    for part in parts:
        part = part.strip()
        if not part:
            continue
        if out and _SPEC_START.match(part):
            out[-1] += "," + part
        else:
            out.append(part)
    return out


class AicompatChecker(BaseRawFileChecker):
    name = "aicompat"
    msgs = MSGS
    options = (
        ("aicompat-gpu", {"type": "csv", "action": "extend", "metavar": "<gpus>", "default": [],
                          "help": "Fleet members (sm_90, H100, ...), repeatable or comma-separated; "
                                  "overrides [tool.aicompat] gpus."}),
        ("aicompat-python", {"type": "string", "metavar": "<X.Y>", "default": "",
                             "help": "Target Python; overrides [tool.aicompat] python."}),
        ("aicompat-pin", {"type": "csv", "action": "extend", "metavar": "<requirements>", "default": [],
                          "help": "Package pins such as torch==2.4.0 or 'torch>=2.1,<2.4', repeatable; "
                                  "override the project's."}),
    )

    def process_module(self, node) -> None:
        path = node.file
        stream = node.stream()  # the text pylint parsed: the buffer under --from-stdin
        if not path or stream is None:
            return
        with stream:
            data = stream.read()
        cfg = self.linter.config
        try:
            matrix = default_matrix()
            cli = Target(gpus=list(cfg.aicompat_gpu) or None, python=cfg.aicompat_python or None)
            # The folder decides which pyproject.toml applies; the file need not exist (a new buffer).
            settings = build_settings(matrix, start=Path(path).parent, cli=cli, cli_pins=join_pins(cfg.aicompat_pin))
        except (OSError, ConfigError, MatrixError) as exc:
            self.add_message("aicompat-config-error", line=1, args=(f"aicompat: {' '.join(str(exc).split())}",))
            return
        timeout = settings.timeout or DEFAULT_TIMEOUT
        try:
            result = run([], settings, matrix, stdin=(data, path), isolate=True, timeout=timeout)
        except (OSError, AssertionError):  # no worker process here (a daemonic parent): lint in this one
            result = run([], settings, matrix, stdin=(data, path), timeout=timeout)
        for d in result.diagnostics:
            sym = "aicompat-internal-error" if d.code == "AIC000" else symbol(d.rule)
            self.add_message(sym, line=d.line, col_offset=d.column - 1, end_lineno=d.end_line,
                             end_col_offset=d.end_column - 1, args=(f"{d.code} {d.message}",))


def register(linter) -> None:
    linter.register_checker(AicompatChecker(linter))
