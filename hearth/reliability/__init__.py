"""Failures that stay with their request: the stages a failure is counted under, with faults that
tests inject there (`faults`), and a resident service's health and kept-alive workers (`health`)."""
