"""A device's family: what it shares with other devices for which a configuration may carry over.

Tuned parameters depend on the architecture far more than on the exact product or driver: an
H100 and an H200 are the same GH100 chip, and two CPUs that PoCL compiles for the same LLVM target
run the same vector code. So a family is named from what the device reports: for NVIDIA its
compute capability, for PoCL's CPU device the CPU target in its name (`skylake-avx512`), for
anything else vendor and device type. Databases written before the family was recorded have it
inferred from their device name by the same rules (`family_of`).
"""

from __future__ import annotations

import re

#: compute capability of NVIDIA products by name part, for devices (and stored databases) whose
#: driver does not report it; the longest matching part wins
NVIDIA_COMPUTE_CAPABILITY = {
    "GH200": "9.0", "H200": "9.0", "H100": "9.0", "H800": "9.0", "H20": "9.0",
    "A100": "8.0", "A800": "8.0", "A30": "8.0", "A10": "8.6", "A40": "8.6", "RTX 30": "8.6",
    "L40": "8.9", "L4": "8.9", "RTX 40": "8.9", "V100": "7.0", "T4": "7.5", "B200": "10.0",
}

_POCL_PREFIX = re.compile(r"^(?:pthread|cpu|basic|cpu-minimal|cpu-tbb)-(.+)$")
_TARGET_WORD = re.compile(r"[a-z0-9_.]+")


def pocl_cpu_target(name: str) -> str | None:
    """The LLVM CPU target in a PoCL CPU device's name ('pthread-skylake-avx512-AMD EPYC' ->
    'skylake-avx512'): the lower-case words after the driver's prefix, before the model name."""
    match = _POCL_PREFIX.match(name.strip())
    if not match:
        return None
    words = []
    for word in match.group(1).split("-"):
        if not _TARGET_WORD.fullmatch(word):
            break
        words.append(word)
    return "-".join(words) or None


def nvidia_compute_capability(name: str) -> str | None:
    """From the product name, where the driver does not say."""
    upper = name.upper()
    hits = [part for part in NVIDIA_COMPUTE_CAPABILITY if part in upper]
    return NVIDIA_COMPUTE_CAPABILITY[max(hits, key=len)] if hits else None


def family_of(backend: str, vendor: str, name: str, device_type: str,
              compute_capability: str | None = None) -> str:
    """The family key: backend, then the architecture, else vendor and device type."""
    is_nvidia = "nvidia" in f"{vendor} {name}".lower()
    if is_nvidia:
        cc = compute_capability or nvidia_compute_capability(name)
        if cc:
            return f"{backend}-nvidia-sm{cc.replace('.', '')}"
    target = pocl_cpu_target(name)
    if target:
        return f"{backend}-cpu-{target}"
    slug = re.sub(r"[^a-z0-9]+", "-", vendor.lower()).strip("-") or "unknown"
    return f"{backend}-{slug}-{device_type.lower()}"


def type_of_name(name: str, vendor: str = "") -> str:
    """A stored device's type where the database does not record it: PoCL CPU names and NVIDIA
    products are recognised, anything else is 'OTHER'."""
    if pocl_cpu_target(name):
        return "CPU"
    if "nvidia" in f"{vendor} {name}".lower() or nvidia_compute_capability(name):
        return "GPU"
    return "OTHER"
