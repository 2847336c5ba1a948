"""Floor-rounding index arithmetic (negative dividends) on the NVIDIA target."""

import pytest

from test_index_source import CASES, check_index_case

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("case", sorted(CASES))
def test_index_source_rounds_like_sympy_on_the_gpu(case):
    check_index_case(case, "cuda")
