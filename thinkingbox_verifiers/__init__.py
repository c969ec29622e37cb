"""The verifiers 0.4 taskset id of thinkingbox-env: ``vf-eval thinkingbox-verifiers --env.taskset.domain retail ...``.

verifiers 0.4 loads a taskset (and the harness and env it ships) from the top-level module its
id names (``thinkingbox-verifiers`` read as ``thinkingbox_verifiers``), taking the classes this
module exports in ``__all__``; a dotted path such as ``thinkingbox_env.integrations.verifiers_v1``
is not an id it can import. The classes live in :mod:`thinkingbox_env.integrations.verifiers_v1`.
"""

from thinkingbox_env.integrations.verifiers_v1 import (
    ThinkingboxHarness,
    ThinkingboxTaskset,
    ThinkingboxVerifiersEnv,
    load_environment,
)

__all__ = ["ThinkingboxHarness", "ThinkingboxTaskset", "ThinkingboxVerifiersEnv", "load_environment"]
