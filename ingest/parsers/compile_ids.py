"""Compile ids as a TORCH_TRACE envelope writes them (`0/0`, `1/0_1`, `!0/7/0`, `!0/-/-`), and their parts."""

from __future__ import annotations

import re
from typing import overload

_ATTEMPT_SUFFIX = re.compile(r"_\d+$")


def compile_id_of(frame_id: object, frame_compile_id: object, attempt: object, ca_id: object) -> str | None:
    """The compile id as the trace writes it, without brackets: `0/0`, `1/0_1`, `!0/7/0`, `!0/-/-`."""
    if frame_id is None and frame_compile_id is None and ca_id is None:
        return None
    cid = f"{'-' if frame_id is None else frame_id}/{'-' if frame_compile_id is None else frame_compile_id}"
    if ca_id is not None:
        cid = f"!{ca_id}/{cid}"
    if attempt:
        cid = f"{cid}_{attempt}"
    return cid


def normalise_torch_compile_id(text: object) -> str | None:
    """Compile ids inside payloads use torch's str(CompileId): `!0` for a compiled-autograd graph
    without a frame, `None` for no context. Map them onto the envelope spelling."""
    if not isinstance(text, str) or not text or text == "None":
        return None
    if text[0] == "!" and "/" not in text:
        return f"{text}/-/-"
    return text


@overload
def without_attempt(compile_id: str) -> str: ...
@overload
def without_attempt(compile_id: None) -> None: ...
def without_attempt(compile_id: str | None) -> str | None:
    return None if compile_id is None else _ATTEMPT_SUFFIX.sub("", compile_id)


def frame_key(compile_id: str | None) -> str | None:
    """The frame part of a compile id (`6/1_2` -> `6`, `!0/7/0` -> `!0/7`): every compile of a frame
    compiles the same code object."""
    if compile_id is None:
        return None
    return without_attempt(compile_id).rpartition("/")[0] or compile_id
