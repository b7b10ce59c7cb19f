"""What clgemm knows of a device, found or described by a file: its limits, family and hardware
figures. Finding devices is the backends' job; this layer stays below them."""
