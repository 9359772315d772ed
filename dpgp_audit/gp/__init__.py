"""dpgp_audit.gp"""
