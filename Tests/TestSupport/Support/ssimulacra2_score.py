"""Prints the SSIMULACRA2 score of each DISTORTED file against REFERENCE, one per line, with the `ssimulacra2` package
from PyPI (an independent, pure NumPy implementation): what MetricTests compares photoprep's own metric with.

    python3 ssimulacra2_score.py REFERENCE DISTORTED...
"""
import sys

from ssimulacra2 import compute_ssimulacra2

for distorted in sys.argv[2:]:
    print(f"{compute_ssimulacra2(sys.argv[1], distorted):.6f}")
