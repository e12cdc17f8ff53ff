"""What exact mode may say of a compiler's output: never free text.

nvcc's and ptxas's messages quote identifiers, file names and the text of ``#error``
lines; whatever made it into a compile (a header the confinement missed) could come
back through them into text output, ``::notice``, SARIF and the cache. So a message
is reported only when it has one of the forms below, and each name in it is made of
words that are the unit's own (the sealed source, all of it from the linted tree) or
PTX's and ptxas's vocabulary (version_matrix/ptx_instructions.toml: the messages
ptxas gave for every verified form); anything else is reported as a fixed phrase.
"""

from __future__ import annotations

import re

_T = r"(?:sm|compute)_\d+[af]?"
_N = r"[A-Za-z0-9_.:{}/ ,+<>*&-]{1,160}"

# The forms of ptxas's errors (its text after "error   : "), as ptxas 13.0 prints them
# (shared/leads/cuda_arch_features.md section 4; version_matrix/ptx_instructions.toml).
PTXAS_FORMS = [re.compile(p) for p in (
    rf"(?:Instruction|Feature|Modifier) '(?P<n>{_N})' not supported on \.target '{_T}'",
    rf"(?:Instruction|Feature|Modifier) '(?P<n>{_N})' requires \.target {_T} or higher",
    rf"(?:Instruction|Feature|Modifier) '(?P<n>{_N})' cannot be compiled for architecture '{_T}'",
    rf"(?:Instruction|Feature|Modifier) '(?P<n>{_N})' requires PTX ISA \.version \d+\.\d+ or later",
    rf"(?P<n>{_N}) modifier required for instruction '(?P<m>{_N})'",
    rf"Not a name of any known instruction: '(?P<n>{_N})'",
    rf"Unknown modifier '(?P<n>{_N})'",
    rf"Illegal modifier '(?P<n>{_N})' for instruction '(?P<m>{_N})'",
    rf"Arguments mismatch for instruction '(?P<n>{_N})'",
    rf"Unexpected instruction types specified for '(?P<n>{_N})'",
)]
PTXAS_FATAL_FORMS = [re.compile(p) for p in (
    r"Unresolved extern function '(?P<n>[A-Za-z_]\w{0,200})'",
    rf"Program with \.target '{_T}' cannot be compiled to future architecture",
)]
# The front end's (cicc, EDG) and the host preprocessor's errors.
FRONT_FORMS = [re.compile(p) for p in (
    r'identifier "(?P<n>[A-Za-z_]\w{0,200})" is undefined',
    r'namespace "(?P<n>[\w:]{1,200})" has no member "(?P<m>\w{1,200})"',
    r'class "(?P<n>[^"\n]{1,300})" has no member "(?P<m>\w{1,200})"',
    r'(?P<n>__\w{1,60}__) is not supported for this GPU architecture',
    r'incomplete type "(?P<n>[^"\n]{1,300})" is not allowed',
    r'no instance of (?:overloaded function|function template|constructor) "(?P<n>[^"\n]{1,300})" matches the '
    r'argument list',
    r'(?P<n>[\w./+-]{1,200}): No such file or directory',
    r'cannot open source file "(?P<n>[\w./+-]{1,200})"',
    r'#error directive: (?P<n>[^\n]{0,300})',
    r'#error (?P<n>[^\n]{0,300})',
    r"asm operand type size\(\d+\) does not match type/size implied by constraint '\w'",
    r'an asm operand must have scalar type',
    r'expected an? (?P<n>[\w ]{1,40})',
)]
# Words of ptxas's own descriptions of features ("mma with FP8 floating point type").
_PTXAS_WORDS = {"with", "without", "floating", "point", "type", "types", "bit", "wide", "load", "store", "block",
                "scale", "destination", "state", "space", "as", "and", "or", "for", "on", "of", "the", "size",
                "operand", "operands", "vector", "integer", "sparse", "dense", "mode", "modifier", "FP8", "FP6",
                "FP4", "FP16", "BF16", "TF32", "INT8", "INT4"}
_WORD = re.compile(r"[A-Za-z0-9_]+")

PTXAS_REJECTED = "ptxas error: the PTX is rejected (a message of a form aicompat does not quote)"
PTXAS_FATAL = "ptxas fatal: the PTX is rejected (a message of a form aicompat does not quote)"
FRONT_REJECTED = "error: the source is rejected (a message of a form aicompat does not quote)"


def unit_words(text: str) -> frozenset[str]:
    """The words a message may repeat: those of the unit itself."""
    return frozenset(_WORD.findall(text))


def ptx_vocabulary(matrix) -> frozenset[str]:
    """ptxas's words: every word of the table's opcodes and recorded messages."""
    table = matrix.files.get("ptx_instructions.toml", {}) if matrix is not None else {}
    words = set(_PTXAS_WORDS)
    for key, entry in table.get("pattern", {}).items():
        words.update(_WORD.findall(key))
        for text in [entry.get("error", ""), *dict(entry.get("errors", {})).values()]:
            if isinstance(text, str):
                words.update(_WORD.findall(text))
    return frozenset(words)


# cuda::ptx wrappers on a target below their PTX: the toolkit's own marker of a function never defined.
_CUDA_PTX_MARKER = re.compile(r"__cuda_ptx_\w+_is_not_supported_before_SM_\w+__")


def _names_ok(m: re.Match, allowed) -> bool:
    names = [n for n in m.groupdict().values() if n is not None]
    return all(w in allowed for n in names for w in _WORD.findall(n)) or \
        (len(names) == 1 and _CUDA_PTX_MARKER.fullmatch(names[0]) is not None)


def _reported(msg: str, forms, allowed, prefix: str, fallback: str) -> str:
    """``prefix: msg`` when ``msg`` has one of ``forms`` and its names are ``allowed`` words, else ``fallback``."""
    msg = " ".join(msg.split())
    for form in forms:
        m = form.fullmatch(msg)
        if m and _names_ok(m, allowed):
            return f"{prefix}: {msg}"
    return fallback


def ptxas_error(msg: str, allowed) -> str:
    return _reported(msg, PTXAS_FORMS, allowed, "ptxas error", PTXAS_REJECTED)


def ptxas_fatal(msg: str, allowed) -> str:
    return _reported(msg, PTXAS_FATAL_FORMS, allowed, "ptxas fatal", PTXAS_FATAL)


def front_error(msg: str, allowed) -> str:
    """A front-end or host-preprocessor message."""
    return _reported(msg, FRONT_FORMS, allowed, "error", FRONT_REJECTED)
