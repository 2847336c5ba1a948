"""Analyses over TTIR/TTGIR: axis info (contiguity, divisibility, constancy of values)."""

from .axis_info import AxisInfo, compute_axis_info

__all__ = ["AxisInfo", "compute_axis_info"]
