"""``python -m thinkingbox_env.cli``, for environments where the console script is not on PATH."""

from .main import main

raise SystemExit(main())
