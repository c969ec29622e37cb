"""verifiers integration: ``load_environment`` for Prime Intellect's verifiers, whichever API line is installed.

verifiers 0.1 (``pip install thinkingbox-env[verifiers]``) and verifiers 0.4
(``pip install thinkingbox-env[verifiers04]``) are two APIs that share no class: 0.1 has
``MultiTurnEnv``/``Rubric`` at the package root and ``vf-eval`` loads an environment by
module name (this one); 0.4's root holds only ``verifiers.v1`` (tasksets, harnesses, envs)
and its ``vf-eval`` loads a taskset by module name
(``thinkingbox_env.integrations.verifiers_v1``). This module is the stable name for both:
it re-exports :mod:`.verifiers_multiturn` on the 0.1 line and :mod:`.verifiers_v1` on 0.4,
so ``load_environment(domain=..., ...)`` takes the same arguments and selects the same
tasks either way and returns that line's environment.
"""

from __future__ import annotations

import verifiers as vf

if hasattr(vf, "MultiTurnEnv"):  # the 0.1 line
    from .verifiers_multiturn import STATE_KEY, ThinkingboxVerifiersEnv, load_environment, rubric

    __all__ = ["STATE_KEY", "ThinkingboxVerifiersEnv", "load_environment", "rubric"]
else:  # 0.4 and later: verifiers.v1 (the v1 module names what it needs and fails with the version it found)
    from .verifiers_v1 import load_environment

    __all__ = ["load_environment"]
