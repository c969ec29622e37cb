"""The domain author's tool kit: ``@tool``, list filters, the shared ticketing kit, data-integrity invariants, the knowledge base, scheduled faults and ``report_injection``."""
