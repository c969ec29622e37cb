"""The Environments Hub package of thinkingbox-env's verifiers adapter: ``vf-eval thinkingbox-tasks``.

The environment itself lives in the thinkingbox-env package (a dependency of this one); this
module is the name the Hub and ``vf-eval`` load it by (the id ``thinkingbox-tasks`` read as the
module ``thinkingbox_tasks``).
"""

from thinkingbox_env.integrations.verifiers import load_environment

__all__ = ["load_environment"]
