"""How replayed cases are grouped and named when a saved case leaves the kernel to gemm()."""

from __future__ import annotations

from clgemm.measure import verify


def test_buffers_case_without_a_rung_is_named_for_gemm(device):
    """A saved gemm_buffers case with no rung runs the kernel gemm_buffers chooses, and its row
    says so instead of naming a rung that does not exist."""
    cases = [verify.Case("buffers", 16, 8, 4, seed=3), verify.Case("buffers", 8, 8, 8, seed=4)]
    report = verify.replay(device, cases)
    (group,) = report.groups
    assert group.name == "gemm() buffers" and group.kernel == "chosen by gemm()"
    assert "None" not in verify.summary_table(report)
    assert [r.ok for r in group.results] == [True, True]
