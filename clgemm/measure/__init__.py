"""Measuring: one rung run and checked, the vendor references, the ladder, the bench, the call
bench, verify, and the committed measurements."""
