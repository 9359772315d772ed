"""dpgp_audit.datasets"""
