"""The performance bound: what a rung's inner loop does and what the hardware allows."""
