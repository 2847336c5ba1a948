"""The kernel suite under the interpreter (TILE_INTERPRET=1), against torch."""

import pytest

from suite import CASES, assert_checks


@pytest.mark.parametrize("name", sorted(CASES))
def test_suite_case_interpreted(name, interpret, gen):
    assert_checks(CASES[name](gen))
