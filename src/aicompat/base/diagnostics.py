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
    # In a notebook, where the finding is in the .ipynb file itself (inside the JSON string of
    # the cell's line): what annotations (GitHub, SARIF) point at. None elsewhere, or unknown.
    file_line: int | None = None
    file_column: int | None = None
    file_end_line: int | None = None
    file_end_column: int | None = None
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
        for k in ("file_line", "file_column", "file_end_line", "file_end_column"):
            if d[k] is None:
                d.pop(k)
        return d

    def file_region(self) -> tuple[int, int, int, int]:
        """(line, column, end line, end column) in the file as it is on disk: for a
        notebook, in the .ipynb's JSON where known, else the notebook-global ones."""
        if self.file_line is not None and self.file_column is not None:
            end_line = self.file_end_line if self.file_end_line is not None else self.file_line
            end_col = self.file_end_column if self.file_end_column is not None else self.file_column
            return self.file_line, self.file_column, end_line, end_col
        return self.line, self.column, self.end_line, self.end_column
