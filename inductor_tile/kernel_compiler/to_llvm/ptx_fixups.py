"""Textual rewrites of LLVM's PTX that work around ptxas miscompilations.

`split_packed_int16`: on sm_90 LLVM legalizes `<N x i16>` arithmetic into packed
`add/sub/min/max.{s,u}16x2` instructions. ptxas from CUDA 13.0 at its default -O3 compiled
`add.s16x2 %r, %a, %c` with `%c` a `mov.b32` constant into `VIADD.16x2 R, R, 0x0` (the
constant lost), so a generated Longformer kernel computed its load addresses wrong and faulted
(-O0/-O1 were right). Each packed instruction becomes two 16-bit instructions on the halves,
in a scoped block with its own registers; the cost is a few moves in index arithmetic.
"""

from __future__ import annotations

import re

_PACKED_INT16 = re.compile(
    r"^(?P<indent>\s*)(?P<guard>@!?%\w+\s+)?(?P<op>add|sub|min|max)\.(?P<sign>[su])16x2\s+"
    r"(?P<d>%\w+),\s*(?P<a>[^,;\s]+),\s*(?P<b>[^,;\s]+);(?P<rest>.*)$")


def split_packed_int16(ptx: str) -> str:
    """Replace every `add/sub/min/max.{s,u}16x2 d, a, b;` by the same operation on each half."""
    lines = ptx.splitlines(keepends=True)
    out = []
    count = 0
    for line in lines:
        m = _PACKED_INT16.match(line.rstrip("\n"))
        if m is None:
            out.append(line)
            continue
        r = f"%tile_i16x2_{count}_"
        count += 1
        indent, guard = m["indent"], m["guard"] or ""
        op = f"{m['op']}.{m['sign']}16"
        body = [
            "{",
            f".reg .b32 {r}a, {r}b;",
            f".reg .b16 {r}a0, {r}a1, {r}b0, {r}b1, {r}d0, {r}d1;",
            f"mov.b32 {r}a, {m['a']};",
            f"mov.b32 {r}b, {m['b']};",
            f"mov.b32 {{{r}a0, {r}a1}}, {r}a;",
            f"mov.b32 {{{r}b0, {r}b1}}, {r}b;",
            f"{op} {r}d0, {r}a0, {r}b0;",
            f"{op} {r}d1, {r}a1, {r}b1;",
            f"{guard}mov.b32 {m['d']}, {{{r}d0, {r}d1}};{m['rest']}",
            "}",
        ]
        out.extend(f"{indent}{text}\n" for text in body)
    return "".join(out)
