"""A device described by a file instead of found on this machine: the "device" record a ladder
or bench JSON file holds, so the model can reason about a device that is elsewhere.

The record is checked field by field before a `DeviceInfo` is made from it: a hand-edited record
is refused by field name, before the model divides by or iterates over a wrong value.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from clgemm.core.errors import UsageError
from clgemm.core.files import read_json
from clgemm.devices.info import DeviceInfo


def _count(least: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= least


def _counts(v: Any) -> bool:
    return isinstance(v, list) and all(_count(1)(x) for x in v)


_TEXT = (lambda v: isinstance(v, str), "a string")
_NATURAL = (_count(0), "a non-negative integer")
_POSITIVE = (_count(1), "a positive integer")

#: the fields a device record needs, with what each must be
RECORD_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "index": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    **{name: _TEXT for name in ("backend", "platform", "name", "type", "vendor",
                                "driver_version", "version")},
    **{name: _POSITIVE for name in ("compute_units", "max_work_group_size", "global_mem_bytes",
                                    "local_mem_bytes", "max_alloc_bytes")},
    # some drivers report no clock; the bound then takes the table's
    "clock_mhz": _NATURAL,
    "max_work_item_sizes": (_counts, "a list of positive integers"),
}
OPTIONAL_RECORD_FIELDS = {
    "sub_group_sizes": (lambda v: v is None or _counts(v), "a list of positive integers"),
    # NVIDIA's "major.minor"; what the cp.async pipelines need
    "compute_capability": (lambda v: isinstance(v, str) and (
        v == "" or all(part.isdigit() for part in v.split("."))), "\"major.minor\" or \"\""),
}


def device_from_record(path: str) -> DeviceInfo:
    """A DeviceInfo from a ladder or bench JSON file (its "device"), or a file holding just
    that record. Messages name the file as `--device-record`, the option that reads it."""
    data = read_json(path, "--device-record")
    record = data.get("device", data) if isinstance(data, dict) else None
    if not isinstance(record, dict):
        raise UsageError(f"--device-record {path}: no device record in it")
    missing = sorted(set(RECORD_FIELDS) - set(record))
    if missing:
        raise UsageError(f"--device-record {path}: the device record lacks "
                         f"{', '.join(missing)}")
    for name, (ok, wanted) in {**RECORD_FIELDS, **OPTIONAL_RECORD_FIELDS}.items():
        if name in record and not ok(record[name]):
            raise UsageError(f"--device-record {path}: {name} must be {wanted}, not "
                             f"{json.dumps(record[name])}")
    fields = {k: record[k] for k in RECORD_FIELDS}
    fields["max_work_item_sizes"] = tuple(fields["max_work_item_sizes"])
    fields["sub_group_sizes"] = tuple(record.get("sub_group_sizes") or ())
    fields["compute_capability"] = record.get("compute_capability") or ""
    return DeviceInfo(**fields)
