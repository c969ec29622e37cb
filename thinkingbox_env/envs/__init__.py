"""The Gymnasium face: the environment, ``make`` and the Gymnasium ids, the spaces, the wrappers and the domain environment."""
