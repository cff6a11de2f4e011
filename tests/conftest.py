"""Suite-wide settings: every figure saved while the tests run (also in the notebook kernels they start, which
inherit the environment) is checked strictly, so a layout problem fails the test that drew it."""

import os

from sparqlab.plots.check import CHECK_ENV

os.environ[CHECK_ENV] = "strict"
