"""Which `tl.inline_asm_elementwise` call an assembler rejected, and the error that names it.

An assembler reports the line of assembly it rejects with the operands already substituted: LLVM's x86
parser prints `error: <inline asm>:L:C: ...` and then that line; ptxas gives the PTX line number, and
NVPTX brackets the inline assembly there with `// begin inline asm` / `// end inline asm`. Each call's
template, its operand references made wildcards, is matched against those lines; the error points at the
calls that match, or at every inline assembly call of the kernel when none does (an error that names no
line, such as an operand a constraint cannot take).
"""

from __future__ import annotations

import linecache
import re
import warnings
from dataclasses import dataclass
from typing import Any

from ..diagnostics.perf_warnings import op_location
from .context import LoweringError

# a call of inline assembly (or module-level assembly) in printed LLVM IR; string constants print `"` as \22
_INLINE_ASM = re.compile(r'\basm (?:sideeffect |alignstack |inteldialect |unwind )*"')
# in a template: `$$` (a `$`); `$N`, `${N}`, `${N:modifier}`, `${:uid}`: text the printer substitutes;
# `$(`, `$|`, `$)`: dialect variants
_TEMPLATE_TOKEN = re.compile(r"\$(?:\$|\d+|\{[^}]*\}|[(|)])")
# how LLVM's default diagnostic handler prints a diagnostic (then, for an error, exits), and the line of
# inline assembly it quotes after `<inline asm>:L:C: ...`
_LLVM_DIAGNOSTIC = re.compile(r"^(?:\S+: )?(?:error|warning|note|remark): ", re.M)
_LLVM_QUOTED_LINE = re.compile(r"^(?:\S+: )?(?:error|warning): <inline asm>:\d+:\d+: .*\n(.*)$", re.M)
# LLVM's code generator on an operand: "invalid operand for inline asm constraint 'i'", "couldn't allocate
# output register for constraint 'x'"
_LLVM_CONSTRAINT_ERROR = re.compile(r"^(?:.*: )?error: .*constraint '([^']+)'", re.M)
# an error LLVM's handler printed before exiting, or a fatal error of LLVM's about inline assembly
_LLVM_PRINTED_ERROR = re.compile(r"^(?:(?:\S+: )?error: |LLVM ERROR: .*\basm\b)", re.M)
_PTXAS_ERROR_LINE = re.compile(r", line (\d+); error")
# PTX in a template: an instruction with type suffixes (`mov.u64`, after a `@%p` guard) or a special register
_PTX_LIKE = re.compile(r"(?:^|[;{])\s*(?:@!?%\w+\s+)?[a-z]\w*(?:\.\w+)+\s|%(?:tid|ntid|ctaid|nctaid|laneid|warpid|smid|"
                       r"globaltimer|clock)\b", re.M)


def has_inline_asm(llvm_ir: str) -> bool:
    """Whether LLVM will assemble inline assembly while emitting this module's machine code."""
    return " asm " in llvm_ir and _INLINE_ASM.search(llvm_ir) is not None  # the substring test is the fast one


def is_llvm_error(printed: str) -> bool:
    """Whether a process's error output is an error LLVM's diagnostic handler printed (then exiting), or a
    fatal error of LLVM's about inline assembly."""
    return _LLVM_PRINTED_ERROR.search(printed) is not None


@dataclass(frozen=True)
class AsmSite:
    """One `tl.inline_asm_elementwise` call of a kernel: its template and where the user wrote it."""

    template: str
    constraints: str
    filename: str | None
    lineno: int | None

    @property
    def where(self) -> str:
        return f"{self.filename}:{self.lineno}" if self.filename else "<unknown line>"

    def takes(self, code: str) -> bool:
        """Whether one of the call's constraints is `code` (`r` in `=&r`, `{eax}` in `={eax}`)."""
        return any(c.lstrip("=&*%~") == code for c in self.constraints.split(","))

    def printed(self, line: str) -> bool:
        """Whether `line` (as an assembler shows it, operands substituted) is one of this template's lines."""
        return any(_template_line_pattern(t).fullmatch(line.strip()) for t in self.template.splitlines())


def _template_line_pattern(line: str) -> re.Pattern:
    parts, at, line = [], 0, line.strip()
    for match in _TEMPLATE_TOKEN.finditer(line):
        token = match.group()
        parts += [_literal(line[at:match.start()]),
                  re.escape("$") if token == "$$" else ".*?" if token in ("$(", "$|", "$)") else ".+?"]
        at = match.end()
    parts.append(_literal(line[at:]))
    return re.compile("".join(parts))


def _literal(text: str) -> str:
    return "".join(r"\s+" if piece.isspace() else re.escape(piece) for piece in re.split(r"(\s+)", text) if piece)


def asm_sites(module: Any) -> list[AsmSite]:
    """The inline assembly calls of a TTGIR (or TTIR) module, in program order."""
    sites = []
    for op in module.walk():
        if op.name == "tt.elementwise_inline_asm":
            where = op_location(op)
            sites.append(AsmSite(op.asm_string.data, op.constraints.data, where[0] if where else None,
                                 where[1] if where else None))
    return sites


class InlineAsmError(LoweringError):
    """The target's assembler rejected a kernel's inline assembly. `sites`: the calls it may come from
    (one when the rejected line identifies it); `filename`/`lineno`: the first; `assembler_message`: what the
    assembler printed; `tool_error`: the assembler's own exception, if it raised one (PTXASError)."""

    def __init__(self, sites: list[AsmSite], assembler: str, assembler_message: str, hint: str = "",
                 tool_error: Exception | None = None):
        self.sites = sites
        self.tool_error = tool_error
        self.filename = sites[0].filename if sites else None
        self.lineno = sites[0].lineno if sites else None
        self.assembler_message = assembler_message
        super().__init__(_about(sites, f"{assembler} rejects") + f"\n{assembler_message.rstrip()}{hint}")


def _about(sites: list[AsmSite], verb: str) -> str:
    """`file:line: tl.inline_asm_elementwise: <verb> this call's inline assembly:` and the source line, or
    the list of calls when there are several."""
    at = f"{sites[0].where}: " if sites and sites[0].filename else ""
    if len(sites) == 1:
        source = linecache.getline(sites[0].filename or "", sites[0].lineno or 0).strip()
        what = f"{verb} this call's inline assembly" + (f":\n    {source}" if source else "")
    else:
        calls = ", ".join(dict.fromkeys(site.where for site in sites))
        what = f"{verb} the inline assembly of one of the kernel's calls ({calls})"
    return f"{at}tl.inline_asm_elementwise: {what}"


def _matching(sites: list[AsmSite], rejected_lines: list[str]) -> list[AsmSite]:
    return [site for site in sites if any(site.printed(line) for line in rejected_lines)]


def _blamed_by_llvm(sites: list[AsmSite], llvm_message: str) -> list[AsmSite]:
    """The calls whose lines LLVM quotes, or that have the constraint it names, else every call (on the CPU
    every inline assembly is the user's)."""
    codes = _LLVM_CONSTRAINT_ERROR.findall(llvm_message)
    return (_matching(sites, _LLVM_QUOTED_LINE.findall(llvm_message))
            or [site for site in sites if any(site.takes(code) for code in codes)] or sites)


def cpu_error(module: Any, llvm_message: str, triple: str) -> InlineAsmError:
    """The error for LLVM's diagnostics (`llvm_message`) on a CPU kernel's inline assembly."""
    blamed = _blamed_by_llvm(asm_sites(module), llvm_message)
    hint = ""
    if triple.startswith(("x86_64", "i686", "i386")) and any(_PTX_LIKE.search(s.template) for s in blamed):
        hint = "\n(the cpu target assembles x86 assembly in AT&T syntax; PTX assembles only for the cuda target)"
    return InlineAsmError(blamed, f"LLVM ({triple})", distinct_diagnostics(llvm_message), hint)


def warn_cpu(module: Any, llvm_message: str, triple: str) -> None:
    """A Python warning, at the user's call, for what LLVM printed and went on (warnings on the assembly)."""
    blamed = _blamed_by_llvm(asm_sites(module), llvm_message)
    text = _about(blamed, f"LLVM ({triple}) warns about") + f"\n{distinct_diagnostics(llvm_message)}"
    if blamed and blamed[0].filename:
        warnings.warn_explicit(text, UserWarning, blamed[0].filename, blamed[0].lineno or 0)
    else:
        warnings.warn(text, stacklevel=3)


def distinct_diagnostics(printed: str) -> str:
    """LLVM's diagnostics, each once: each execution of the assembly (a slot, or `pack` of them) is its own
    copy in the machine code, so LLVM prints the same message that many times."""
    starts = [match.start() for match in _LLVM_DIAGNOSTIC.finditer(printed)]
    if not starts:
        return printed.rstrip()
    counts: dict[str, int] = {}
    for begin, end in zip(starts, starts[1:] + [len(printed)]):
        block = printed[begin:end].rstrip()
        counts[block] = counts.get(block, 0) + 1
    blocks = [block + (f"\n(printed {n} times: once per execution of the assembly)" if n > 1 else "")
              for block, n in counts.items()]
    head = printed[:starts[0]].strip()
    return "\n".join(([head] if head else []) + blocks)


def ptxas_error(module: Any, ptx: str, error: Exception) -> InlineAsmError | None:
    """The error for ptxas's rejection (`error`, a PTXASError) of lines of the user's inline assembly; None
    when no user call prints the lines it rejected (the compiler's own PTX, its own inline assembly too)."""
    lines = ptx.splitlines()
    rejected = [lines[n - 1] for n in map(int, _PTXAS_ERROR_LINE.findall(error.stderr))
                if 0 < n <= len(lines) and _inside_inline_asm(lines, n - 1)]
    blamed = _matching(asm_sites(module), rejected)
    if not blamed:
        return None
    return InlineAsmError(blamed, f"ptxas ({error.arch})", str(error), tool_error=error)


def _inside_inline_asm(lines: list[str], index: int) -> bool:
    for line in reversed(lines[:index]):
        text = line.strip()
        if text == "// begin inline asm":
            return True
        if text == "// end inline asm":
            return False
    return False
