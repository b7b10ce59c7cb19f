"""A made-up GPU for the unit tier: an H100's 132 compute units under a name no database holds,
so that what the lookup answers for it is what each test stores."""

from __future__ import annotations

from clgemm.devices.info import DeviceInfo

GPU = DeviceInfo(index=0, backend="opencl", platform="test", name="Made-up GPU", type="GPU",
                 vendor="test", compute_units=132, clock_mhz=1000, global_mem_bytes=2**34,
                 local_mem_bytes=2**16, max_work_group_size=1024,
                 max_work_item_sizes=(1024, 1024, 64), max_alloc_bytes=2**32,
                 driver_version="1", version="OpenCL 3.0")
