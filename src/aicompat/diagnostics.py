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
    cell: int | None = None  # notebook cell number; line stays the notebook-global line
    cell_line: int | None = None
    fix: str | None = field(default=None, repr=False)  # replacement for line:column..end_line:end_column

    def sort_key(self):
        return (self.path, self.line, self.column, self.code, self.message)

    def location(self) -> str:
        """``path:line:col``, or ``path:cell N:line:col`` inside a notebook."""
        if self.cell is not None:
            return f"{self.path}:cell {self.cell}:{self.cell_line}:{self.column}"
        return f"{self.path}:{self.line}:{self.column}"

    def as_json(self) -> dict:
        d = asdict(self)
        d.pop("fix")
        if self.cell is None:
            d.pop("cell")
            d.pop("cell_line")
        return d
