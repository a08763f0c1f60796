"""A GPU test that fails, for tests/test_gpu_check.py: bench/gpu_check.sh run on it must fail. Its
name does not start with ``test_``: the suite never collects it on its own."""

import pytest

pytestmark = pytest.mark.gpu


def test_a_gpu_test_that_fails():
    assert 1 + 1 == 3, "planted: the check's verdict must say FAIL"
