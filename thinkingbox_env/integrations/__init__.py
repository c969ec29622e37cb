"""Bridges to training libraries; each imports its library only when used."""
