"""ir_pre_fusion.txt / ir_post_fusion.txt: the scheduler's nodes before and after fusion.

Grammar (research note 2.2). A record opens with an unindented header
`<name>: <NodeClass>(<inner classes>)` and continues with `<name>.<attr> = <value>` lines;
indented lines are pformat continuations, `.outputs = [` buffer blocks (closed by a lone `]`),
`class opN_loop_body:` bodies, or on GPU `opN Triton code:` listings. A fused node is followed by
`<fused>.snodes[i] =` and a full sub-record of each member: members are not top-level nodes. From
2.5 the members are unindented (scheduler.py splices them into an IndentedBuffer, which dedents).
Before 2.5 (as real 2.3.1 and 2.4.1 files show) records are keyed by buffer (`buf0: SchedulerNode(...)`,
no `.outputs` block: a node's buffers are its own and its members' `buf<N>` names), and a fused
node's `snodes[i] =` lines and member records are indented 4 spaces a level of nesting
(textwrap.indent), their pformat continuations and loop bodies deeper still. Layouts come from the
`<buf>_layout = ...` lines (2.4 on; 2.3 writes none), which a member's record holds at its own
indentation.

rows['fusions']: one per top-level node: group_name, node_class, member_count, members (direct
sub-record names; [name] when not fused), kernel_name (`.node.kernel` of extern nodes, else NULL),
inner_classes, buffers (written buffers, from the record's `.outputs`; before 2.5 its records' names).
rows['layouts']: one per distinct buffer name: layouts from `.outputs` blocks (`bufN.layout`,
ir_class from `bufN: <IRClass>`) and the `<name>_layout = ...` lines loop bodies add for every
buffer they touch, graph inputs (`primals_1_layout`) included (ir_class NULL).
facts['top_level_nodes'] = len(fusions).
"""

from __future__ import annotations

import functools
import re

from inductor_warehouse.ingest.rows import Parsed, Row

_HEADER = re.compile(r"^(?P<name>\w+): (?P<cls>\w+)\((?P<inner>[\w,]*)\)$")
_ATTR = re.compile(r"^(?P<name>\w+)\.(?P<attr>[\w.]+(?:\[\d+\])?) =(?: (?P<value>.*))?$")
_SNODE = re.compile(r"^(?P<owner>\w+)\.snodes\[\d+\] =")
_INPUT_LAYOUT = re.compile(r"^(?P<buffer>\w+)_layout = (?P<layout>.+)$")
_BUFFER_HEADER = re.compile(r"^ {4}(?P<buffer>\w+): (?P<cls>\w+)$")
_BUFFER_LAYOUT = re.compile(r"^ {4}(?P<buffer>\w+)\.layout = (?P<layout>.+)$")
_LAYOUT = re.compile(r"^(?P<kind>\w+)\((?P<args>.*)\)$")
_DEVICE_POS = re.compile(r"^'(?P<device>[^']*)'")
_DEVICE_KW = re.compile(r"device=device\(type='(?P<type>[^']*)'(?:, index=(?P<index>\d+))?\)")
_DTYPE = re.compile(r"torch\.(?P<dtype>\w+)")
_OFFSET = re.compile(r"offset=(?P<offset>[^,)]+)")
# a buffer's name (graph.py register_buffer): before 2.5 a scheduler node was named after its buffer
_BUFFER_NAME = re.compile(r"^buf\d+$")
_TRITON_CODE = re.compile(r"^\w+ Triton code:")
_NESTING = re.compile(r"[(\[{)}]")
_NO_KERNEL = "None"
_NOT_A_NAME = frozenset(("", " ", "]", "\t"))


def parse_fusion_ir(text: str) -> Parsed:  # noqa: C901 - one loop over the IR's line kinds
    parsed = Parsed()
    fusions = parsed.rows["fusions"]
    # rows being built (a fusion's members and buffers grow as the IR is read): FusionRow and LayoutRow
    layouts: dict[str, Row] = {}
    top: Row | None = None  # the top-level record being read
    current: str | None = None  # name of the record (top-level or member) being read
    member_of: str | None = None  # set by `<fused>.snodes[i] =`: the next header is its member
    indent = 0  # of the record being read: a pre-2.5 member's is 4 spaces a level of nesting
    in_outputs = False
    saw_outputs = False  # no `.outputs` block in the whole file: the pre-2.5 form
    records: list[list[str]] = []  # the names of each top-level node's records, members at any depth

    # each regex is tried only on lines that can match it (a header ends with ")", a member link
    # holds ".snodes[", an attribute "." before its " ="): a file is mostly attributes and indented
    # bodies, and regexes that fail cost as much as those that match
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        if line[0] == " ":
            if in_outputs:
                _output_line(line, current, top, layouts)
                continue
            # a pre-2.5 member record's own lines (the header after `snodes[i] =`, member links,
            # layouts); anything else indented continues a value or is a loop body
            if member_of is None and ".snodes[" not in line and "_layout = " not in line:
                continue
            stripped = line.lstrip(" ")
            depth = len(line) - len(stripped)
            if member_of is None and ".snodes[" not in stripped and depth != indent:
                continue
            line, indent = stripped, depth
        elif member_of is None:
            indent = 0
        if in_outputs:
            if line == "]":
                in_outputs = False
                continue
            parsed.problem(f"`{current}.outputs` block not closed before: {line[:80]}", lineno)
            in_outputs = False

        m = _HEADER.match(line) if line[-1] == ")" else None
        if m:
            name = m["name"]
            if member_of is not None:
                # members of a nested fused member are not members of the top-level node
                if top is not None and member_of == top["group_name"]:
                    top["members"].append(name)
                if records:
                    records[-1].append(name)
                member_of = None
            else:
                top = _fusion(m)
                fusions.append(top)
                records.append([name])
            current = name
            continue
        if member_of is not None:
            parsed.problem(f"`snodes[i] =` not followed by a node header: {line[:80]}", lineno)
            member_of = None

        eq = line.find(" =")
        dotted = eq != -1 and line.find(".", 0, eq) != -1  # `name.attr =`: an attribute or a member link
        m = _SNODE.match(line) if dotted and ".snodes[" in line else None
        if m:
            member_of = m["owner"]
            continue
        m = _ATTR.match(line) if dotted else None
        if m:
            if m["name"] != current:
                parsed.counters["fusion_ir: attribute of another record"] += 1
                continue
            attr, value = m["attr"], m["value"]
            if attr == "outputs" and value == "[":
                in_outputs = saw_outputs = True
            elif attr == "node.kernel" and top is not None and current == top["group_name"]:
                top["kernel_name"] = None if value == _NO_KERNEL else value
            continue
        m = _INPUT_LAYOUT.match(line) if eq != -1 else None
        if m:
            _add_layout(layouts, m["buffer"], m["layout"], None)
            continue
        if not (line.startswith("class ") or _TRITON_CODE.match(line)):
            parsed.problem(f"unrecognised IR line: {line[:120]}", lineno, "warning")

    if in_outputs:
        parsed.problem(f"file ends inside the `{current}.outputs` block (cut short?)")
    if member_of is not None:
        parsed.problem("file ends after `snodes[i] =` (cut short?)")
    for row, names in zip(fusions, records, strict=True):
        if not saw_outputs:
            row["buffers"] = [n for n in names if _BUFFER_NAME.match(n)]
        if not row["members"]:
            row["members"] = [row["group_name"]]
        row["member_count"] = len(row["members"])
    parsed.rows["layouts"] = list(layouts.values())
    parsed.facts["top_level_nodes"] = len(fusions)
    return parsed


def _fusion(m: re.Match[str]) -> Row:
    return {
        "group_name": m["name"],
        "node_class": m["cls"],
        "member_count": 0,
        "members": [],
        "kernel_name": None,
        "inner_classes": [c for c in m["inner"].split(",") if c],
        "buffers": [],
    }


def _output_line(line: str, current: str | None, top: Row | None, layouts: dict[str, Row]) -> None:
    # only lines indented by exactly four spaces name a buffer or its layout (deeper ones are its users)
    if line[4:5] in _NOT_A_NAME:
        return
    m = _BUFFER_HEADER.match(line) if line[-1] != ")" else None
    if m:
        buffer = m["buffer"]
        row = layouts.get(buffer)
        if row is not None:
            row["ir_class"] = row["ir_class"] or m["cls"]
        else:
            layouts[buffer] = _layout_row(buffer, m["cls"])
        if top is not None and current == top["group_name"]:
            top["buffers"].append(buffer)
        return
    m = _BUFFER_LAYOUT.match(line)
    if m:
        row = layouts.get(m["buffer"])
        _add_layout(layouts, m["buffer"], m["layout"], row["ir_class"] if row else None)


def _add_layout(layouts: dict[str, Row], buffer: str, text: str, ir_class: str | None) -> None:
    row = layouts.get(buffer)
    if row is None:
        layouts[buffer] = row = _layout_row(buffer, ir_class)
    elif ir_class and not row["ir_class"]:
        row["ir_class"] = ir_class
    if row["layout_kind"] is None:
        row.update(_parse_layout(text))


def _layout_row(buffer: str, ir_class: str | None) -> Row:
    return {"buffer": buffer, "layout_kind": None, "device": None, "dtype": None, "size": None,
            "stride": None, "offset": None, "ir_class": ir_class}


def _parse_layout(text: str) -> Row:
    """`FixedLayout('cpu', torch.float32, size=[4, s77], stride=[s77, 1])` and its siblings."""
    kind, device, dtype, size, stride, offset = _layout_parts(text)
    if device is _UNPARSED:
        return {"layout_kind": kind}
    return {"layout_kind": kind, "device": device, "dtype": dtype, "size": None if size is None else list(size),
            "stride": None if stride is None else list(stride), "offset": offset}


_UNPARSED = object()


@functools.lru_cache(maxsize=8192)
def _layout_parts(text: str) -> tuple[str, object, str | None, tuple[str, ...] | None, tuple[str, ...] | None, str | None]:
    """A layout's parts, kept for the texts seen last: most buffers share their layout's text
    with others of their graph and of the process's other graphs."""
    m = _LAYOUT.match(text)
    if m is None:
        return text, _UNPARSED, None, None, None, None
    args = m["args"]
    device = None
    d = _DEVICE_POS.match(args)
    if d:
        device = d["device"]
    else:
        d = _DEVICE_KW.search(args)
        if d:
            device = d["type"] if d["index"] is None else f"{d['type']}:{d['index']}"
    dtype = _DTYPE.search(args)
    offset = _OFFSET.search(args)
    size, stride = _bracket_list(args, "size=["), _bracket_list(args, "stride=[")
    return (m["kind"], device, dtype["dtype"] if dtype else None, None if size is None else tuple(size),
            None if stride is None else tuple(stride), offset["offset"].strip() if offset else None)


def _bracket_list(args: str, key: str) -> list[str] | None:
    """Items of `key[...]`, split on top-level commas only: sizes can be `Max(1, s0)`."""
    start = args.find(key)
    if start == -1:
        return None
    start += len(key)
    end = args.find("]", start)
    if end != -1:
        flat = args[start:end]
        # the common case, plain symbols and numbers, needs no bracket counting
        if _NESTING.search(flat) is None:
            items = [x.strip() for x in flat.split(",")]
            if not items[-1]:
                items.pop()
            return items
    items, depth = [], 0
    item: list[str] = []
    for ch in args[start:]:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            items.append("".join(item).strip())
            item = []
            continue
        item.append(ch)
    last = "".join(item).strip()
    if last:
        items.append(last)
    return items
