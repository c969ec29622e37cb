"""!
scenario: toy_shop
"""

# Named unlike a pytest module on purpose: these functions are task specs, not tests of this project.


def test_cancel_pending():
    """!
    query: Please cancel my order O1, I ordered it by mistake.
    user_context:
      order_id: O1
      reason: ordered by mistake
    init:
      shop:
        data_patch:
          orders:
            O1: {status: pending}
        labels: [cancel]
        golden_test_case:
          tool_interactions:
            - name: get_order
              arguments: {order_id: O1}
            - name: cancel_order
              arguments: {order_id: O1, reason: ordered by mistake}
        rubrics_yesno:
          - Does the response confirm that order O1 was cancelled?
    """
    raise AssertionError("task files are data: this body must never run")


def test_lookup_shipped():
    """!
    query: Where is my order O2?
    user_context: My order is O2.
    init:
      shop:
        golden_test_case:
          tool_interactions:
            - name: get_order
              arguments: {order_id: O2}
    """
    raise AssertionError("task files are data: this body must never run")


def helper_without_spec():
    """A plain docstring: not a task."""
