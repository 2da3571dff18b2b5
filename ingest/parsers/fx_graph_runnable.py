"""fx_graph_runnable.py: a repro script, read only for its build and config metadata.

facts (each only when present):
* compiler_version (`# torch version: 2.14.1+cu130`), compiler_commit (`# torch git version:`),
  cuda_version (`# torch cuda version: 13.0`; `None` on CPU-only wheels is kept out);
* device_name and device_count from `# GPU Hardware Info:` (`# NVIDIA H200 : 1`);
* inductor_config: {option: value text} of the `torch._inductor.config.<option> = <value>` lines
  (the non-default options the repro sets);
* env: {name: value} of the `os.environ['NAME'] = 'value'` lines (2.7+);
* caches_said: what those two say of Inductor's caches (ingest/parsers/cache_settings.py).
"""

from __future__ import annotations

import re

from inductor_warehouse.ingest.parsers.cache_settings import CacheSaid, from_config, from_env, settle
from inductor_warehouse.ingest.rows import Parsed

_HEADER_FACTS = {
    "# torch version: ": "compiler_version",
    "# torch git version: ": "compiler_commit",
    "# torch cuda version: ": "cuda_version",
}
_INDUCTOR_CONFIG = "torch._inductor.config."
_CONFIG_LINE = re.compile(r"^torch\._inductor\.config\.(?P<option>[\w.]+) = (?P<value>.*)$")
_ENV_LINE = re.compile(r"""^os\.environ\[(?P<q>['"])(?P<name>[^'"]+)(?P=q)\] = (?P<value>.*)$""")
_GPU_INFO = "# GPU Hardware Info:"
_GPU_LINE = re.compile(r"^# (?P<name>.+?) : (?P<count>\d+)\s*$")


def parse_fx_graph_runnable(text: str) -> Parsed:  # noqa: C901 - one loop over its sections
    parsed = Parsed()
    facts = parsed.facts
    config: dict[str, str] = {}
    env: dict[str, str] = {}
    in_gpu_info = False
    for line in text.splitlines():
        if line.startswith("#"):
            if in_gpu_info:
                m = _GPU_LINE.match(line)
                if m and "device_name" not in facts:
                    facts["device_name"] = m["name"]
                    facts["device_count"] = int(m["count"])
                in_gpu_info = False
                continue
            if line.startswith(_GPU_INFO):
                in_gpu_info = True
                continue
            for prefix, key in _HEADER_FACTS.items():
                if line.startswith(prefix):
                    value = line[len(prefix) :].strip()
                    if value and value != "None":
                        facts.setdefault(key, value)
                    break
            continue
        in_gpu_info = False
        _setting(line, env, config)
    if config:
        facts["inductor_config"] = config
    if env:
        facts["env"] = env
    if said := _said(env, config, "fx_graph_runnable.py"):
        facts["caches_said"] = said
    if "compiler_version" not in facts:
        parsed.problem("no `# torch version:` line (cut short, or not an fx_graph_runnable.py)", None, "warning")
    return parsed


def caches_said(text: str, where: str) -> CacheSaid | None:
    """What a repro script's env and config lines say of the caches, its other lines unread."""
    env: dict[str, str] = {}
    config: dict[str, str] = {}
    for line in text.splitlines():
        _setting(line, env, config)
    return _said(env, config, where)


def _said(env: dict[str, str], config: dict[str, str], where: str) -> CacheSaid | None:
    return settle(from_env(env, f"{where} env"), from_config(config, f"{where} config"))


def _setting(line: str, env: dict[str, str], config: dict[str, str]) -> None:
    """A `torch._inductor.config.<option> = <value>` or `os.environ[...] = ...` line into its dict."""
    if line.startswith(_INDUCTOR_CONFIG):
        m = _CONFIG_LINE.match(line)
        if m:
            config[m["option"]] = m["value"]
    elif line.startswith("os.environ["):
        m = _ENV_LINE.match(line)
        if m:
            env[m["name"]] = _unquote(m["value"])


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
