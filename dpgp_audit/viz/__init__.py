"""dpgp_audit.viz"""
