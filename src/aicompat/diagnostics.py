"""The diagnostic record every rule produces and every formatter reads."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Diagnostic:
    path: str
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int
    code: str
    rule: str
    severity: str  # "error" | "warning"
    message: str
    targets: list[str] = field(default_factory=list)

    def sort_key(self):
        return (self.path, self.line, self.column, self.code, self.message)

    def as_json(self) -> dict:
        return asdict(self)
