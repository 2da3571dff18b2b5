"""Two sets of benchmark-harness results as a CI job uploads them, made from the harness captures the
tests keep: demo/harness-ci-timm-cpu.tar.xz.

    python -m demo.harness_sets [--out demo/harness-ci-timm-cpu.tar.xz]

tests/fixtures/captures/harness-timm.tar.xz holds PyTorch's benchmark harness run under `iwh capture`
on the CPU with torch 2.13.0 and 2.14.1 (three timm models, performance and accuracy). A CI job
uploads the harness's CSVs and the JSON records beside them, not the compile artifacts: each release's
CSVs and JSONs are copied unchanged into a set of their own, `<set>/{performance,accuracy}/<model>/`
(2.14.1's accuracy ran as one job: `accuracy-job/`), with a `manifest.json` naming the set (`ci`). The
capture's manifests, logs, traces and debug trees stay out. The archive is the same bytes every time
(members sorted, owner, group and times fixed), so a rebuild shows no change unless the capture did.
"""

from __future__ import annotations

import argparse
import io
import json
import lzma
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).parent
CAPTURE = HERE.parent / "tests" / "fixtures" / "captures" / "harness-timm.tar.xz"
OUT = HERE / "harness-ci-timm-cpu.tar.xz"
# release folder in the capture -> the set's name (its `ci` label)
SETS = {"cpu-torch2.13": "timm-cpu-2.13", "cpu-torch2.14.1": "timm-cpu-2.14.1"}
MTIME = 1764028800  # 2025-11-25, the day the captures ran: fixed so that the bytes are


def _uploaded(name: str) -> bool:
    """What CI's job uploads of a capture: the harness's CSVs and its JSON records, not the manifest
    `iwh capture` wrote, nor anything below a run's trace or debug tree."""
    parts = name.split("/")
    return (parts[-1].endswith((".csv", ".json")) and parts[-1] != "manifest.json"
            and not {"trace", "torch_compile_debug"} & set(parts))


def members(capture: Path = CAPTURE) -> dict[str, bytes]:
    """{path in the archive: bytes} of the two sets, read from the capture archive."""
    out: dict[str, bytes] = {}
    with tarfile.open(capture) as tf:
        for info in tf.getmembers():
            release, _, rest = info.name.partition("/")
            if info.isfile() and release in SETS and _uploaded(info.name):
                out[f"{SETS[release]}/{rest}"] = tf.extractfile(info).read()
    for name in SETS.values():
        out[f"{name}/manifest.json"] = (json.dumps({"ci": name}, indent=1) + "\n").encode()
    return out


def _info(name: str, size: int | None) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mtime, info.uid, info.gid, info.uname, info.gname = MTIME, 0, 0, "", ""
    if size is None:
        info.type, info.mode = tarfile.DIRTYPE, 0o755
    else:
        info.size, info.mode = size, 0o644
    return info


def build(out: Path = OUT, capture: Path = CAPTURE) -> Path:
    files = members(capture)
    folders = sorted({"/".join(name.split("/")[:i]) for name in files for i in range(1, name.count("/") + 1)})
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name in sorted([*folders, *files]):
            data = files.get(name)
            tf.addfile(_info(name, None if data is None else len(data)), None if data is None else io.BytesIO(data))
    out.write_bytes(lzma.compress(buffer.getvalue(), preset=9 | lzma.PRESET_EXTREME))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    path = build(args.out)
    print(f"wrote {path} ({path.stat().st_size:,} bytes, {len(members())} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
