"""Reading what the agent told the customer: by rule (:mod:`thinkingbox_env.reading.claims`) and, where rules cannot, by a model.

The model reader (:mod:`.model_reader`) turns sentences into the same typed claims the rule
reader builds, so one piece of verification code decides on either reading.
"""
